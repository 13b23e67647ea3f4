"""Target kinds, id makers and builders for the probability-metric group (see ``specs/probabilities.py``).

- ``VoteShares`` (HMS): vote counts in the answers, probabilities summing to 1 in a submission;
- ``ToxicityScore`` (Jigsaw unintended bias): a fractional truth column, predicted in another column;
- builders for answers that are not "id + target": the melted cervical-spine rows, Jigsaw's 45-column
  expanded test file, HMS's 15-column label rows (several per ``eeg_id``) and LMSYS's train rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from competitions.demo import fields, vocab
from competitions.demo.targets import soften_probabilities, soften_rows

# --- target kinds --------------------------------------------------------------------------------


@dataclass(frozen=True)
class VoteShares:
    """Expert vote counts per class; a submission predicts each row's vote shares (summing to 1).

    The agent knows a row with probability ``quality`` and then predicts its shares, mixed by ``honest`` with
    a random spread; otherwise it predicts a Dirichlet(1, ..., 1) draw. The answers come from a builder (the
    vote columns are counts).
    """

    votes: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return self.votes

    @property
    def sample_value(self) -> dict[str, float]:
        return dict.fromkeys(self.votes, 1.0 / len(self.votes))

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("vote answers come from hms_build")

    def gold_submission(self, answers: pd.DataFrame) -> pd.DataFrame:
        """The gold file: each window's votes as shares of its raters (rows sum to 1)."""
        counts = answers[list(self.votes)].to_numpy(dtype=float)
        shares = counts / counts.sum(axis=1, keepdims=True)
        return pd.DataFrame({"eeg_id": answers["eeg_id"].to_numpy(), **dict(zip(self.votes, shares.T, strict=True))})

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n, k = len(truth), len(self.votes)
        known = rng.random(n) < quality
        noise = rng.standard_exponential(size=(n, k))
        noise /= noise.sum(axis=1, keepdims=True)
        counts = truth[list(self.votes)].to_numpy(dtype=float)
        shares = counts / counts.sum(axis=1, keepdims=True)
        probs = np.where(known[:, None], shares, noise)
        return {name: probs[:, j] for j, name in enumerate(self.votes)}

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        probs = soften_rows(rng, np.column_stack([predicted[name] for name in self.votes]))
        return {name: probs[:, j] for j, name in enumerate(self.votes)}


@dataclass(frozen=True)
class ToxicityScore:
    """A fraction-of-raters truth column (toxic when >= 0.5) predicted in column ``predicted``.

    A known row predicts the truth fraction itself, so it falls on the right side of 0.5; noise is uniform.
    """

    column: str
    predicted: str
    sample_value: float = 0.0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def predicted_columns(self) -> tuple[str, ...]:
        return (self.predicted,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("toxicity answers come from jigsaw_bias_build")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known, noise = rng.random(n) < quality, rng.random(n)
        return {self.predicted: np.where(known, truth[self.column].to_numpy(dtype=float), noise)}

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        return {self.predicted: soften_probabilities(rng, predicted[self.predicted])}


# --- id makers and row plans ---------------------------------------------------------------------


def alaska_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """'0001.jpg', '0002.jpg', ...: the test images numbered in order."""
    return np.char.add(np.char.zfill(np.arange(1, n + 1).astype(str), 4), ".jpg")


def whole_groups(size: int) -> Callable[[int], int]:
    """Round a row count up to whole groups of ``size`` rows (8 per study, 2 per patient)."""
    return lambda n: size * max(1, -(-n // size))


def breast_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """'{patient_id}_L', '{patient_id}_R' per patient, patients in random order."""
    patients = fields.unique_ints(rng, n // 2, low=10_000, high=65_535).astype(str)
    return np.char.add(np.repeat(patients, 2), np.tile(np.array(["_L", "_R"]), n // 2))


def _sentences(rng: np.random.Generator, n: int, *, low: int, high: int) -> list[str]:
    words = np.array(vocab.NEUTRAL_WORDS)
    lengths = rng.integers(low, high, size=n)
    picked = words[rng.integers(0, len(words), size=int(lengths.sum()))].tolist()
    ends = np.cumsum(lengths).tolist()
    out, start = [], 0
    for end in ends:
        out.append(" ".join(picked[start:end]).capitalize())
        start = end
    return out


# --- rsna-2022-cervical-spine-fracture-detection -------------------------------------------------

CERVICAL_TYPES = ("patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7")
_VERTEBRA_PREVALENCE = (0.15, 0.29, 0.08, 0.11, 0.17, 0.28, 0.40)  # among fractured patients


def cervical_build(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """answers.csv: train.csv melted to one row per (study, patient_overall | C1..C7), in melt order."""
    studies = n // 8
    numbers = fields.unique_ints(rng, studies, low=10_000, high=33_000)
    uids = np.char.add("1.2.826.0.1.3680043.", numbers.astype(str))
    fractured = rng.random(studies) < 0.48
    vertebrae = (rng.random((studies, 7)) < np.asarray(_VERTEBRA_PREVALENCE)) & fractured[:, None]
    none = fractured & ~vertebrae.any(axis=1)
    vertebrae[np.flatnonzero(none), rng.integers(0, 7, size=int(none.sum()))] = True
    wide = np.column_stack([fractured, vertebrae]).astype(np.int64)  # studies x 8
    if studies >= 4:  # both classes in every prediction type, even for tiny answers
        wide[0, :], wide[1, :] = 1, 0
    study = np.tile(uids, 8)
    kind = np.repeat(np.array(CERVICAL_TYPES), studies)
    frame = pd.DataFrame(
        {
            "StudyInstanceUID": study,
            "prediction_type": kind,
            "fractured": wide.T.ravel(),
            "row_id": np.char.add(np.char.add(study, "_"), kind),
        }
    )
    return frame, None


# --- hms-harmful-brain-activity-classification ---------------------------------------------------

HMS_VOTES = ("seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote")
_HMS_CLASSES = np.array(["Seizure", "LPD", "GPD", "LRDA", "GRDA", "Other"])
_HMS_PRIOR = np.array([0.19, 0.14, 0.16, 0.16, 0.18, 0.17])


def hms_build(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """train.csv rows: several labelled windows per eeg_id, consecutive, with the experts' vote counts."""
    sizes = rng.geometric(1 / 6.2, size=n)  # label rows per EEG, mean about 6
    ends = np.cumsum(sizes)
    eegs = int(np.searchsorted(ends, n)) + 1
    sizes = sizes[:eegs]
    sizes[-1] -= int(ends[eegs - 1]) - n
    eeg_of_row = np.repeat(np.arange(eegs), sizes)
    sub_id = np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)

    dominant = rng.choice(6, size=eegs, p=_HMS_PRIOR)
    total = np.where(rng.random(eegs) < 0.55, rng.integers(1, 4, size=eegs), rng.integers(10, 29, size=eegs))
    shares = rng.dirichlet(np.full(6, 0.4), size=eegs)
    shares[np.arange(eegs), dominant] += 1.5
    shares /= shares.sum(axis=1, keepdims=True)
    votes = np.stack([rng.multinomial(t, s) for t, s in zip(total.tolist(), shares)]).astype(np.int64)
    row_votes = votes[eeg_of_row]
    changed = rng.random(n) < 0.1  # a few windows of an EEG were voted differently
    if changed.any():
        row_votes[changed] = np.stack(
            [rng.multinomial(t, s) for t, s in zip(total[eeg_of_row[changed]].tolist(), shares[eeg_of_row[changed]])]
        )
    eeg_ids = np.sort(fields.unique_ints(rng, eegs, low=500_000, high=4_294_967_295))
    spectrograms = fields.unique_ints(rng, eegs, low=300_000, high=2_147_483_647)
    patients = fields.unique_ints(rng, max(1, eegs // 2), low=50, high=65_535)
    offsets = np.repeat(rng.integers(0, 400, size=eegs) * 2, sizes) + sub_id * 2
    frame = pd.DataFrame(
        {
            "eeg_id": eeg_ids[eeg_of_row],
            "eeg_sub_id": sub_id,
            "eeg_label_offset_seconds": (sub_id * 2).astype(np.float64),
            "spectrogram_id": spectrograms[eeg_of_row],
            "spectrogram_sub_id": sub_id,
            "spectrogram_label_offset_seconds": offsets.astype(np.float64),
            "label_id": fields.unique_ints(rng, n, low=338, high=4_294_967_295),
            "patient_id": patients[rng.integers(0, len(patients), size=eegs)][eeg_of_row],
            "expert_consensus": _HMS_CLASSES[np.argmax(row_votes, axis=1)],
        }
    )
    for j, name in enumerate(HMS_VOTES):
        frame[name] = row_votes[:, j]
    return frame, None


# --- jigsaw-unintended-bias-in-toxicity-classification -------------------------------------------

JIGSAW_SCORED = (
    "male",
    "female",
    "homosexual_gay_or_lesbian",
    "christian",
    "jewish",
    "muslim",
    "black",
    "white",
    "psychiatric_or_mental_illness",
)
JIGSAW_IDENTITIES = (
    "male",
    "female",
    "transgender",
    "other_gender",
    "heterosexual",
    "homosexual_gay_or_lesbian",
    "bisexual",
    "other_sexual_orientation",
    "christian",
    "jewish",
    "muslim",
    "hindu",
    "buddhist",
    "atheist",
    "other_religion",
    "black",
    "white",
    "asian",
    "latino",
    "other_race_or_ethnicity",
    "physical_disability",
    "intellectual_or_learning_disability",
    "psychiatric_or_mental_illness",
    "other_disability",
)
_JIGSAW_SUBTYPES = ("severe_toxicity", "obscene", "sexual_explicit", "identity_attack", "insult", "threat")
JIGSAW_COLUMNS = (
    "id",
    "comment_text",
    "created_date",
    "publication_id",
    "parent_id",
    "article_id",
    "rating",
    "funny",
    "wow",
    "sad",
    "likes",
    "disagree",
    "toxicity",
    *_JIGSAW_SUBTYPES,
    *JIGSAW_IDENTITIES,
    "identity_annotator_count",
    "toxicity_annotator_count",
)


def _fractions(rng: np.random.Generator, probability: np.ndarray, raters: np.ndarray) -> np.ndarray:
    return np.round(rng.binomial(raters, probability) / raters, 6)


def jigsaw_bias_build(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """test_private_expanded.csv (45 columns) and the sample submission ``id,prediction`` (0.0)."""
    ids = np.sort(fields.unique_ints(rng, n, low=7_000_000, high=7_200_000))
    annotated = rng.random(n) < 0.45  # rows whose identities were labelled (NaN elsewhere)
    id_raters = np.where(annotated, rng.choice([4, 5, 6, 10], size=n), 0)
    identity_cols: dict[str, np.ndarray] = {}
    in_scored_group = np.zeros(n, dtype=bool)
    for name in JIGSAW_IDENTITIES:
        share = 0.12 if name in JIGSAW_SCORED else 0.02
        mentioned = annotated & (rng.random(n) < share)
        probability = np.where(mentioned, rng.uniform(0.55, 1.0, n), rng.uniform(0.0, 0.08, n))
        values = _fractions(rng, probability, np.maximum(id_raters, 1))
        identity_cols[name] = np.where(annotated, values, np.nan)
        if name in JIGSAW_SCORED:
            in_scored_group |= values >= 0.5
    raters = rng.choice([4, 5, 6, 10, 60], size=n, p=[0.35, 0.1, 0.35, 0.15, 0.05])
    toxic_rate = np.where(in_scored_group, 0.22, 0.07)
    toxic = rng.random(n) < toxic_rate
    toxicity = _fractions(rng, np.where(toxic, rng.uniform(0.55, 0.95, n), rng.uniform(0.0, 0.3, n)), raters)
    seconds = rng.integers(0, 2 * 365 * 86_400, size=n)
    stamps = np.datetime_as_string(np.datetime64("2015-09-29T10:50:41") + seconds.astype("timedelta64[s]"))
    micros = np.char.zfill(rng.integers(0, 1_000_000, size=n).astype(str), 6)
    created = np.char.add(np.char.add(np.char.add(np.char.replace(stamps, "T", " "), "."), micros), "+00")
    columns: dict[str, np.ndarray] = {
        "id": ids,
        "comment_text": np.array(_sentences(rng, n, low=4, high=40), dtype=object),
        "created_date": created,
        "publication_id": fields.choice(rng, n, [21, 54, 55, 13, 102], [40, 20, 15, 15, 10]).astype(np.int64),
        "parent_id": np.where(rng.random(n) < 0.45, np.nan, rng.integers(100_000, 6_300_000, n).astype(float)),
        "article_id": rng.integers(2_000, 400_000, size=n),
        "rating": np.where(rng.random(n) < 0.93, "approved", "rejected"),
        "funny": rng.poisson(0.3, n),
        "wow": rng.poisson(0.05, n),
        "sad": rng.poisson(0.1, n),
        "likes": rng.poisson(2.5, n),
        "disagree": rng.poisson(0.6, n),
        "toxicity": toxicity,
    }
    for name in _JIGSAW_SUBTYPES:
        columns[name] = _fractions(rng, np.where(toxic, 0.3, 0.02) * rng.random(n), raters)
    columns.update(identity_cols)
    columns["identity_annotator_count"] = id_raters.astype(np.int64)
    columns["toxicity_annotator_count"] = raters.astype(np.int64)
    frame = pd.DataFrame({name: columns[name] for name in JIGSAW_COLUMNS})
    sample = pd.DataFrame({"id": frame["id"].to_numpy(), "prediction": np.zeros(n)})
    return frame, sample


# --- lmsys-chatbot-arena -------------------------------------------------------------------------

_LMSYS_MODELS = (
    "gpt-4-1106-preview",
    "gpt-4-0613",
    "gpt-4-0314",
    "gpt-3.5-turbo-0613",
    "gpt-3.5-turbo-0125",
    "claude-2.1",
    "claude-2.0",
    "claude-1",
    "claude-instant-1",
    "llama-2-70b-chat",
    "llama-2-13b-chat",
    "vicuna-33b",
    "vicuna-13b",
    "mixtral-8x7b-instruct-v0.1",
    "mistral-medium",
    "gemini-pro-dev-api",
    "koala-13b",
    "wizardlm-70b",
    "zephyr-7b-beta",
    "yi-34b-chat",
)


def _json_list(texts: list[str]) -> np.ndarray:
    return np.array(['["' + t + '"]' for t in texts], dtype=object)


def lmsys_extras(rng: np.random.Generator, columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """train.csv's model names, prompt and the two responses (JSON lists of strings)."""
    models = np.array(_LMSYS_MODELS)
    first = rng.integers(0, len(models), size=n)
    second = (first + rng.integers(1, len(models), size=n)) % len(models)
    prompts = [t + "?" for t in _sentences(rng, n, low=3, high=15)]
    return {
        "model_a": models[first],
        "model_b": models[second],
        "prompt": _json_list(prompts),
        "response_a": _json_list(_sentences(rng, n, low=5, high=40)),
        "response_b": _json_list(_sentences(rng, n, low=5, high=40)),
    }
