"""Class-label family against scikit-learn: quadratic weighted kappa, accuracy, top-1 error, Matthews
correlation.

Each is scikit-learn 1.5 written out over label counts (``grading/engine/graders/kappa.py``,
``accuracy.py``, ``correlation/__init__.py``), with labels read the way ``type_of_target`` reads them
(``_labels.py``). Out-of-range labels widen kappa's scale as in the reference; a constant column on both
sides makes kappa 0/0 = NaN in both (a valid score that earns nothing) and the MCC 0. An empty cell or a
fractional label is refused, as scikit-learn refuses it.
"""

import math

from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, cohen_kappa_score, matthews_corrcoef

from tests.grading.engine.metric_inputs import (
    PROPERTY,
    assert_close,
    assert_invalid,
    columns,
    grade,
    ids,
    sklearn_quietly,
    table,
)

GRADES = st.one_of(st.integers(0, 4), st.sampled_from((7, -3, 10**9)))


@st.composite
def label_case(draw, elements=GRADES, min_size=1):
    size = draw(st.integers(min_size, 40))
    truth = draw(columns(size, elements))
    predicted = draw(columns(size, elements))
    return truth, predicted, draw(st.permutations(range(size)))


@PROPERTY
@given(label_case())
def test_quadratic_weighted_kappa_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"id_code": ids(len(truth)), "diagnosis": truth})
    submission = table({"id_code": ids(len(truth)), "diagnosis": predicted}, order)
    ours = grade("quadratic_weighted_kappa", submission, answers, id_column="id_code", target_column="diagnosis")
    assert_close(ours, sklearn_quietly(cohen_kappa_score, predicted, truth, weights="quadratic"))


@PROPERTY
@given(label_case(), st.data(), st.sampled_from((math.nan, 2.5, math.inf)))
def test_an_empty_or_fractional_grade_makes_the_kappa_file_invalid(case, data, bad):
    truth, predicted, _ = case
    cells = [float(v) for v in predicted]
    cells[data.draw(st.integers(0, len(cells) - 1))] = bad
    answers = table({"id_code": ids(len(truth)), "diagnosis": truth})
    submission = table({"id_code": ids(len(truth)), "diagnosis": cells})
    assert_invalid(
        "quadratic_weighted_kappa",
        submission,
        answers,
        "class label",
        id_column="id_code",
        target_column="diagnosis",
    )


TEXT_LABELS = st.sampled_from(("cat", "dog", "Cat", "dog ", "bird"))


@PROPERTY
@given(st.one_of(label_case(), label_case(elements=TEXT_LABELS)))
def test_accuracy_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"image_id": ids(len(truth)), "label": truth})
    submission = table({"image_id": ids(len(truth)), "label": predicted}, order)
    ours = grade("accuracy", submission, answers, id_column="image_id", target_column="label")
    assert_close(ours, accuracy_score(truth, predicted))


@PROPERTY
@given(label_case(elements=st.integers(0, 6)), st.lists(st.integers(0, 99), max_size=3))
def test_top1_error_is_one_minus_sklearn_accuracy_of_the_first_token(case, runners_up):
    truth, predicted, order = case
    cells = [" ".join(str(v) for v in [first, *runners_up]) for first in predicted]
    answers = table({"id": ids(len(truth)), "predicted": truth})
    submission = table({"id": ids(len(truth)), "predicted": cells}, order)
    ours = grade("top1_error", submission, answers, id_column="id", target_column="predicted")
    assert_close(ours, 1.0 - accuracy_score(truth, predicted))


@PROPERTY
@given(st.one_of(label_case(elements=st.integers(0, 1)), label_case(elements=GRADES)))
def test_matthews_correlation_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"contact_id": ids(len(truth)), "contact": truth})
    submission = table({"contact_id": ids(len(truth)), "contact": predicted}, order)
    ours = grade("matthews_corrcoef", submission, answers, id_column="contact_id", target_column="contact")
    assert_close(ours, sklearn_quietly(matthews_corrcoef, truth, predicted))


@PROPERTY
@given(label_case(elements=st.integers(0, 1)), st.data(), st.sampled_from((math.nan, 0.7)))
def test_an_empty_or_probability_prediction_makes_the_mcc_file_invalid(case, data, bad):
    truth, predicted, _ = case
    cells = [float(v) for v in predicted]
    cells[data.draw(st.integers(0, len(cells) - 1))] = bad
    answers = table({"contact_id": ids(len(truth)), "contact": truth})
    submission = table({"contact_id": ids(len(truth)), "contact": cells})
    assert_invalid("matthews_corrcoef", submission, answers, "contact", id_column="contact_id", target_column="contact")
