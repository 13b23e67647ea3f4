"""Hypothesis strategies for the metric property tests: small tables with ties, constant columns and extremes.

Every property test grades a submission through the registered grader (ids, pairing and validity
included) and compares the number with scikit-learn's on the same values. Rows of the submission come in
a random order, so the id pairing is exercised too. Values are drawn three ways, each equally often:
free (any value of the range, extremes included), from a pool of at most three values (ties), or one value
for the whole column (a constant column).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from grading.engine.errors import InvalidSubmission
from grading.engine.registry import get_grader

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOLERANCE = 1e-9

# Probabilities at and next to the edges of [0, 1], where clipping and ranking are most fragile.
EDGE_PROBABILITIES = (0.0, 1.0, 0.5, 5e-324, 1e-300, 2.2e-16, 1e-15, 1 - 2.0**-53, 1 - 1e-15)


def probabilities() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(EDGE_PROBABILITIES), st.floats(0.0, 1.0))


def finite_floats(magnitude: float = 1e300) -> st.SearchStrategy[float]:
    """Any finite float within +-magnitude, with the extremes and zero drawn often."""
    edges = st.sampled_from((0.0, -0.0, magnitude, -magnitude, 1e-300, -1e-300, 1.0))
    return st.one_of(edges, st.floats(-magnitude, magnitude, allow_nan=False, allow_infinity=False))


@st.composite
def columns(draw, size: int, elements: st.SearchStrategy) -> list:
    """``size`` values: free, tied (a pool of at most 3 values) or constant."""
    shape = draw(st.sampled_from(("free", "ties", "constant")))
    if shape == "constant":
        return [draw(elements)] * size
    if shape == "ties":
        pool = draw(st.lists(elements, min_size=1, max_size=3))
        return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    return draw(st.lists(elements, min_size=size, max_size=size))


@st.composite
def binary_labels(draw, size: int, classes: tuple = (0, 1)) -> list:
    """``size`` labels holding both classes at least once (ROC AUC and log loss need both)."""
    labels = draw(st.lists(st.sampled_from(classes), min_size=size, max_size=size))
    first, second = draw(st.lists(st.integers(0, size - 1), min_size=2, max_size=2, unique=True))
    labels[first], labels[second] = classes[0], classes[1]
    return labels


def ids(size: int) -> list[str]:
    return [f"row{i:04d}" for i in range(size)]


def table(columns_: dict, order: list[int] | None = None) -> pd.DataFrame:
    """A frame of the columns, its rows in ``order`` (a permutation) when given."""
    frame = pd.DataFrame(columns_)
    if order is not None:
        frame = frame.iloc[order].reset_index(drop=True)
    return frame


def grade(grader: str, submission: pd.DataFrame, answers: pd.DataFrame, **params) -> float:
    return get_grader(grader)(submission, answers, **params)


def assert_invalid(grader: str, submission: pd.DataFrame, answers: pd.DataFrame, *fragments: str, **params):
    with pytest.raises(InvalidSubmission) as caught:
        grade(grader, submission, answers, **params)
    message = str(caught.value).lower()
    for fragment in fragments:
        assert fragment.lower() in message, f"{fragment!r} not in {message!r}"


def sklearn_quietly(metric, *args, **kwargs) -> float:
    """A scikit-learn metric with its warnings (undefined metric, unnormalised rows) silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(metric(*args, **kwargs))


def assert_close(ours: float, theirs: float) -> None:
    """Equal to 1e-9, absolute or relative; NaN equals NaN and an infinity itself."""
    assert ours == pytest.approx(theirs, rel=TOLERANCE, abs=TOLERANCE, nan_ok=True), (ours, theirs)
