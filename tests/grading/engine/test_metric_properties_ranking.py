"""Ranking family: lwlrap against scikit-learn, MAP@k against the ``ml_metrics`` definition MLE-bench uses.

``lwlrap`` is scikit-learn's ``label_ranking_average_precision_score`` with each row weighted by its number
of true labels (``grading/engine/graders/ranking/map_at_k.py``), computed in blocks without Python loops;
ties between scores count against a label in both. scikit-learn has no MAP@k, so the reference here is
``ml_metrics.apk`` as MLE-bench calls it (true labels as a set, predictions split on single spaces and cut
at k, a repeated prediction no second hit), written out below.
"""

import numpy as np
import pandas as pd
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import label_ranking_average_precision_score

from tests.grading.engine.metric_inputs import (
    PROPERTY,
    assert_close,
    assert_invalid,
    columns,
    finite_floats,
    grade,
    ids,
    table,
)


@st.composite
def lwlrap_case(draw):
    size = draw(st.integers(1, 20))
    width = draw(st.integers(2, 6))
    truth = np.column_stack([draw(columns(size, st.booleans())) for _ in range(width)])
    assume(truth.any())  # no true label anywhere: every weight is 0 and lwlrap is undefined
    scores = np.column_stack([draw(columns(size, finite_floats())) for _ in range(width)])
    return truth, scores, draw(st.permutations(range(size)))


@PROPERTY
@given(lwlrap_case())
def test_lwlrap_equals_sklearn_lrap_weighted_by_true_labels(case):
    truth, scores, order = case
    classes = [f"class_{j}" for j in range(truth.shape[1])]
    answers = table({"fname": ids(len(truth)), **{c: truth[:, j].astype(int) for j, c in enumerate(classes)}})
    submission = table({"fname": ids(len(truth)), **{c: scores[:, j] for j, c in enumerate(classes)}}, order)
    ours = grade("lwlrap", submission, answers, id_column="fname", class_columns=classes)
    expected = label_ranking_average_precision_score(truth, scores, sample_weight=truth.sum(axis=1))
    assert_close(ours, expected)


@PROPERTY
@given(lwlrap_case(), st.data(), st.sampled_from((float("nan"), float("inf"))))
def test_an_empty_or_infinite_lwlrap_score_makes_the_file_invalid(case, data, bad):
    truth, scores, _ = case
    classes = [f"class_{j}" for j in range(truth.shape[1])]
    scores[data.draw(st.integers(0, len(truth) - 1)), data.draw(st.integers(0, len(classes) - 1))] = bad
    answers = table({"fname": ids(len(truth)), **{c: truth[:, j].astype(int) for j, c in enumerate(classes)}})
    submission = table({"fname": ids(len(truth)), **{c: scores[:, j] for j, c in enumerate(classes)}})
    assert_invalid("lwlrap", submission, answers, "class_", id_column="fname", class_columns=classes)


def apk(actual: set[str], predicted: list[str], k: int) -> float:
    """ml_metrics' average precision at k."""
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    if not actual:
        return 0.0
    return score / min(len(actual), k)


ITEMS = ("0108775015", "108775015", "a", "b", "c", "d", "e")


@st.composite
def map_case(draw):
    size = draw(st.integers(1, 25))
    k = draw(st.sampled_from((1, 3, 5, 12)))
    truth = [" ".join(draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=4))) for _ in range(size)]
    predicted = []
    for _ in range(size):
        tokens = draw(st.lists(st.sampled_from(ITEMS), max_size=k + 3))
        cell = draw(st.sampled_from((" ", "  "))).join(tokens)
        predicted.append(None if not cell and draw(st.booleans()) else cell)  # an empty cell, or ''
    return truth, predicted, k, draw(st.permutations(range(size)))


@PROPERTY
@given(map_case())
def test_map_at_k_equals_the_ml_metrics_reference(case):
    truth, predicted, k, order = case
    answers = table({"image": ids(len(truth)), "hotel_id": pd.array(truth, dtype="str")})
    submission = table({"image": ids(len(truth)), "hotel_id": pd.array(predicted, dtype="str")}, order)
    ours = grade("map_at_k", submission, answers, id_column="image", target_column="hotel_id", k=k)
    # An empty cell scores 0: MLE-bench's astype(str) makes it 'nan', which is no true item.
    expected = np.mean([apk(set(t.split(" ")), (p or "").split(" "), k) for t, p in zip(truth, predicted, strict=True)])
    assert_close(ours, float(expected))
