"""Target kinds and answer builders of the text group (edit distance, word Jaccard, TF2-QA).

Every kind follows :mod:`competitions.demo.targets`: a row the agent knows (``u < quality``) is predicted
exactly, any other row gets a fixed corruption of its truth, drawn from per-row seeds that do not depend on
``quality`` (so scores move monotonically with it). Corruptions are the mistakes a model makes in each
competition: a missing or wrong word, a few wrong characters in an InChI, a misread gesture, a span a
little too short or too long, a wrong answer span.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from competitions.demo import fields

Corrupt = Callable[[str, random.Random], str]

# --- vocabularies ----------------------------------------------------------------------------------
_ENGLISH_TEXT = """
the of and to a in that is was he for it with as his on be at by had not are but from or have an they
which one you were her all she there would their we him been has when who will more no if out so said
what up its about into than them can only other new some could time these two may then do first any my
now such like our over man me even most made after also did many before must through back years where
much your way well down should because each just those people how too little state good very make world
still own see men work long get here between both life being under never day same another know while
last might us great old year off come since against go came right used take three council river church
season album railway county village station school music city market village football government report
café naïve résumé coöperate señor
"""
ENGLISH = tuple(_ENGLISH_TEXT.split())
ENGLISH_WEIGHTS = 1.0 / (np.arange(len(ENGLISH)) + 8.0)  # Zipf-like: common words first
_TWEET_TEXT = """
i love this so much happy today good morning great day thanks lol haha sad miss you hate work tired
sick boring ugh sorry bad night can`t wait fun awesome nice cool amazing best worst feel feeling really
just got home going to bed now new song watching movie with my friends omg yay wow :) :( !! ... ?
"""
TWEET_WORDS = tuple(_TWEET_TEXT.split())
_HINDI_TEXT = "भारत दिल्ली गंगा नदी राजा वर्ष सन् १९४७ महात्मा गांधी प्रधानमंत्री हिंदी भाषा मुंबई शहर"
_TAMIL_TEXT = "தமிழ் நாடு சென்னை ஆண்டு மன்னர் ராஜராஜ சோழன் கோயில் நதி காவிரி இந்தியா மொழி வரலாறு"
HINDI, TAMIL = tuple(_HINDI_TEXT.split()), tuple(_TAMIL_TEXT.split())


def _seeds(rng: np.random.Generator, n: int) -> list[int]:
    return rng.integers(0, 2**62, size=n).tolist()


def _words(rng: np.random.Generator, n: int, vocab: tuple[str, ...], weights: np.ndarray | None = None) -> np.ndarray:
    p = None if weights is None else np.asarray(weights) / np.sum(weights)
    return np.asarray(vocab, dtype=object)[rng.choice(len(vocab), size=n, p=p)]


def _join_runs(words: np.ndarray, lengths: np.ndarray) -> list[str]:
    listed, ends = words.tolist(), np.cumsum(lengths).tolist()
    return [" ".join(listed[end - length : end]) for end, length in zip(ends, lengths.tolist())]


# --- corruptions --------------------------------------------------------------------------------------
def drop_or_swap_word(text: str, draw: random.Random) -> str:
    """The imputation mistake: the missing word left out, or a wrong word put in its place."""
    words = text.split(" ")
    at = draw.randrange(len(words))
    if draw.random() < 0.5:
        del words[at]
    else:
        words[at] = draw.choice(ENGLISH[:40])
    return " ".join(words)


_INCHI_SYMBOLS = "0123456789()-,CHNOS"


def inchi_typos(text: str, draw: random.Random) -> str:
    """One to six character substitutions, insertions or deletions after the 'InChI=1S/' prefix."""
    chars = list(text)
    for _ in range(1 + int(draw.expovariate(0.6)) % 6):
        at = draw.randrange(9, max(len(chars), 10))
        op = draw.random()
        if op < 0.5 and at < len(chars):
            chars[at] = draw.choice(_INCHI_SYMBOLS)
        elif op < 0.75:
            chars.insert(at, draw.choice(_INCHI_SYMBOLS))
        elif at < len(chars):
            del chars[at]
    return "".join(chars)


def gesture_slips(text: str, draw: random.Random) -> str:
    """One to four gestures misread, missed or hallucinated."""
    gestures = text.split()
    for _ in range(draw.randint(1, 4)):
        at = draw.randrange(len(gestures) + 1)
        op = draw.random()
        if op < 0.5 and at < len(gestures):
            gestures[at] = str(draw.randint(1, 20))
        elif op < 0.75 or not gestures:
            gestures.insert(at, str(draw.randint(1, 20)))
        elif at < len(gestures):
            del gestures[at]
    return " ".join(gestures) if gestures else str(draw.randint(1, 20))


def span_slip(words_pool: tuple[str, ...]) -> Corrupt:
    """An answer span a few words too long or too short, or a different answer."""

    def corrupt(text: str, draw: random.Random) -> str:
        words = text.split()
        op = draw.random()
        if op < 0.35:
            words = [draw.choice(words_pool)] + words + [draw.choice(words_pool)]
        elif op < 0.7 and len(words) > 1:
            words = words[1:] if draw.random() < 0.5 else words[:-1]
        else:
            words = [draw.choice(words_pool) for _ in range(draw.randint(1, 4))]
        return " ".join(words)

    return corrupt


# --- target kinds -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CorruptedText:
    """A text column; a row the agent does not know gets ``corrupt(truth)``."""

    column: str
    corrupt: Corrupt
    sample_value: object = ""
    is_text = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("text answers come from a competition builder")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y = truth[self.column].to_numpy(dtype=object)
        known, seeds = rng.random(len(y)) < quality, _seeds(rng, len(y))
        out = y.copy()
        for row in np.flatnonzero(~known).tolist():
            out[row] = self.corrupt(str(y[row]), random.Random(seeds[row]))
        return {self.column: out}


@dataclass(frozen=True)
class GestureList(CorruptedText):
    """Whitespace-separated gesture numbers; out of range means words instead of numbers."""

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        values = values.astype(object)
        values[rows] = "wave point"
        return values


@dataclass(frozen=True)
class TweetSpan:
    """selected_text: known rows get the true span, others a different span of the same tweet."""

    column: str = "selected_text"
    sample_value: object = np.nan
    is_text = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("tweets come from the competition builder")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y, text = truth[self.column].to_numpy(dtype=object), truth["text"].to_numpy(dtype=object)
        known, seeds = rng.random(len(y)) < quality, _seeds(rng, len(y))
        out = y.copy()
        for row in np.flatnonzero(~known).tolist():
            draw, words = random.Random(seeds[row]), str(text[row]).split()
            start = draw.randrange(len(words))
            out[row] = " ".join(words[start : start + draw.randint(1, len(words))])
        return {self.column: out}


@dataclass(frozen=True)
class NqAnswers:
    """TF2-QA: the answers frame holds one Natural Questions record per row; a submission has two rows
    per record ('<id>_long', '<id>_short'). Unknown rows get a wrong candidate, a wrong span or no answer."""

    id_column: str = "example_id"
    column: str = "PredictionString"
    sample_value: object = np.nan
    is_text = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("records come from the competition builder")

    def gold_submission(self, answers: pd.DataFrame) -> pd.DataFrame:
        ids, values = [], []
        for example_id, notes in zip(answers["example_id"].tolist(), answers["annotations"].tolist()):
            note = notes[0]
            long_answer, shorts = note["long_answer"], note["short_answers"]
            ids += [f"{example_id}_long", f"{example_id}_short"]
            values.append(
                f"{long_answer['start_token']}:{long_answer['end_token']}"
                if long_answer["start_token"] != -1
                else np.nan
            )
            if note["yes_no_answer"] != "NONE":
                values.append(note["yes_no_answer"])
            elif shorts:
                values.append(f"{shorts[0]['start_token']}:{shorts[0]['end_token']}")
            else:
                values.append(np.nan)
        return pd.DataFrame({self.id_column: ids, self.column: np.array(values, dtype=object)})

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        gold = self.gold_submission(truth)
        n = len(gold)
        known, seeds = rng.random(n) < quality, _seeds(rng, n)
        values = gold[self.column].to_numpy(dtype=object).copy()
        candidates = truth["long_answer_candidates"].tolist()
        for row in np.flatnonzero(~known).tolist():
            draw, record = random.Random(seeds[row]), row // 2
            pick = draw.random()
            if pick < 0.3:
                values[row] = np.nan
            elif row % 2 == 0:
                candidate = draw.choice(candidates[record])
                values[row] = f"{candidate['start_token']}:{candidate['end_token']}"
            elif pick < 0.4:
                values[row] = draw.choice(("YES", "NO"))
            else:
                start = draw.randrange(0, 120)
                values[row] = f"{start}:{start + draw.randint(1, 4)}"
        return {self.id_column: gold[self.id_column].to_numpy(), self.column: values}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        values = values.astype(object)
        values[rows] = "MAYBE"
        return values


# --- builders -----------------------------------------------------------------------------------------
def billion_words(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """id, sentence; the sample submission is each sentence with one word removed (the public test)."""
    lengths = rng.poisson(21, size=n) + 3
    words = _words(rng, int(lengths.sum()), ENGLISH, ENGLISH_WEIGHTS)
    starts = np.cumsum(lengths) - lengths
    words[starts] = [w.capitalize() for w in words[starts].tolist()]
    sentences = [s + " ." for s in _join_runs(words, lengths)]
    removed = rng.integers(1, lengths)  # never the first word, as in the competition
    sample = [
        " ".join(parts[:at] + parts[at + 1 :]) for parts, at in zip((s.split(" ") for s in sentences), removed.tolist())
    ]
    ids = np.arange(n, dtype=np.int64)
    return (
        pd.DataFrame({"id": ids, "sentence": pd.array(sentences, dtype="str")}),
        pd.DataFrame({"id": ids, "sentence": pd.array(sample, dtype="str")}),
    )


def inchi_strings(rng: np.random.Generator, n: int) -> np.ndarray:
    """'InChI=1S/C13H20OS/c1-9(2)8-15-13-6-4-5-12(7-13)10(3)11-14/h4-7,9-10,14H,8,11H2,1-3H3'-like strings,
    assembled from a pool of formula, connection and hydrogen layers."""
    pool = 4096
    carbons = rng.integers(5, 40, size=pool)
    formulas = [
        f"C{c}H{h}" + (f"N{k}" if k else "") + (f"O{o}" if o else "") + ("S" if s else "")
        for c, h, k, o, s in zip(
            carbons.tolist(),
            (carbons * 2 + rng.integers(-8, 3, size=pool)).clip(1).tolist(),
            rng.integers(0, 4, size=pool).tolist(),
            rng.integers(0, 5, size=pool).tolist(),
            (rng.random(pool) < 0.1).tolist(),
        )
    ]
    layers = []
    for size in rng.integers(8, 45, size=pool).tolist():
        atoms = rng.integers(1, 40, size=size).tolist()
        marks = rng.random(size).tolist()
        parts = [str(atoms[0])]
        for atom, mark in zip(atoms[1:], marks[1:]):
            parts.append(f"({atom})" if mark < 0.15 else f"-{atom}" if mark < 0.9 else f",{atom}")
        layers.append("".join(parts))
    hydrogens = [f"{a}-{a + b}H,{c}H2" for a, b, c in rng.integers(1, 30, size=(pool, 3)).tolist()]
    f, c, h = (rng.integers(0, pool, size=n).tolist() for _ in range(3))
    return np.array([f"InChI=1S/{formulas[i]}/c{layers[j]}/h{hydrogens[k]}" for i, j, k in zip(f, c, h)], dtype=object)


def bms(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    ids = fields.hex_ids(12)(rng, n)
    return pd.DataFrame(
        {"image_id": pd.array(ids, dtype="str"), "InChI": pd.array(inchi_strings(rng, n), dtype="str")}
    ), None


def gestures(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Id, Sequence of 8-20 gestures (1-20); the sample submission is randomPredictions.csv."""

    def sequences(count: int) -> list[str]:
        lengths = rng.integers(8, 21, size=count).tolist()
        return [" ".join(map(str, (rng.permutation(20)[:k] + 1).tolist())) for k in lengths]

    ids = np.sort(fields.unique_ints(rng, n, low=1, high=max(1000, 2 * n)))
    return (
        pd.DataFrame({"Id": ids, "Sequence": pd.array(sequences(n), dtype="str")}),
        pd.DataFrame({"Id": ids, "Sequence": pd.array(sequences(n), dtype="str")}),
    )


def chaii(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    tamil = rng.random(n) < 0.33
    lengths = rng.integers(1, 5, size=n)
    hindi_words, tamil_words = _words(rng, int(lengths.sum()), HINDI), _words(rng, int(lengths.sum()), TAMIL)
    words = np.where(np.repeat(tamil, lengths), tamil_words, hindi_words)
    ids = fields.hex_ids(9)(rng, n)
    return pd.DataFrame(
        {
            "id": pd.array(ids, dtype="str"),
            "PredictionString": pd.array(_join_runs(words, lengths), dtype="str"),
        }
    ), None


def tweets(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """textID, text, selected_text (a span of text; usually all of it when neutral), sentiment."""
    lengths = rng.integers(3, 25, size=n)
    texts = _join_runs(_words(rng, int(lengths.sum()), TWEET_WORDS), lengths)
    sentiment = np.asarray(["neutral", "positive", "negative"], dtype=object)[
        rng.choice(3, size=n, p=[0.40, 0.31, 0.29])
    ]
    starts = (rng.random(n) * lengths * 0.6).astype(np.int64)
    spans = 1 + (rng.random(n) * (lengths - starts) * 0.5).astype(np.int64)
    selected = [
        text if mood == "neutral" else " ".join(text.split(" ")[s : s + k])
        for text, mood, s, k in zip(texts, sentiment.tolist(), starts.tolist(), spans.tolist())
    ]
    ids = fields.hex_ids(10)(rng, n)
    return (
        pd.DataFrame(
            {
                "textID": pd.array(ids, dtype="str"),
                "text": pd.array(texts, dtype="str"),
                "selected_text": pd.array(selected, dtype="str"),
                "sentiment": pd.array(sentiment, dtype="str"),
            }
        ),
        None,
    )


def nq_records(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simplified Natural Questions records (short documents), one per row, in the file's key order."""
    example_ids = fields.unique_ints(rng, n, low=-(2**62), high=2**62)
    doc_words = _words(rng, n * 60, ENGLISH, ENGLISH_WEIGHTS).reshape(n, 60).tolist()
    question_words = _words(rng, n * 8, ENGLISH, ENGLISH_WEIGHTS).reshape(n, 8).tolist()
    has_long = rng.random(n) < 0.5
    kind = rng.random(n)
    records = []
    for i in range(n):
        tokens = ["<P>", *doc_words[i][:28], "</P>", "<P>", *doc_words[i][28:], "</P>"]
        candidates = [
            {"start_token": 0, "top_level": True, "end_token": 30},
            {"start_token": 30, "top_level": True, "end_token": 62},
        ]
        chosen = int(kind[i] * 2) % 2
        long_answer = (
            {
                "start_token": candidates[chosen]["start_token"],
                "end_token": candidates[chosen]["end_token"],
                "candidate_index": chosen,
            }
            if has_long[i]
            else {"start_token": -1, "end_token": -1, "candidate_index": -1}
        )
        yes_no, shorts = "NONE", []
        if has_long[i] and kind[i] < 0.04:
            yes_no = "YES" if kind[i] < 0.025 else "NO"
        elif has_long[i] and kind[i] < 0.7:
            start = candidates[chosen]["start_token"] + 1 + int(kind[i] * 97) % 25
            shorts = [{"start_token": start, "end_token": start + 1 + int(kind[i] * 1000) % 3}]
        records.append(
            {
                "document_text": " ".join(tokens),
                "long_answer_candidates": candidates,
                "question_text": " ".join(question_words[i]).lower(),
                "annotations": [
                    {
                        "yes_no_answer": yes_no,
                        "long_answer": long_answer,
                        "short_answers": shorts,
                        "annotation_id": int(example_ids[i]) // 7 % 10**19,
                    }
                ],
                "document_url": f"https://en.wikipedia.org//w/index.php?title=Page_{i}",
                "example_id": int(example_ids[i]),
            }
        )
    answers = pd.DataFrame(records)
    ids = np.array([f"{e}_{part}" for e in answers["example_id"].tolist() for part in ("long", "short")], dtype=object)
    sample = pd.DataFrame({"example_id": pd.array(ids, dtype="str"), "PredictionString": np.full(len(ids), np.nan)})
    return answers, sample
