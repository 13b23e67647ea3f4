"""F-score family against scikit-learn: macro F1 over class ids, micro F1 over label sets, pF-beta.

``f1_macro`` and ``f1_micro_multilabel`` count instead of building scikit-learn's confusion matrices
(``grading/engine/graders/f1_macro.py``, ``ranking/multilabel_f1.py``) and must give ``f1_score``'s
number. Kaggle's probabilistic F-beta (``f_beta.py``) has no scikit-learn counterpart, but on hard 0/1
predictions it is the F-beta of those labels, so ``fbeta_score`` checks it there; its documented NaN rule
(an empty prediction makes Kaggle's sums NaN and the score 0) is checked as well.
"""

import math
import warnings

import numpy as np
import pandas as pd
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import f1_score, fbeta_score
from sklearn.preprocessing import MultiLabelBinarizer

from tests.grading.engine.metric_inputs import (
    PROPERTY,
    assert_close,
    assert_invalid,
    binary_labels,
    columns,
    grade,
    ids,
    probabilities,
    sklearn_quietly,
    table,
)

CLASS_IDS = st.one_of(st.integers(0, 6), st.sampled_from((-(2**62), 2**62, 10**12, -1)))


@st.composite
def class_id_case(draw):
    size = draw(st.integers(1, 40))
    truth = draw(columns(size, CLASS_IDS))
    predicted = draw(columns(size, CLASS_IDS))
    return truth, predicted, draw(st.permutations(range(size)))


@PROPERTY
@given(class_id_case())
def test_macro_f1_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"Id": ids(len(truth)), "Predicted": truth})
    submission = table({"Id": ids(len(truth)), "Predicted": predicted}, order)
    ours = grade("f1_macro", submission, answers, id_column="Id", target_column="Predicted")
    assert_close(ours, sklearn_quietly(f1_score, truth, predicted, average="macro"))


@PROPERTY
@given(class_id_case(), st.data())
def test_an_empty_class_id_makes_the_file_invalid(case, data):
    truth, predicted, _ = case
    cells = [float(v) for v in predicted]
    cells[data.draw(st.integers(0, len(cells) - 1))] = math.nan
    answers = table({"Id": ids(len(truth)), "Predicted": truth})
    submission = table({"Id": ids(len(truth)), "Predicted": cells})
    assert_invalid("f1_macro", submission, answers, "integer class id", id_column="Id", target_column="Predicted")


LABELS = ("a", "b", "c", "dog", "x1", "A")


@st.composite
def label_cell(draw) -> str | None:
    """A space-separated label set as a CSV cell: repeats, runs of spaces and empty cells included."""
    tokens = draw(st.lists(st.sampled_from(LABELS), max_size=4))
    if not tokens and draw(st.booleans()):
        return None  # an empty cell
    separator = draw(st.sampled_from((" ", "  ", " \t")))
    return separator.join(tokens)


@st.composite
def label_set_case(draw):
    size = draw(st.integers(1, 25))
    truth = draw(st.lists(label_cell(), min_size=size, max_size=size))
    predicted = draw(st.lists(label_cell(), min_size=size, max_size=size))
    return truth, predicted, draw(st.permutations(range(size)))


def label_sets(cells: list[str | None]) -> list[set[str]]:
    return [set((cell or "").split()) for cell in cells]


@PROPERTY
@given(label_set_case())
def test_micro_f1_over_label_sets_equals_sklearn(case):
    truth, predicted, order = case
    true_sets = label_sets(truth)
    # Under two distinct labels in the answers, the binarised matrix has one column, which scikit-learn
    # reads as a binary target and micro-averages over both classes: see the test below.
    assume(len(set().union(*true_sets)) >= 2)
    answers = table({"Id": ids(len(truth)), "Tags": pd.array(truth, dtype="str")})
    submission = table({"Id": ids(len(truth)), "Tags": pd.array(predicted, dtype="str")}, order)
    ours = grade("f1_micro_multilabel", submission, answers, id_column="Id", target_column="Tags")

    # MLE-bench: the binarizer is fitted on the answers, so predicted labels outside them are dropped.
    binarizer = MultiLabelBinarizer().fit(true_sets)
    expected = sklearn_quietly(
        f1_score,
        binarizer.transform(true_sets),
        sklearn_quietly_transform(binarizer, label_sets(predicted)),
        average="micro",
    )
    assert_close(ours, expected)


def sklearn_quietly_transform(binarizer: MultiLabelBinarizer, sets: list[set[str]]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "unknown class(es) will be ignored"
        return binarizer.transform(sets)


def test_with_a_single_label_in_the_answers_micro_f1_stays_the_label_f1_not_sklearn_accuracy():
    # Documented in ranking/multilabel_f1.py: one answers label gives scikit-learn a one-column matrix,
    # a "binary" target whose micro average counts the absent label too (here 6 of 7 rows agree).
    truth = [None, None, None, None, None, None, "a"]
    answers = table({"Id": ids(7), "Tags": pd.array(truth, dtype="str")})
    submission = table({"Id": ids(7), "Tags": pd.array([""] * 7, dtype="str")})
    assert grade("f1_micro_multilabel", submission, answers, id_column="Id", target_column="Tags") == 0.0
    binarizer = MultiLabelBinarizer().fit(label_sets(truth))
    sklearn_score = sklearn_quietly(
        f1_score, binarizer.transform(label_sets(truth)), binarizer.transform([set()] * 7), average="micro"
    )
    assert sklearn_score == 6 / 7


HARD_PREDICTIONS = st.sampled_from((0.0, 1.0, -1.0, 7.0, -1e300, 1e300, 1.0 - 1e-300))


@st.composite
def pfbeta_case(draw, predictions=HARD_PREDICTIONS):
    size = draw(st.integers(2, 40))
    truth = draw(binary_labels(size))
    predicted = draw(columns(size, predictions))
    beta = draw(st.sampled_from((0.5, 1.0, 2.0)))
    return truth, predicted, beta, draw(st.permutations(range(size)))


@PROPERTY
@given(pfbeta_case())
def test_pfbeta_on_hard_predictions_equals_sklearn_fbeta(case):
    truth, predicted, beta, order = case
    hard = np.clip(predicted, 0.0, 1.0)
    assume(hard.any())  # all 0: precision divides by zero, an invalid file (checked below)
    answers = table({"prediction_id": ids(len(truth)), "cancer": truth})
    submission = table({"prediction_id": ids(len(truth)), "cancer": predicted}, order)
    ours = grade(
        "probabilistic_f_beta",
        submission,
        answers,
        id_column="prediction_id",
        target_column="cancer",
        beta=beta,
    )
    # Kaggle clips, then sums the predictions; a prediction of 1 - 1e-300 is 1 in floating point.
    assert_close(ours, sklearn_quietly(fbeta_score, truth, (hard >= 0.5).astype(int), beta=beta))


@PROPERTY
@given(pfbeta_case(predictions=probabilities()), st.data())
def test_pfbeta_scores_an_empty_prediction_zero_and_all_zeros_invalid(case, data):
    truth, predicted, beta, _ = case
    answers = table({"prediction_id": ids(len(truth)), "cancer": truth})
    with_empty = list(predicted)
    with_empty[data.draw(st.integers(0, len(truth) - 1))] = math.nan
    submission = table({"prediction_id": ids(len(truth)), "cancer": with_empty})
    params = {"id_column": "prediction_id", "target_column": "cancer", "beta": beta}
    assert grade("probabilistic_f_beta", submission, answers, **params) == 0.0

    zeros = table({"prediction_id": ids(len(truth)), "cancer": [0.0] * len(truth)})
    assert_invalid("probabilistic_f_beta", zeros, answers, "divides by zero", **params)
