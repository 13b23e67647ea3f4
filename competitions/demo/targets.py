"""Target kinds: how a competition's truth columns are drawn and how a simulated agent predicts them.

The agent model is the same for every kind. Each row (or cell, for multi-label targets) gets a fixed
uniform draw ``u``; the agent "knows" the row when ``u < quality`` and then predicts the truth exactly,
otherwise it predicts noise (uniform probabilities, a random class from the prior, another row's value).
The draws do not depend on ``quality``, so for one seed the set of known rows only grows with quality:
scores move monotonically, quality 1 is a perfect submission and quality 0 is pure noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def _ensure_both_classes(rng: np.random.Generator, y: np.ndarray, *, at_least: int) -> np.ndarray:
    """Flip a few random rows so each class appears at least ``at_least`` times (AUC needs both)."""
    n = len(y)
    need = min(at_least, n // 2)
    for value in (1, 0):
        missing = need - int((y == value).sum())
        if missing > 0:
            candidates = np.flatnonzero(y != value)
            y[rng.choice(candidates, size=missing, replace=False)] = value
    return y


@dataclass(frozen=True)
class Binary:
    """A 0/1 truth column, predicted as a probability (ROC AUC, log loss)."""

    column: str
    prevalence: float
    sample_value: float = 0.5

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        y = (rng.random(n) < self.prevalence).astype(np.int64)
        return {self.column: _ensure_both_classes(rng, y, at_least=2)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known, noise = rng.random(n) < quality, rng.random(n)
        return {self.column: np.where(known, truth[self.column].to_numpy(dtype=float), noise)}


@dataclass(frozen=True)
class Labels:
    """A class-label truth column, predicted as a label (accuracy, quadratic weighted kappa)."""

    column: str
    classes: tuple
    probs: tuple[float, ...]
    sample_value: object = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        p = np.asarray(self.probs, dtype=float)
        return np.asarray(self.classes)[rng.choice(len(self.classes), size=n, p=p / p.sum())]

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        return {self.column: self._draw(rng, n)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known, noise = rng.random(n) < quality, self._draw(rng, n)
        return {self.column: np.where(known, truth[self.column].to_numpy(), noise)}


@dataclass(frozen=True)
class OneHot:
    """Mutually exclusive classes as one 0/1 column each, predicted as probabilities summing to 1."""

    classes: tuple[str, ...]
    probs: tuple[float, ...] | None = None
    sample_values: tuple[float, ...] | None = None  # default: uniform 1/K

    @property
    def columns(self) -> tuple[str, ...]:
        return self.classes

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        k = len(self.classes)
        p = np.full(k, 1.0 / k) if self.probs is None else np.asarray(self.probs) / np.sum(self.probs)
        labels = rng.choice(k, size=n, p=p)
        onehot = np.zeros((n, k), dtype=np.int64)
        onehot[np.arange(n), labels] = 1
        return {name: onehot[:, j] for j, name in enumerate(self.classes)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n, k = len(truth), len(self.classes)
        known = rng.random(n) < quality
        noise = rng.standard_exponential(size=(n, k))  # Dirichlet(1, ..., 1) once normalised
        noise /= noise.sum(axis=1, keepdims=True)
        exact = truth[list(self.classes)].to_numpy(dtype=float)
        probs = np.where(known[:, None], exact, noise)
        return {name: probs[:, j] for j, name in enumerate(self.classes)}

    @property
    def sample_value(self) -> dict[str, float]:
        values = self.sample_values or (1.0 / len(self.classes),) * len(self.classes)
        return dict(zip(self.classes, values))


@dataclass(frozen=True)
class MultiLabel:
    """Independent 0/1 columns, predicted as probabilities per column (mean column-wise AUC).

    ``unscored_fraction`` rows get -1 in every column, like Jigsaw's test_labels.csv. ``predicted`` names
    the columns a submission carries (RANZCR's answers have 11, its submissions 9).
    """

    labels: tuple[str, ...]
    prevalence: tuple[float, ...]
    unscored_fraction: float = 0.0
    predicted: tuple[str, ...] = field(default=())
    sample_value: float = 0.5

    @property
    def columns(self) -> tuple[str, ...]:
        return self.labels

    @property
    def predicted_columns(self) -> tuple[str, ...]:
        return self.predicted or self.labels

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        scored = rng.random(n) >= self.unscored_fraction
        scored_idx = np.flatnonzero(scored)
        out = {}
        for name, prevalence in zip(self.labels, self.prevalence):
            y = np.full(n, -1, dtype=np.int64)
            y[scored_idx] = _ensure_both_classes(
                rng, (rng.random(len(scored_idx)) < prevalence).astype(np.int64), at_least=2
            )
            out[name] = y
        return out

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n, cols = len(truth), list(self.predicted_columns)
        known = rng.random((n, len(cols))) < quality
        noise = rng.random((n, len(cols)))
        exact = truth[cols].to_numpy(dtype=float)
        probs = np.where(known & (exact >= 0), exact, noise)
        return {name: probs[:, j] for j, name in enumerate(cols)}


@dataclass(frozen=True)
class Regression:
    """A numeric truth column; noise is another row's truth, so predictions stay in the valid range."""

    column: str
    sampler: Sampler
    sample_value: float = 0.0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        return {self.column: self.sampler(rng, n)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y = truth[self.column].to_numpy()
        known, noise = rng.random(len(y)) < quality, y[rng.permutation(len(y))]
        return {self.column: np.where(known, y, noise)}


@dataclass(frozen=True)
class Text:
    """A text truth column compared by exact match; noise is another row's text."""

    column: str
    sample_value: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("text answers come from a competition hook")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y = truth[self.column].to_numpy(dtype=object)
        known, noise = rng.random(len(y)) < quality, y[rng.permutation(len(y))]
        return {self.column: np.where(known, y, noise)}


class Target(Protocol):
    """What a target kind provides. Kinds beyond the ones above live beside their group's specs.

    Optional: ``is_text = True`` when the predicted cells are text (NaN defects then blank them as text),
    ``out_of_range(values, rows) -> values`` to say what an out-of-range prediction is for the kind, and
    ``predicted_columns`` when a submission carries fewer columns than the answers.
    """

    @property
    def columns(self) -> tuple[str, ...]: ...

    @property
    def sample_value(self) -> object: ...

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]: ...

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]: ...


@runtime_checkable
class RenamesTruth(Protocol):
    """A target kind whose answers column (``truth_column``) is named otherwise than its submission's
    (``column``), as HuBMAP's 'encoding' against 'predicted'."""

    @property
    def column(self) -> str: ...

    @property
    def truth_column(self) -> str: ...


def predicted_columns(target: Target) -> tuple[str, ...]:
    return getattr(target, "predicted_columns", None) or target.columns
