"""Mean column-wise ROC AUC: ranzcr (9 of 11 labels), plant-pathology (exact columns), jigsaw (quirks)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from .frames import answers_for, grade, params, perfect_submission, reject, roundtrip

RANZCR = "ranzcr-clip-catheter-line-classification"
PLANT = "plant-pathology-2020-fgvc7"
JIGSAW = "jigsaw-toxic-comment-classification-challenge"


def _noisy(competition, seed=0):
    answers = answers_for(competition)
    submission = perfect_submission(competition, answers)
    targets = params(competition)["target_columns"]
    rng = np.random.default_rng(seed)
    submission[targets] = np.round(rng.random((len(submission), len(targets))), 2)
    return answers, submission, targets


def _mean_auc(answers, submission, targets, keep=None):
    keep = np.ones(len(answers), dtype=bool) if keep is None else keep
    return np.mean([roc_auc_score(answers[t][keep], submission[t][keep]) for t in targets])


@pytest.mark.parametrize("competition", [RANZCR, PLANT, JIGSAW])
def test_it_scores_a_perfect_submission_one(competition):
    answers = answers_for(competition)
    assert grade(competition, perfect_submission(competition, answers), answers) == 1.0


@pytest.mark.parametrize("competition", [RANZCR, PLANT])
def test_it_averages_roc_auc_over_the_label_columns(competition):
    answers, submission, targets = _noisy(competition)
    assert grade(competition, submission, answers) == pytest.approx(_mean_auc(answers, submission, targets), abs=1e-12)
    shuffled = submission.iloc[::-1].reset_index(drop=True)
    assert grade(competition, shuffled, answers) == grade(competition, submission, answers)


def test_ranzcr_scores_nine_of_the_eleven_labels():
    answers, submission, targets = _noisy(RANZCR)
    assert len(targets) == 9 and "CVC - Normal" not in targets and "Swan Ganz Catheter Present" not in targets
    base = grade(RANZCR, submission, answers)
    with_unscored = submission.assign(**{"CVC - Normal": 0.5, "Swan Ganz Catheter Present": "anything"})
    assert grade(RANZCR, roundtrip(with_unscored), answers) == base  # the two Kaggle labels are ignored


def test_ranzcr_rejects_a_missing_label_and_out_of_range_probabilities():
    answers, submission, _ = _noisy(RANZCR)
    reject(RANZCR, submission.drop(columns=["NGT - Normal"]), answers, "missing NGT - Normal")
    submission.loc[2, "ETT - Normal"] = 1.2
    reject(RANZCR, submission, answers, "'ETT - Normal'", "within [0, 1]", "row 3", "1.2")
    submission.loc[2, "ETT - Normal"] = np.nan
    reject(RANZCR, submission, answers, "missing value", "row 3")


def test_ranzcr_rejects_wrong_ids_and_row_counts():
    answers, submission, _ = _noisy(RANZCR)
    reject(RANZCR, submission.iloc[:-1], answers, "expected 6 rows", "got 5")
    duplicated = submission.copy()
    duplicated.loc[0, "StudyInstanceUID"] = duplicated.loc[1, "StudyInstanceUID"]
    reject(RANZCR, duplicated, answers, "1 test id is missing", "more often than in the test set")


def test_plant_requires_exactly_the_five_columns():
    answers, submission, _ = _noisy(PLANT)
    reject(PLANT, submission.assign(extra=1), answers, "remove the extra column extra")
    reject(PLANT, submission.drop(columns=["scab"]), answers, "missing scab")
    reordered = submission[["scab", "rust", "image_id", "healthy", "multiple_diseases"]]
    assert grade(PLANT, reordered, answers) == grade(PLANT, submission, answers)  # matched by name


def test_plant_accepts_any_finite_scores_and_numeric_text_like_the_reference():
    # no range check: AUC only uses the order of the scores; text is read with Python's float()
    answers, submission, targets = _noisy(PLANT)
    scaled = submission.assign(**{t: submission[t] * 40 - 7 for t in targets})
    assert grade(PLANT, scaled, answers) == pytest.approx(grade(PLANT, submission, answers))
    text = submission.astype({"rust": object})
    text.loc[0, "rust"] = "1_0"  # pandas keeps the column as text; Python's float() reads 10.0
    text = roundtrip(text)
    assert not pd.api.types.is_numeric_dtype(text["rust"].dtype)
    submission.loc[0, "rust"] = 10.0
    assert grade(PLANT, text, answers) == grade(PLANT, submission, answers)
    text.loc[1, "rust"] = "high"
    reject(PLANT, text, answers, "'rust'", "not a number", "'high' in row 2")
    submission.loc[0, "scab"] = np.inf
    reject(PLANT, submission, answers, "infinite", "row 1")


def test_jigsaw_drops_the_unscored_rows():
    answers, submission, targets = _noisy(JIGSAW)
    keep = (answers[targets].sum(axis=1) >= 0).to_numpy()
    expected = roc_auc_score(answers[targets][keep], submission[targets][keep], average="macro")
    assert grade(JIGSAW, submission, answers) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(_mean_auc(answers, submission, targets, keep))


def test_jigsaw_accepts_nan_and_text_in_unscored_rows():
    # the reference drops unscored rows before scikit-learn ever sees the values
    answers, submission, targets = _noisy(JIGSAW)
    unscored = int(np.flatnonzero((answers[targets].sum(axis=1) < 0).to_numpy())[0])
    base = grade(JIGSAW, submission, answers)
    with_nan = submission.copy()
    with_nan.loc[unscored, "threat"] = np.nan
    assert grade(JIGSAW, with_nan, answers) == base
    with_text = submission.astype({"threat": object})
    with_text.loc[unscored, "threat"] = "n/a?"
    assert grade(JIGSAW, roundtrip(with_text), answers) == base
    with_nan.loc[0, "threat"] = np.nan  # a scored row
    reject(JIGSAW, with_nan, answers, "'threat'", "missing value", "row 1")


def test_jigsaw_scores_columns_by_position_not_by_name():
    # MLE-bench pairs the submission's non-id columns, in the submission's order, with the answers'
    # label columns in the answers' order: reordered columns are scored against the wrong labels.
    answers, submission, targets = _noisy(JIGSAW)
    order = ["insult", "toxic", "severe_toxic", "obscene", "threat", "identity_hate"]
    reordered = submission[["id", *order]]
    keep = (answers[targets].sum(axis=1) >= 0).to_numpy()
    expected = np.mean([roc_auc_score(answers[t][keep], reordered[c][keep]) for t, c in zip(targets, order)])
    assert grade(JIGSAW, reordered, answers) == pytest.approx(expected, abs=1e-12)
    assert grade(JIGSAW, reordered, answers) != pytest.approx(grade(JIGSAW, submission, answers))
    id_last = submission[[*targets, "id"]]
    assert grade(JIGSAW, id_last, answers) == grade(JIGSAW, submission, answers)


def test_jigsaw_rejects_an_extra_column():
    answers, submission, _ = _noisy(JIGSAW)
    reject(JIGSAW, submission.assign(note=0.5), answers, "remove note", "every non-id column")
    with_index = submission.reset_index().rename(columns={"index": "Unnamed: 0"})
    reject(JIGSAW, with_index, answers, "remove Unnamed: 0")


def test_jigsaw_requires_every_label_and_the_row_count():
    answers, submission, _ = _noisy(JIGSAW)
    reject(JIGSAW, submission.drop(columns=["identity_hate"]), answers, "missing identity_hate")
    reject(JIGSAW, submission.iloc[:-1], answers, "expected 8 rows")


def test_jigsaw_keeps_the_reference_alignment_for_repeated_ids():
    # With a repeated id (and another id missing) the reference's index alignment does not fail; it
    # keeps the submission rows whose id is scored and pairs them, in sorted order, with the scored
    # answer rows. Here id 00017563c3f7919a (scored) replaces 00013b17ad220c46 (unscored).
    answers, submission, targets = _noisy(JIGSAW)
    repeated = submission.copy()
    repeated.loc[2, "id"] = repeated.loc[3, "id"]
    keep = (answers[targets].sum(axis=1) >= 0).to_numpy()
    sub_sorted = repeated.sort_values("id", kind="stable")
    kept_sub = sub_sorted[sub_sorted["id"].isin(answers["id"][keep])]
    kept_ans = answers[keep].sort_values("id")
    assert len(kept_sub) != len(kept_ans)
    reject(JIGSAW, repeated, answers, "do not match")  # 7 scored rows against 6: scikit-learn refuses
    # an unscored id repeated in place of the other unscored id: the scored rows still line up
    swapped = submission.copy()
    swapped.loc[5, "id"] = swapped.loc[2, "id"]
    assert grade(JIGSAW, swapped, answers) == grade(JIGSAW, submission, answers)
    # a scored id repeated in place of another scored id: as many scored rows on both sides, so the
    # reference scores them, paired by sorted position even though the ids differ
    misaligned = submission.copy()
    misaligned.loc[6, "id"] = misaligned.loc[7, "id"]  # 00024115d4cbde0f replaced by 000247e83dcc1211
    sub_sorted = misaligned.sort_values("id", kind="stable")
    kept_sub = sub_sorted[sub_sorted["id"].isin(answers["id"][keep])]
    kept_ans = answers[keep].sort_values("id")
    assert len(kept_sub) == len(kept_ans)
    expected = np.mean([roc_auc_score(kept_ans[t], kept_sub[t]) for t in targets])
    assert grade(JIGSAW, misaligned, answers) == pytest.approx(expected, abs=1e-12)


def test_jigsaw_rejects_an_id_that_is_not_in_the_test_set():
    answers, submission, _ = _noisy(JIGSAW)
    submission.loc[0, "id"] = "ffffffffffffffff"
    reject(JIGSAW, submission, answers, "'ffffffffffffffff' in row 1", "not in the test set")


def test_it_reports_a_label_column_without_both_classes_as_undefined():
    answers, submission, _ = _noisy(PLANT)
    answers = answers.assign(multiple_diseases=0)
    reject(PLANT, submission, answers, "undefined", "multiple_diseases", "only one class")
