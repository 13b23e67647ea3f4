"""Target kinds: how a competition's truth columns are drawn and how a simulated agent predicts them.

The agent model is the same for every kind. Each row (or cell, for multi-label targets) gets a fixed
uniform draw ``u``; the agent "knows" the row when ``u < quality`` and then predicts the truth, otherwise it
predicts noise (uniform probabilities, a random class from the prior, another row's value). The draws do not
depend on ``quality``, so for one seed the set of known rows only grows with quality and scores move
monotonically with it; quality 0 is pure noise.

An honest model is never exact on a continuous target, so ``predict`` gives the rows it knows at the truth
and a kind's ``honest(rng, predicted, truth)`` then adds the model's error: a probability of the true class
high but below 1 and varying from row to row, a one-hot row concentrated but never one-hot, a regression value
the truth plus an error. The error is a fixed draw per row and a monotone map of the prediction (the truth
moves less than the noise), so it keeps the order of known and noise rows. Labels, text, masks and boxes have
no ``honest``: an honest model outputs an exact label. Without ``honest``, quality 1 gives the answers in the
submission's format, which is what a team copying the answers writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

Sampler = Callable[[np.random.Generator, int], np.ndarray]
NOISE_TOWARDS_MEAN = 0.3  # a regression noise row: the column's mean plus 0.3 of another row's deviation


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


def error_share(rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
    """An honest model's error per row (or cell), in (0.002, 0.452): mostly a few per cent, now and then large,
    never 0. Mean about 0.07: a probability of the true class around 0.93 where the model knows the row."""
    share = rng.beta(1.2, 7.0, size=shape)
    share *= 0.45
    share += 0.002
    return share


def soften_probabilities(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """Independent probabilities pulled inwards by two per-cell errors: 1 becomes 1 - e1, 0 becomes e0, and a
    fraction between (Jigsaw's 0.5) moves off it too."""
    low, high = error_share(rng, probs.shape), error_share(rng, probs.shape)
    return low + (1.0 - low - high) * probs


def soften_rows(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """Rows summing to 1 mixed with a random spread (Dirichlet(1, ..., 1)) by a per-row error: still summing to
    1, concentrated on the predicted class but never one-hot."""
    share = error_share(rng, (len(probs), 1))
    spread = rng.standard_exponential(size=probs.shape)
    spread /= spread.sum(axis=1, keepdims=True)
    return (1.0 - share) * probs + share * spread


def reflect_into(values: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """Values mirrored back into [low, high] at the bounds (never clipped onto a bound, where the truth often
    is), then clipped for the rare error wider than the range."""
    if low is not None:
        values = np.where(values < low, 2 * low - values, values)
    if high is not None:
        values = np.where(values > high, 2 * high - values, values)
    if low is not None or high is not None:
        values = np.clip(values, low, high)
    return values


def regression_error(
    rng: np.random.Generator, values: np.ndarray, *, scale: float, groups: np.ndarray | None = None
) -> np.ndarray:
    """``values`` plus an honest model's error: ``scale`` times the column's standard deviation times a
    heavy-tailed draw, mirrored back into the column's own range (a model trained on the targets stays within
    them, and some graders refuse a value outside, as petfinder's [1, 100])."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    column = float(finite.std()) if len(finite) > 1 else 0.0
    column = column if column > 0 else max(float(np.abs(finite).mean()) if len(finite) else 1.0, 1.0)
    spread: float | np.ndarray = column
    if groups is not None:  # each group's own spread (a coupling type's), the column's where a group has none
        by_group = pd.Series(values).groupby(groups).transform("std").to_numpy()
        spread = np.where(np.isfinite(by_group) & (by_group > 0), by_group, column)
    error = rng.standard_normal(len(values))
    error *= 0.5 + rng.standard_exponential(len(values))
    low, high = (float(finite.min()), float(finite.max())) if len(finite) else (None, None)
    return reflect_into(values + scale * spread * error, low, high)


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

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        return {self.column: soften_probabilities(rng, predicted[self.column])}


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

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        probs = soften_rows(rng, np.column_stack([predicted[name] for name in self.classes]))
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

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        return {name: soften_probabilities(rng, predicted[name]) for name in self.predicted_columns}


@dataclass(frozen=True)
class Regression:
    """A numeric truth column; noise is another row's truth pulled towards the column's mean (a weak model's
    prediction leans towards the average), so predictions stay in the valid range and a weak model still
    beats predicting one constant only once it knows some rows.

    The honest model's error is ``error_scale`` of the column's standard deviation (see ``regression_error``).
    """

    column: str
    sampler: Sampler
    sample_value: float = 0.0
    error_scale: float = 0.08
    group_by: str | None = None  # an answers column whose groups have their own means (champs' coupling types)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        return {self.column: self.sampler(rng, n)}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        y = truth[self.column].to_numpy()
        known, perm = rng.random(len(y)) < quality, rng.permutation(len(y))
        noise = y[perm]
        if len(y) and np.issubdtype(y.dtype, np.number) and np.isfinite(y).any():
            if self.group_by is None:
                mean = np.full(len(y), float(np.nanmean(y)))
            else:
                mean = pd.Series(y, dtype=float).groupby(truth[self.group_by].to_numpy()).transform("mean").to_numpy()
            noise = mean + NOISE_TOWARDS_MEAN * (y[perm] - mean[perm])
        return {self.column: y if known.all() else np.where(known, y, noise)}  # all known: the answers' dtype

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        groups = truth[self.group_by].to_numpy() if self.group_by else None
        return {self.column: regression_error(rng, predicted[self.column], scale=self.error_scale, groups=groups)}


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

    Optional: ``honest(rng, predicted, truth) -> predicted`` adds an honest model's error to a continuous
    prediction (see the module's docstring), ``is_text = True`` when the predicted cells are text (NaN defects
    then blank them as text),
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
