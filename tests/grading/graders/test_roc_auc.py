"""Binary ROC AUC (8 Lite competitions): MLE-bench's prepare_for_auroc_metric + roc_auc_score."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from grading.engine.errors import InvalidSubmission
from grading.engine.graders.roc_auc import binary_roc_auc

from .frames import answers_for, csv_frame, grade, params, perfect_submission, reject, roundtrip

BINARY_AUC = [
    "aerial-cactus-identification",
    "detecting-insults-in-social-commentary",
    "histopathologic-cancer-detection",
    "mlsp-2013-birds",
    "random-acts-of-pizza",
    "siim-isic-melanoma-classification",
    "tabular-playground-series-may-2022",
    "the-icml-2013-whale-challenge-right-whale-redux",
]


def _imperfect(competition):
    answers = answers_for(competition)
    target = params(competition)["target_column"]
    submission = perfect_submission(competition, answers)
    rng = np.random.default_rng(len(competition))
    submission[target] = np.round(rng.random(len(submission)), 3)
    return answers, submission, target


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_scores_a_perfect_submission_one(competition):
    answers = answers_for(competition)
    assert grade(competition, perfect_submission(competition, answers), answers) == 1.0


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_scores_an_imperfect_submission_like_roc_auc_score(competition):
    answers, submission, target = _imperfect(competition)
    expected = roc_auc_score(answers[target], submission[target])  # same row order: ids line up
    assert grade(competition, submission, answers) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("competition", [c for c in BINARY_AUC if not c.startswith("detecting-insults")])
def test_it_matches_rows_by_id_whatever_their_order(competition):
    # (detecting-insults repeats ids, so there the order of equal ids matters: see the test below)
    answers, submission, _ = _imperfect(competition)
    shuffled = submission.iloc[::-1].reset_index(drop=True)
    assert grade(competition, shuffled, answers) == grade(competition, submission, answers)


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_ignores_extra_columns(competition):
    answers, submission, _ = _imperfect(competition)
    extra = submission.assign(note="anything", score2=3.5)
    assert grade(competition, extra, answers) == grade(competition, submission, answers)


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_rejects_probabilities_out_of_range(competition):
    answers, submission, target = _imperfect(competition)
    submission.loc[1, target] = 1.7
    reject(competition, submission, answers, "within [0, 1]", "row 2", "1.7")
    submission.loc[1, target] = -0.01
    reject(competition, submission, answers, "within [0, 1]", "-0.01")


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_rejects_missing_extra_and_duplicate_ids(competition):
    answers, submission, _ = _imperfect(competition)
    id_column = params(competition)["id_column"]
    reject(competition, submission.iloc[1:], answers, "expected", "rows", "1 fewer")
    reject(competition, pd.concat([submission, submission.iloc[[0]]]), answers, "1 more")
    duplicated = submission.copy()
    duplicated.loc[1, id_column] = duplicated.loc[2, id_column]
    reject(competition, roundtrip(duplicated), answers, "do not match", "1 test id is missing", "more often")


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_rejects_an_id_that_is_not_in_the_test_set(competition):
    answers, submission, _ = _imperfect(competition)
    id_column = params(competition)["id_column"]
    unknown = submission.astype({id_column: object})
    numeric = pd.api.types.is_numeric_dtype(answers[id_column].dtype)
    unknown.loc[0, id_column] = 987654321 if numeric else "no-such-id"
    shown = "987654321 in row 1" if numeric else "'no-such-id' in row 1"
    reject(competition, roundtrip(unknown), answers, "not in the test set", shown, "1 test id is missing")


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_rejects_missing_columns(competition):
    answers, submission, target = _imperfect(competition)
    id_column = params(competition)["id_column"]
    reject(competition, submission.drop(columns=[target]), answers, "expected columns", f"missing {target}")
    reject(competition, submission.drop(columns=[id_column]), answers, f"missing {id_column}")
    renamed = submission.rename(columns={target: target.upper() if target != target.upper() else target.lower()})
    reject(competition, renamed, answers, "case- and space-sensitive")


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_rejects_nan_inf_and_non_numeric_values(competition):
    answers, submission, target = _imperfect(competition)
    with_nan = submission.copy()
    with_nan.loc[2, target] = np.nan
    reject(competition, with_nan, answers, "missing value", "row 3")
    with_inf = submission.copy()
    with_inf.loc[2, target] = np.inf
    reject(competition, with_inf, answers, "within [0, 1]", "inf")
    text = roundtrip(submission.astype({target: object}).assign(**{target: ["abc"] + list(submission[target][1:])}))
    reject(competition, text, answers, "non-numeric", "'abc' in row 1")


@pytest.mark.parametrize("competition", BINARY_AUC)
def test_it_accepts_booleans_and_hard_labels_as_scores(competition):
    answers, submission, target = _imperfect(competition)
    as_bool = roundtrip(submission.assign(**{target: submission[target] > 0.5}))
    assert as_bool[target].dtype == bool
    expected = roc_auc_score(answers[target], (submission[target] > 0.5).astype(float))
    assert grade(competition, as_bool, answers) == pytest.approx(expected, abs=1e-12)


def test_it_pairs_repeated_comment_ids_by_sorted_position():
    # detecting-insults uses the comment text as the id, and '"shut up"' occurs twice in the answers with
    # labels 1 then 0. Rows with equal ids are paired in the order the reference's sort leaves them (for
    # short arrays NumPy's quicksort keeps their file order), so which prediction meets which label
    # depends on the submission's row order.
    competition = "detecting-insults-in-social-commentary"
    answers = answers_for(competition)
    submission = perfect_submission(competition, answers)
    submission["Insult"] = [0.8, 0.2, 0.9, 0.3, 0.1, 0.4]  # '"shut up"': 0.9 on the first, 0.1 on the second

    def by_sorted_position(frame):
        order_a = np.argsort(answers["Comment"].to_numpy(dtype=object), kind="quicksort")
        order_s = np.argsort(frame["Comment"].to_numpy(dtype=object), kind="quicksort")
        return roc_auc_score(answers["Insult"].to_numpy()[order_a], frame["Insult"].to_numpy()[order_s])

    assert grade(competition, roundtrip(submission), answers) == pytest.approx(by_sorted_position(submission))
    assert grade(competition, roundtrip(submission), answers) == 1.0
    reordered = submission.iloc[[0, 1, 4, 3, 2, 5]].reset_index(drop=True)  # the two '"shut up"' rows swapped
    assert grade(competition, roundtrip(reordered), answers) == pytest.approx(by_sorted_position(reordered))
    assert grade(competition, roundtrip(reordered), answers) < 1.0


def test_it_reports_single_class_answers_as_undefined():
    # scikit-learn 1.5 raises (the reference marks the submission invalid); newer versions return NaN
    answers = csv_frame("id,has_cactus\na.jpg,1\nb.jpg,1\n")
    submission = csv_frame("id,has_cactus\na.jpg,0.3\nb.jpg,0.6\n")
    reject("aerial-cactus-identification", submission, answers, "undefined", "only one class")


def test_it_accepts_numeric_ids_written_as_floats():
    # the reference compares ids with ==, so 6100.0 matches the answers' 6100
    competition = "mlsp-2013-birds"
    answers, submission, _ = _imperfect(competition)
    as_float = roundtrip(submission.assign(Id=submission["Id"].astype(float)))
    assert as_float["Id"].dtype == np.float64
    assert grade(competition, as_float, answers) == grade(competition, submission, answers)
    text_ids = roundtrip(submission.assign(Id=["r" + str(v) for v in submission["Id"]]))
    reject(competition, text_ids, answers, "ids are text", "test ids are numbers")


def test_the_auc_follows_scikit_learn_on_ties_and_large_inputs():
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 1000, 50_000):
        truth = rng.integers(0, 2, n)
        truth[:2] = [0, 1]
        scores = np.round(rng.random(n), int(rng.integers(1, 4)))  # many ties
        assert binary_roc_auc(truth == 1, scores) == roc_auc_score(truth, scores)


def test_it_rejects_an_empty_submission():
    competition = "random-acts-of-pizza"
    answers = answers_for(competition)
    with pytest.raises(InvalidSubmission, match="expected columns"):
        grade(competition, pd.DataFrame(), answers)
    reject(competition, csv_frame("request_id,requester_received_pizza\n"), answers, "got 0")
