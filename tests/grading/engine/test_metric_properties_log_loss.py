"""Log loss family against scikit-learn: binary and multi-class.

Ours is scikit-learn 1.5's ``log_loss`` written out (``grading/engine/graders/log_loss.py``): probabilities
clipped to [eps, 1 - eps] with eps the float64 machine epsilon, rows never renormalised. Later scikit-learn
keeps that arithmetic, so the numbers agree to 1e-9 with certain 0s and 1s, ties and constant columns.
Where they part, ours is documented there: a row whose probabilities do not sum to 1 is refused (MLE-bench
checks the sums; scikit-learn only warns), and so is an empty cell (scikit-learn raises on NaN).
"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import log_loss

from tests.grading.engine.metric_inputs import (
    EDGE_PROBABILITIES,
    PROPERTY,
    assert_close,
    assert_invalid,
    binary_labels,
    columns,
    grade,
    ids,
    probabilities,
    table,
)


@st.composite
def binary_case(draw):
    size = draw(st.integers(2, 40))
    classes = draw(st.sampled_from(((0, 1), (1, 2))))
    labels = draw(binary_labels(size, classes))
    predicted = draw(columns(size, probabilities()))
    return labels, predicted, draw(st.permutations(range(size)))


@PROPERTY
@given(binary_case())
def test_binary_log_loss_equals_sklearn(case):
    labels, predicted, order = case
    answers = table({"id": ids(len(labels)), "label": labels})
    submission = table({"id": ids(len(labels)), "label": predicted}, order)
    ours = grade("log_loss_binary", submission, answers, id_column="id", target_column="label")
    assert_close(ours, log_loss(labels, y_proba=predicted))


def probability_row(width: int) -> st.SearchStrategy[list[float]]:
    """A row summing to 1 within float rounding: normalised weights, or a certain class (one 1, rest 0)."""
    weights = st.lists(
        st.one_of(st.sampled_from(EDGE_PROBABILITIES), st.floats(0.0, 1.0)), min_size=width, max_size=width
    ).filter(lambda w: sum(w) > 0)
    normalised = weights.map(lambda w: (np.asarray(w) / np.sum(w)).tolist())
    certain = st.integers(0, width - 1).map(lambda k: [1.0 if j == k else 0.0 for j in range(width)])
    return st.one_of(normalised, certain)


@st.composite
def multiclass_case(draw):
    size = draw(st.integers(1, 30))
    width = draw(st.integers(2, 6))
    truth = draw(columns(size, st.integers(0, width - 1)))
    shape = draw(st.sampled_from(("free", "constant")))
    if shape == "constant":
        rows = [draw(probability_row(width))] * size
    else:
        rows = draw(st.lists(probability_row(width), min_size=size, max_size=size))
    return truth, np.asarray(rows, dtype=np.float64), draw(st.permutations(range(size)))


@PROPERTY
@given(multiclass_case())
def test_multiclass_log_loss_equals_sklearn(case):
    truth, predicted, order = case
    classes = [f"class_{j}" for j in range(predicted.shape[1])]
    one_hot = np.eye(len(classes), dtype=int)[truth]
    answers = table({"id": ids(len(truth)), **{c: one_hot[:, j] for j, c in enumerate(classes)}})
    submission = table({"id": ids(len(truth)), **{c: predicted[:, j] for j, c in enumerate(classes)}}, order)
    ours = grade("log_loss_multiclass", submission, answers, id_column="id", class_columns=classes)
    assert_close(ours, log_loss(truth, y_proba=predicted, labels=list(range(len(classes)))))


@PROPERTY
@given(multiclass_case(), st.data(), st.sampled_from((math.nan, math.inf, -0.5)))
def test_a_nan_or_impossible_probability_makes_the_file_invalid(case, data, bad):
    truth, predicted, _ = case
    classes = [f"class_{j}" for j in range(predicted.shape[1])]
    one_hot = np.eye(len(classes), dtype=int)[truth]
    predicted[data.draw(st.integers(0, len(truth) - 1)), data.draw(st.integers(0, len(classes) - 1))] = bad
    answers = table({"id": ids(len(truth)), **{c: one_hot[:, j] for j, c in enumerate(classes)}})
    submission = table({"id": ids(len(truth)), **{c: predicted[:, j] for j, c in enumerate(classes)}})
    assert_invalid("log_loss_multiclass", submission, answers, "row", id_column="id", class_columns=classes)


@PROPERTY
@given(multiclass_case(), st.data(), st.floats(0.01, 10.0))
def test_rows_that_do_not_sum_to_one_are_invalid_where_sklearn_only_warns(case, data, factor):
    truth, predicted, _ = case
    classes = [f"class_{j}" for j in range(predicted.shape[1])]
    one_hot = np.eye(len(classes), dtype=int)[truth]
    row = data.draw(st.integers(0, len(truth) - 1))
    predicted[row] = np.clip(predicted[row] * factor, 0.0, 1.0)
    if abs(predicted[row].sum() - 1.0) <= 1e-6 + 1e-5:  # still within MLE-bench's tolerance: nothing to see
        return
    answers = table({"id": ids(len(truth)), **{c: one_hot[:, j] for j, c in enumerate(classes)}})
    submission = table({"id": ids(len(truth)), **{c: predicted[:, j] for j, c in enumerate(classes)}})
    assert_invalid("log_loss_multiclass", submission, answers, "sum to 1", id_column="id", class_columns=classes)
