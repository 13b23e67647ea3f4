"""ROC AUC family against scikit-learn: binary AUC, the mean of per-column AUCs, ALASKA2's weighted AUC.

Our AUC is scikit-learn 1.5's written out (``grading/engine/graders/roc_auc.py``); scikit-learn here is a
later version and must agree to 1e-9 on any scores, ties and constant columns included. One documented
deviation: answers holding a single class make the AUC undefined; newer scikit-learn returns NaN, MLE-bench
(on 1.5) raised, so the submission is invalid (roc_auc.py's docstring).
"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from tests.grading.engine.metric_inputs import (
    PROPERTY,
    assert_close,
    assert_invalid,
    binary_labels,
    columns,
    finite_floats,
    grade,
    ids,
    probabilities,
    sklearn_quietly,
    table,
)


@st.composite
def binary_case(draw, scores=probabilities()):
    size = draw(st.integers(2, 40))
    classes = draw(st.sampled_from(((0, 1), (1, 2), (-3, 7))))
    labels = draw(binary_labels(size, classes))
    predicted = draw(columns(size, scores))
    order = draw(st.permutations(range(size)))
    return labels, predicted, order


@PROPERTY
@given(binary_case())
def test_binary_roc_auc_equals_sklearn(case):
    labels, predicted, order = case
    answers = table({"id": ids(len(labels)), "target": labels})
    submission = table({"id": ids(len(labels)), "target": predicted}, order)
    ours = grade("roc_auc", submission, answers, id_column="id", target_column="target")
    assert_close(ours, roc_auc_score(labels, predicted))


@PROPERTY
@given(binary_case(scores=finite_floats()))
def test_weighted_roc_auc_with_one_band_equals_sklearn(case):
    # One TPR band of weight 1 is the plain area under the curve; scores may be any finite number.
    labels, predicted, order = case
    answers = table({"Id": ids(len(labels)), "Label": labels})
    submission = table({"Id": ids(len(labels)), "Label": predicted}, order)
    ours = grade(
        "weighted_roc_auc",
        submission,
        answers,
        id_column="Id",
        target_column="Label",
        tpr_levels=[0, 1],
        weights=[1],
    )
    assert_close(ours, roc_auc_score(labels, predicted))


@st.composite
def columnwise_case(draw):
    size = draw(st.integers(2, 30))
    width = draw(st.integers(1, 5))
    truth = np.column_stack([draw(binary_labels(size)) for _ in range(width)])
    scores = np.column_stack([draw(columns(size, probabilities())) for _ in range(width)])
    order = draw(st.permutations(range(size)))
    return truth, scores, order


@PROPERTY
@given(columnwise_case())
def test_mean_column_auc_equals_sklearn_macro_average(case):
    truth, scores, order = case
    targets = [f"label_{j}" for j in range(truth.shape[1])]
    answers = table({"id": ids(len(truth)), **{c: truth[:, j] for j, c in enumerate(targets)}})
    submission = table({"id": ids(len(truth)), **{c: scores[:, j] for j, c in enumerate(targets)}}, order)
    ours = grade("roc_auc_columnwise", submission, answers, id_column="id", target_columns=targets)
    assert_close(ours, roc_auc_score(truth, scores, average="macro"))


@PROPERTY
@given(st.integers(1, 20), st.sampled_from((0, 1)), st.data())
def test_single_class_answers_are_invalid_where_sklearn_returns_nan(size, label, data):
    predicted = data.draw(columns(size, probabilities()))
    answers = table({"id": ids(size), "target": [label] * size})
    submission = table({"id": ids(size), "target": predicted})
    assert math.isnan(sklearn_quietly(roc_auc_score, [label] * size, predicted))
    assert_invalid("roc_auc", submission, answers, "only one class", id_column="id", target_column="target")


@PROPERTY
@given(binary_case(), st.data(), st.sampled_from((math.nan, math.inf, -math.inf, 1.5, -1e-300)))
def test_a_nan_or_out_of_range_probability_makes_the_file_invalid(case, data, bad):
    labels, predicted, _ = case
    predicted[data.draw(st.integers(0, len(predicted) - 1))] = bad
    answers = table({"id": ids(len(labels)), "target": labels})
    submission = table({"id": ids(len(labels)), "target": predicted})
    assert_invalid("roc_auc", submission, answers, "target", id_column="id", target_column="target")
