"""Log loss: dogs-vs-cats (binary), dog-breed, leaf and spooky (multi-class over one-hot answers)."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss

from grading.engine.graders.log_loss import EPS

from .frames import answers_for, csv_frame, grade, params, perfect_submission, reject, roundtrip

CATS = "dogs-vs-cats-redux-kernels-edition"
DOGS = "dog-breed-identification"
LEAF = "leaf-classification"
SPOOKY = "spooky-author-identification"
MULTI = [DOGS, LEAF, SPOOKY]


def _soft(competition, seed=0, sharpness=3.0):
    """Answers and a valid imperfect submission (rows sum to 1)."""
    answers = answers_for(competition)
    classes = params(competition)["class_columns"]
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(len(answers), len(classes))) + sharpness * answers[classes].to_numpy()
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    submission = pd.DataFrame(probabilities, columns=classes)
    submission.insert(0, "id", answers["id"].to_numpy())
    return answers, roundtrip(submission).copy(), classes


def test_eps_is_the_float64_machine_epsilon():
    assert EPS == np.finfo(np.float64).eps


@pytest.mark.parametrize("competition", MULTI)
def test_it_scores_an_imperfect_submission_like_log_loss(competition):
    answers, submission, classes = _soft(competition)
    expected = log_loss(answers[classes].to_numpy(), submission[classes].to_numpy())
    assert grade(competition, submission, answers) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("competition", MULTI)
def test_a_perfect_one_hot_submission_costs_only_the_clipping(competition):
    answers = answers_for(competition)
    assert grade(competition, perfect_submission(competition, answers), answers) == pytest.approx(-math.log1p(-EPS))


@pytest.mark.parametrize("competition", MULTI)
def test_a_confident_wrong_answer_costs_minus_log_of_float64_eps(competition):
    # Kaggle clipped at 1e-15 (34.54 per row); scikit-learn >= 1.5 clips at 2.22e-16 (36.04)
    answers = answers_for(competition)
    classes = params(competition)["class_columns"]
    wrong = perfect_submission(competition, answers)
    wrong[classes] = np.roll(wrong[classes].to_numpy(), 1, axis=1)  # every row certain of another class
    assert grade(competition, wrong, answers) == pytest.approx(-math.log(EPS), rel=1e-12)
    assert -math.log(EPS) == pytest.approx(36.0437, abs=1e-4)


@pytest.mark.parametrize("competition", MULTI)
def test_it_rejects_rows_that_do_not_sum_to_one_instead_of_renormalising(competition):
    answers, submission, classes = _soft(competition)
    doubled = submission.assign(**{c: submission[c] * 2 for c in classes})
    reject(competition, doubled, answers, "must sum to 1", "row 1", "sums to 2")


@pytest.mark.parametrize("competition", MULTI)
def test_the_row_sum_tolerance_is_atol_plus_rtol_of_numpy_isclose(competition):
    # np.isclose(sum, 1, atol=1e-6) also applies its default rtol=1e-5: |sum - 1| <= 1.1e-5 passes
    answers, submission, classes = _soft(competition)
    first = classes[0]
    inside = submission.copy()
    inside.loc[0, first] += 1.05e-5
    assert math.isfinite(grade(competition, inside, answers))
    outside = submission.copy()
    outside.loc[0, first] += 1.2e-5
    reject(competition, outside, answers, "must sum to 1", "within 1.1e-05", "row 1")


@pytest.mark.parametrize("competition", MULTI)
def test_it_rejects_probabilities_out_of_range_even_when_rows_sum_to_one(competition):
    answers, submission, classes = _soft(competition)
    submission.loc[1, classes] = 0.0
    submission.loc[1, classes[0]] = 1.25
    submission.loc[1, classes[1]] = -0.25
    reject(competition, submission, answers, "within [0, 1]", "row 2", "-0.25")


@pytest.mark.parametrize("competition", MULTI)
def test_it_rejects_missing_and_non_numeric_probabilities(competition):
    answers, submission, classes = _soft(competition)
    with_nan = submission.copy()
    with_nan.loc[0, classes[1]] = np.nan
    reject(competition, with_nan, answers, "missing", "row 1", classes[1])
    text = submission.astype({classes[2]: object})
    text.loc[3, classes[2]] = "0,2"
    reject(competition, roundtrip(text), answers, "non-numeric", "'0,2' in row 4", "decimal separator")


@pytest.mark.parametrize("competition", MULTI)
def test_it_rejects_missing_extra_and_duplicate_ids(competition):
    answers, submission, _ = _soft(competition)
    reject(competition, submission.iloc[:-1], answers, "rows")
    duplicated = submission.copy()
    duplicated.loc[0, "id"] = duplicated.loc[1, "id"]
    reject(competition, roundtrip(duplicated), answers, "1 test id is missing", "more often")
    unknown = submission.astype({"id": object})
    numeric = pd.api.types.is_numeric_dtype(answers["id"].dtype)
    unknown.loc[0, "id"] = 999 if numeric else "zzz"
    reject(competition, roundtrip(unknown), answers, "999 in row 1" if numeric else "'zzz' in row 1")


@pytest.mark.parametrize("competition", MULTI)
def test_it_rejects_a_missing_class_column(competition):
    answers, submission, classes = _soft(competition)
    reject(competition, submission.drop(columns=[classes[-1]]), answers, classes[-1])


def test_dog_breed_ignores_extra_columns_and_column_order():
    answers, submission, classes = _soft(DOGS)
    base = grade(DOGS, submission, answers)
    shuffled_columns = submission[["id", *classes[::-1]]].assign(model="v2")
    assert grade(DOGS, shuffled_columns, answers) == base
    assert grade(DOGS, submission.iloc[::-1].reset_index(drop=True), answers) == pytest.approx(base, rel=1e-15)


def test_leaf_requires_exactly_id_and_the_99_species():
    answers, submission, classes = _soft(LEAF)
    assert len(classes) == 99
    reject(LEAF, submission.assign(extra=0.0), answers, "remove the extra column extra")
    assert grade(LEAF, submission[["id", *classes[::-1]]], answers) == grade(LEAF, submission, answers)


def test_spooky_reads_the_probabilities_after_the_first_column():
    answers, submission, _ = _soft(SPOOKY)
    base = grade(SPOOKY, submission, answers)
    assert grade(SPOOKY, submission[["id", "MWS", "EAP", "HPL"]], answers) == base  # id first: fine
    reject(SPOOKY, submission[["EAP", "id", "HPL", "MWS"]], answers, "must be the first column")
    reject(SPOOKY, submission.assign(extra=1.0), answers, "5 columns instead of 4")
    reject(SPOOKY, submission.iloc[:-1], answers, "4 rows instead of 5")


def test_binary_log_loss_scores_probability_of_the_positive_label():
    answers = answers_for(CATS)
    submission = csv_frame("id,label\n1,0.9\n2,0.2\n3,0.4\n4,0.65\n5,1.0\n")
    expected = log_loss(answers["label"], submission["label"])
    assert grade(CATS, submission, answers) == pytest.approx(expected, rel=1e-12)
    by_hand = -np.mean(np.log([0.9, 0.8, 0.6, 0.65, 1 - EPS]))
    assert grade(CATS, submission, answers) == pytest.approx(by_hand, rel=1e-12)
    shuffled = submission.iloc[[4, 2, 0, 3, 1]].reset_index(drop=True)
    assert grade(CATS, shuffled, answers) == pytest.approx(expected, rel=1e-15)


def test_binary_log_loss_clips_hard_mistakes_at_float64_eps():
    answers = answers_for(CATS)
    wrong = answers[["id"]].assign(label=1 - answers["label"])
    assert grade(CATS, wrong, answers) == pytest.approx(-math.log(EPS), rel=1e-12)
    assert grade(CATS, answers[["id", "label"]], answers) == pytest.approx(-math.log1p(-EPS))


def test_binary_log_loss_rejects_bad_submissions():
    answers = answers_for(CATS)
    ok = "id,label\n1,0.9\n2,0.2\n3,0.4\n4,0.65\n5,1.0\n"
    reject(CATS, csv_frame(ok.replace("0.65", "1.65")), answers, "within [0, 1]", "row 4 (id 4) has 1.65")
    reject(CATS, csv_frame(ok.replace("0.65", "")), answers, "missing value", "row 4")
    reject(CATS, csv_frame(ok.replace("0.65", "dog")), answers, "non-numeric", "'dog' in row 4")
    reject(CATS, csv_frame(ok.replace("\n5,", "\n6,")), answers, "1 test id is missing (e.g. 5)", "6 in row 5")
    reject(CATS, csv_frame(ok.replace("\n5,", "\n4,")), answers, "more often")
    reject(CATS, csv_frame(ok + "5,0.5\n"), answers, "expected 5 rows", "got 6")
    reject(CATS, csv_frame(ok.replace("label", "is_dog")), answers, "missing label")


def test_binary_log_loss_accepts_ids_written_as_floats_and_boolean_labels():
    answers = answers_for(CATS)
    as_float = csv_frame("id,label\n1.0,0.9\n2.0,0.2\n3.0,0.4\n4.0,0.65\n5.0,1.0\n")
    plain = csv_frame("id,label\n1,0.9\n2,0.2\n3,0.4\n4,0.65\n5,1.0\n")
    assert grade(CATS, as_float, answers) == grade(CATS, plain, answers)
    booleans = csv_frame("id,label\n1,True\n2,False\n3,False\n4,True\n5,True\n")
    assert booleans["label"].dtype == bool
    assert grade(CATS, booleans, answers) == pytest.approx(-math.log1p(-EPS))
