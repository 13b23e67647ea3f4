"""Target kinds and hooks for the ranking group: label lists (MAP@k, micro F1) and multi-hot scores (lwlrap).

Labels come from fixed catalogues (article ids, hotel ids, whale ids, Stack Overflow tags, iMet attributes,
plant diseases) built once from a fixed seed, so answers and agents draw from the same vocabulary whatever
their own random streams. Lists are drawn as an (n, max) matrix of codes, de-duplicated within each row and
joined with pyarrow: a full-size frame costs seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from competitions.demo import fields
from competitions.demo.specs._ranking_vocab import (
    FREESOUND_CLASSES,
    QUESTION_WORDS,
    SO_HEAD,
    SO_PREFIX,
    SO_SUFFIX,
)
from competitions.demo.targets import soften_probabilities


@dataclass(frozen=True)
class Catalogue:
    tokens: np.ndarray  # str
    weights: np.ndarray  # sums to 1
    extra: dict[str, np.ndarray] | None = None  # per-token attributes (a hotel's chain)


def _zipf(rng: np.random.Generator, n: int, exponent: float, offset: float = 10.0) -> np.ndarray:
    weights = 1.0 / (np.arange(n) + offset) ** exponent
    return rng.permutation(weights / weights.sum())


@cache
def hm_articles() -> Catalogue:
    """105,542 H&M article ids as MLE-bench's answers write them: integers, no leading zero."""
    rng = np.random.default_rng(20220207)
    ids = np.sort(fields.unique_ints(rng, 105_542, low=108_775_015, high=959_461_002))
    return Catalogue(ids.astype(str), _zipf(rng, len(ids), 1.1))


@cache
def hotels() -> Catalogue:
    """7,770 hotel ids (integers) with the chain each belongs to (0 = no chain)."""
    rng = np.random.default_rng(2021_8)
    ids = np.sort(fields.unique_ints(rng, 7_770, low=0, high=200_000))
    weights = rng.lognormal(0.0, 0.8, size=len(ids))
    chain = np.where(rng.random(len(ids)) < 0.35, 0, rng.integers(1, 88, size=len(ids)))
    return Catalogue(ids.astype(str), weights / weights.sum(), {"chain": chain.astype(np.int64)})


@cache
def whales() -> Catalogue:
    """'new_whale' (about 12% of test images) and 4,250 known whales 'w_' + 7 hex digits."""
    rng = np.random.default_rng(2018_1)
    known = np.char.add("w_", fields.hex_ids(7)(rng, 4_250))
    weights = np.concatenate([[0.12], np.full(len(known), 0.88 / len(known))])
    return Catalogue(np.concatenate([["new_whale"], known]), weights)


@cache
def stackoverflow_tags() -> Catalogue:
    """About 12,000 tags: the real most frequent ones, then invented 'prefix-suffix' tags, Zipf weights."""
    tail = [f"{a}-{b}" for a in SO_PREFIX for b in SO_SUFFIX]
    tokens = np.array(list(dict.fromkeys([*SO_HEAD, *tail])))
    weights = 1.0 / (np.arange(len(tokens)) + 5.0) ** 1.05  # head first: 'c#' is the most frequent
    return Catalogue(tokens, weights / weights.sum())


@cache
def imet_attributes() -> Catalogue:
    """iMet 2020's 3,474 attribute ids '0'..'3473' (cultures, media, tags), Zipf weights."""
    rng = np.random.default_rng(2020_7)
    return Catalogue(np.arange(3_474).astype(str), _zipf(rng, 3_474, 1.0))


PLANT_LABEL_SETS = (
    ("scab", 4826),
    ("healthy", 4624),
    ("frog_eye_leaf_spot", 3181),
    ("rust", 1860),
    ("complex", 1602),
    ("powdery_mildew", 1184),
    ("scab frog_eye_leaf_spot", 686),
    ("scab frog_eye_leaf_spot complex", 200),
    ("frog_eye_leaf_spot complex", 165),
    ("rust frog_eye_leaf_spot", 120),
    ("rust complex", 97),
    ("powdery_mildew complex", 87),
)


@cache
def plant_label_sets() -> Catalogue:
    """The 12 label sets of Plant Pathology 2021's train.csv, with their frequencies there."""
    counts = np.array([c for _, c in PLANT_LABEL_SETS], dtype=float)
    return Catalogue(np.array([s for s, _ in PLANT_LABEL_SETS]), counts / counts.sum())


# ---------------------------------------------------------------------------------------------------
# Drawing lists


def distinct_lists(
    rng: np.random.Generator, n: int, counts: tuple[float, ...], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """n lists of distinct codes (length 1..len(counts), drawn by ``counts``): flat codes and offsets."""
    width = len(counts)
    p = np.asarray(counts, dtype=float)
    lengths = rng.choice(np.arange(1, width + 1), size=n, p=p / p.sum())
    draws = rng.choice(len(weights), size=(n, width), p=weights).astype(np.int64)
    used = np.arange(width)[None, :] < lengths[:, None]
    draws = np.where(used, draws, -1 - np.arange(width)[None, :])  # unused slots never look like a repeat
    order = np.argsort(draws, axis=1, kind="stable")
    ordered = np.take_along_axis(draws, order, axis=1)
    repeat_sorted = np.zeros_like(used)
    repeat_sorted[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    repeat = np.zeros_like(used)
    np.put_along_axis(repeat, order, repeat_sorted, axis=1)
    keep = used & ~repeat
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=offsets[1:])
    return draws[keep], offsets


def joined(tokens: np.ndarray, codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each list's tokens joined by single spaces, as an object array of str."""
    values = pa.array(tokens, type=pa.large_string()).take(pa.array(codes))
    lists = pa.LargeListArray.from_arrays(pa.array(offsets, type=pa.int64()), values)
    return np.asarray(
        pc.binary_join(lists, pa.scalar(" ", pa.large_string())).to_numpy(zero_copy_only=False), dtype=object
    )


def _geometric(p: float, longest: int) -> tuple[float, ...]:
    weights = (1 - p) ** np.arange(longest) * p
    return tuple(float(w) for w in weights / weights.sum())


# ---------------------------------------------------------------------------------------------------
# Target kinds


@dataclass(frozen=True)
class LabelList:
    """A column of space-separated labels from a catalogue (one label per row when ``counts`` is (1,)).

    The agent predicts a row's labels exactly when it knows the row; otherwise ``noise_length`` labels
    drawn from the catalogue (a ranked list for MAP@k), or, when None, a list as long as a true one.
    ``integer``: the answers column holds one integer per row (hotel_id), read back as int64.
    """

    column: str
    catalogue: Callable[[], Catalogue]
    counts: tuple[float, ...]
    sample_value: object
    noise_length: int | None = None
    integer: bool = False
    is_text: ClassVar[bool] = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        catalogue = self.catalogue()
        codes, offsets = distinct_lists(rng, n, self.counts, catalogue.weights)
        if self.integer:
            return {self.column: catalogue.tokens[codes].astype(np.int64)}
        return {self.column: joined(catalogue.tokens, codes, offsets)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known = rng.random(n) < quality
        catalogue = self.catalogue()
        if self.noise_length is None:
            counts = self.counts
        else:
            counts = (0.0,) * (self.noise_length - 1) + (1.0,)
        noise = joined(catalogue.tokens, *distinct_lists(rng, n, counts, catalogue.weights))
        exact = truth[self.column].astype(str).to_numpy(dtype=object)
        return {self.column: np.where(known, exact, noise)}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Labels that exist nowhere in the catalogue: they simply never match."""
        values = np.asarray(values, dtype=object).copy()
        values[rows] = "not_a_label"
        return values


@dataclass(frozen=True)
class MultiHot:
    """One 0/1 column per class, one to a few classes per row; predicted as one score per class."""

    classes: tuple[str, ...]
    counts: tuple[float, ...] = (0.82, 0.14, 0.03, 0.01)
    sample_value: float = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return self.classes

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        weights = _zipf(rng, len(self.classes), 0.6, offset=3.0)
        codes, offsets = distinct_lists(rng, n, self.counts, weights)
        matrix = np.zeros((n, len(self.classes)), dtype=np.int64)
        matrix[np.repeat(np.arange(n), np.diff(offsets)), codes] = 1
        return {name: matrix[:, j] for j, name in enumerate(self.classes)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known = rng.random(n) < quality
        noise = rng.random((n, len(self.classes)))
        exact = truth[list(self.classes)].to_numpy(dtype=float)
        scores = np.where(known[:, None], exact, noise)
        return {name: scores[:, j] for j, name in enumerate(self.classes)}

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        return {name: soften_probabilities(rng, predicted[name]) for name in self.classes}


HM_PURCHASES = LabelList(
    "prediction",
    hm_articles,
    _geometric(0.32, 40),
    sample_value="0706016001 0706016002 0372860001 0610776002 0759871002 0464297007 0372860002 "
    "0610776001 0399223001 0706016003 0720125001 0156231001",
    noise_length=12,
)
HOTEL_ID = LabelList(
    "hotel_id", hotels, (1.0,), sample_value="36363 53586 18807 64314 60181", noise_length=5, integer=True
)
WHALE_ID = LabelList(
    "Id",
    whales,
    (1.0,),
    sample_value="new_whale w_23a388d w_9b5109b w_9c506f6 w_0369a5c",
    noise_length=5,
)
SO_TAGS = LabelList(
    "Tags", stackoverflow_tags, (0.13, 0.26, 0.28, 0.19, 0.14), sample_value="javascript c# python php java"
)
IMET_ATTRIBUTES = LabelList("attribute_ids", imet_attributes, _geometric(0.22, 12), sample_value="0 1 2")
PLANT_LABELS = LabelList("labels", plant_label_sets, (1.0,), sample_value="healthy")
FREESOUND_LABELS = MultiHot(FREESOUND_CLASSES)


# ---------------------------------------------------------------------------------------------------
# Builders and extras


def hm_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Answers: purchasing customers only. The sample submission lists them and as many other customers
    (the real one lists all 1,371,980), in random order, with the zero-padded popular articles."""
    customers = fields.hex_ids(64)(rng, 2 * n)
    answers = pd.DataFrame({"customer_id": customers[:n], **HM_PURCHASES.generate(rng, n)})
    sample = pd.DataFrame({"customer_id": customers[rng.permutation(2 * n)], "prediction": HM_PURCHASES.sample_value})
    return answers, sample


def hotel_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """train.csv rows: image, chain, hotel_id, timestamp."""
    images = fields.hex_ids(16, suffix=".jpg")(rng, n)
    hotel_id = HOTEL_ID.generate(rng, n)["hotel_id"]
    catalogue = hotels()
    assert catalogue.extra is not None  # hotels() carries each hotel's chain
    chain = catalogue.extra["chain"][np.searchsorted(catalogue.tokens.astype(np.int64), hotel_id)]
    seconds = rng.integers(0, 4 * 365 * 86_400, size=n)
    stamps = np.datetime_as_string(np.datetime64("2016-01-01T00:00:00") + seconds.astype("timedelta64[s]"))
    frame = pd.DataFrame(
        {
            "image": images,
            "chain": chain,
            "hotel_id": hotel_id,
            "timestamp": np.char.replace(stamps, "T", " "),
        }
    )
    return frame, None


def facebook_extras(rng: np.random.Generator, columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Title and Body of each question: short invented sentences, the body as HTML with code and commas."""
    pool = 4_096
    words = np.array(QUESTION_WORDS)
    titles = [
        " ".join(words[rng.integers(0, len(words), size=rng.integers(4, 11))]).capitalize() + "?" for _ in range(pool)
    ]
    bodies = []
    for i in range(pool):
        text = " ".join(words[rng.integers(0, len(words), size=rng.integers(5, 14))])
        code = f'var x = foo("{words[i % len(words)]}");' if i % 3 == 0 else "x = [1, 2, 3]"
        bodies.append(f"<p>{text.capitalize()}, thanks.</p>\n\n<pre><code>{code}\n</code></pre>\n")
    pick = rng.integers(0, pool, size=(2, n))
    return {
        "Title": np.asarray(titles, dtype=object)[pick[0]],
        "Body": np.asarray(bodies, dtype=object)[pick[1]],
    }
