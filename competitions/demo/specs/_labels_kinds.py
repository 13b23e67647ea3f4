"""Target kinds, id makers and hooks for the class-label competitions (accuracy, macro F1, kappa).

- :class:`LongTailLabels`: integer class ids over thousands of classes (herbarium, cdiscount, iNaturalist,
  iWildCam 2020), every class present, a few common and most rare; the number of classes shrinks with the
  row count so that a small pack still has several rows per class.
- :class:`TextLabels`: a text label column (speech commands), so NaN defects blank cells as text.
- id makers for camera-trap UUIDs, cassava image names and speech clip names; the essay-text hook of the
  automated essay scoring answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from competitions.demo import fields
from competitions.demo.targets import Labels

ClassIds = Callable[[int], np.ndarray]


@dataclass(frozen=True)
class LongTailLabels:
    """Integer class ids with a long-tailed distribution; noise is another row's class (the prior).

    At ``full_rows`` rows there are ``classes`` classes, each present at least once (MLE-bench's
    per-category splits keep one test image even for the rarest class); fewer rows get proportionally
    fewer classes, but never fewer than ``min_classes``. ``class_ids(k)`` gives the ids of ``k`` classes.
    """

    column: str
    class_ids: ClassIds
    classes: int
    full_rows: int
    spread: float = 1.0  # sigma of the log-normal class weights: larger is a longer tail
    min_classes: int = 20
    sample_value: object = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def n_classes(self, n: int) -> int:
        scaled = round(n * self.classes / self.full_rows)
        return max(1, min(n, self.classes, max(scaled, self.min_classes)))

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        k = self.n_classes(n)
        weights = rng.lognormal(0.0, self.spread, size=k)
        counts = 1 + rng.multinomial(n - k, weights / weights.sum())
        labels = np.repeat(self.class_ids(k), counts)
        return {self.column: labels[rng.permutation(n)]}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y = truth[self.column].to_numpy()
        n = len(y)
        known, other = rng.random(n) < quality, rng.integers(0, max(n, 1), size=n)
        return {self.column: np.where(known, y, y[other]) if n else y}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """A class id no class has."""
        values = values.copy()
        values[rows] = -1
        return values


@dataclass(frozen=True)
class TextLabels(Labels):
    """Class labels written as words; an out-of-range prediction is a word that is not a class."""

    is_text = True

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        predicted = super().predict(rng, truth, quality)[self.column]
        return {self.column: np.asarray(predicted, dtype=object)}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=object).copy()
        values[rows] = "not_a_label"
        return values


def sequential_class_ids(k: int) -> np.ndarray:
    """0, 1, ..., k-1 (herbarium category ids, iNaturalist classes)."""
    return np.arange(k, dtype=np.int64)


def spaced_class_ids(*, low: int, high: int, total: int, seed: int) -> ClassIds:
    """The first k of ``total`` fixed distinct ids from [low, high): cdiscount's 10-digit categories."""
    pool = np.random.default_rng(seed).permutation(np.arange(low, high, dtype=np.int64))[:total]

    def ids(k: int) -> np.ndarray:
        return np.sort(pool[:k])

    return ids


# --- id makers -------------------------------------------------------------------------------
def camera_trap_uuids(year_marker: str) -> fields.IdMaker:
    """'8b31d3c0-21bc-11ea-a13a-137349068a90': time-based UUIDs of one year (marker '11e9' or '11ea')."""

    def make(rng: np.random.Generator, n: int) -> np.ndarray:
        hexes = fields.hex_ids(28)(rng, n).tolist()
        return np.array([f"{h[:8]}-{h[8:12]}-{year_marker}-{h[12:16]}-{h[16:]}" for h in hexes], dtype=object)

    return make


def cassava_images(rng: np.random.Generator, n: int) -> np.ndarray:
    """'1000015157.jpg': the image's random integer name."""
    numbers = fields.unique_ints(rng, n, low=1_000_000, high=4_300_000_000)
    return np.char.add(numbers.astype(str), ".jpg").astype(object)


def speech_clips(rng: np.random.Generator, n: int) -> np.ndarray:
    """'clip_0a7c2a8d1.wav', the test clip names of the Kaggle competition."""
    return np.char.add(np.char.add("clip_", fields.hex_ids(9)(rng, n)), ".wav").astype(object)


# --- learning-agency-lab-automated-essay-scoring-2: essay text beside the score ---------------
_ESSAY_TEXT = (
    "the students should be allowed to use phones in school because technology helps them learn and "
    "communicate with their teachers however some people think that cars are dangerous for the "
    "environment and that driverless cars will change how we live in cities many experts believe the "
    "Facial Action Coding System can read emotions on Venus scientists explore the planet with a "
    "rover which is important for our future in conclusion I believe this is a good idea for everyone"
)
_ESSAY_WORDS = _ESSAY_TEXT.split()
_QUOTES = ('"Facial Action Coding System"', '"Seagoing Cowboys"', '"The Challenge of Exploring Venus"')


def essay_text(rng: np.random.Generator, columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """``full_text``: paragraphs of sentences with commas and quoted titles; better scores run longer."""
    score = np.asarray(columns["score"], dtype=float)
    words = np.asarray(_ESSAY_WORDS, dtype=object)
    lengths = np.maximum(60, rng.normal(120 + 70 * score, 60)).astype(int)
    texts = []
    for length in lengths.tolist():
        picked = words[rng.integers(0, len(words), size=length)]
        sentence_ends = np.cumsum(rng.integers(8, 22, size=length // 8 + 2))
        paragraphs, start = [], 0
        sentences = []
        for end in sentence_ends.tolist():
            if start >= length:
                break
            chunk = picked[start:end].tolist()
            if len(chunk) > 6 and rng.random() < 0.4:
                chunk[len(chunk) // 2] += ","
            if rng.random() < 0.05:
                chunk.append(str(rng.choice(_QUOTES)))
            sentences.append(" ".join(chunk).capitalize() + ".")
            start = end
            if rng.random() < 0.2:
                paragraphs.append(" ".join(sentences))
                sentences = []
        if sentences:
            paragraphs.append(" ".join(sentences))
        texts.append("\n\n".join(paragraphs))
    return {"full_text": np.asarray(texts, dtype=object)}
