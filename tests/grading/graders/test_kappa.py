"""Quadratic weighted kappa: aptos2019-blindness-detection."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from .frames import answers_for, csv_frame, grade, perfect_submission, reject, roundtrip

APTOS = "aptos2019-blindness-detection"


def _submission(diagnoses):
    answers = answers_for(APTOS)
    return answers, pd.DataFrame({"id_code": answers["id_code"], "diagnosis": diagnoses})


def test_it_scores_a_perfect_submission_one():
    answers = answers_for(APTOS)
    assert grade(APTOS, perfect_submission(APTOS, answers), answers) == 1.0


def test_it_scores_like_cohen_kappa_score_quadratic():
    answers, submission = _submission([2, 3, 1, 0, 1, 4, 0, 0])
    expected = cohen_kappa_score(submission["diagnosis"], answers["diagnosis"], weights="quadratic")
    assert grade(APTOS, submission, answers) == pytest.approx(expected, rel=1e-12)
    shuffled = submission.iloc[::-1].reset_index(drop=True)
    assert grade(APTOS, shuffled, answers) == pytest.approx(expected, rel=1e-15)


def test_it_uses_labels_as_given_without_rounding():
    answers, as_float = _submission([2.0, 3.0, 1.0, 0.0, 1.0, 4.0, 0.0, 0.0])
    _, as_int = _submission([2, 3, 1, 0, 1, 4, 0, 0])
    assert grade(APTOS, as_float, answers) == grade(APTOS, as_int, answers)
    fractional = as_float.copy()
    fractional.loc[1, "diagnosis"] = 3.5
    reject(APTOS, fractional, answers, "whole-number class label", "row 2 (id '001639a390f0') has 3.5")


def test_an_out_of_range_label_widens_the_weight_scale_like_scikit_learn():
    # the weights use each label's position in the sorted union of labels, so a 7 changes them all
    answers, submission = _submission([2, 7, 1, 0, 0, 4, 0, 2])
    expected = cohen_kappa_score(submission["diagnosis"], answers["diagnosis"], weights="quadratic")
    assert grade(APTOS, submission, answers) == pytest.approx(expected, rel=1e-12)


def test_it_returns_nan_when_predictions_and_answers_are_one_same_class():
    # 0/0 in scikit-learn: NaN, which MLE-bench counts as a valid (but never winning) score
    answers = csv_frame("id_code,diagnosis\na,2\nb,2\n")
    submission = csv_frame("id_code,diagnosis\nb,2\na,2\n")
    assert math.isnan(grade(APTOS, submission, answers))


def test_it_rejects_bad_submissions():
    answers, submission = _submission([2, 3, 1, 0, 1, 4, 0, 0])
    reject(APTOS, submission.drop(columns=["diagnosis"]), answers, "missing diagnosis")
    reject(APTOS, submission.drop(columns=["id_code"]), answers, "missing id_code")
    reject(APTOS, submission.iloc[:0], answers, "no rows")
    reject(APTOS, submission.iloc[:-1], answers, "1 test id is missing", "'00a8624548a9'")
    reject(APTOS, pd.concat([submission, submission.iloc[[0]]]), answers, "more often", "'000c1434d8d7' 2 times")
    text = submission.astype({"diagnosis": object})
    text.loc[0, "diagnosis"] = "moderate"
    reject(APTOS, roundtrip(text), answers, "same kind as the answers")
    empty = submission.astype({"diagnosis": float})
    empty.loc[3, "diagnosis"] = np.nan
    reject(APTOS, empty, answers, "empty or not finite", "row 4")
