"""Accuracy: tabular-playground-series-dec-2021 (labels) and text normalization (exact text)."""

import csv

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from .frames import answers_for, csv_frame, grade, perfect_submission, reject, roundtrip

TABULAR = "tabular-playground-series-dec-2021"
ENGLISH = "text-normalization-challenge-english-language"
RUSSIAN = "text-normalization-challenge-russian-language"


def test_tabular_scores_the_share_of_correct_cover_types():
    answers = answers_for(TABULAR)
    assert grade(TABULAR, perfect_submission(TABULAR, answers), answers) == 1.0
    submission = csv_frame("Id,Cover_Type\n4000005,7\n4000000,1\n4000001,1\n4000002,2\n4000003,3\n4000004,3\n")
    assert grade(TABULAR, submission, answers) == pytest.approx(4 / 6)
    aligned = submission.sort_values("Id")
    assert grade(TABULAR, submission, answers) == accuracy_score(answers["Cover_Type"], aligned["Cover_Type"])


def test_tabular_compares_labels_as_parsed():
    answers = answers_for(TABULAR)
    as_float = csv_frame(
        "Id,Cover_Type\n4000000,1.0\n4000001,2.0\n4000002,2.0\n4000003,1.0\n4000004,3.0\n4000005,6.0\n"
    )
    assert grade(TABULAR, as_float, answers) == pytest.approx(5 / 6)  # 2.0 counts as 2
    fractional = as_float.copy()
    fractional.loc[5, "Cover_Type"] = 6.5
    reject(TABULAR, fractional, answers, "whole-number class label", "row 6 (id 4000005) has 6.5")
    empty = as_float.copy()
    empty.loc[0, "Cover_Type"] = np.nan
    reject(TABULAR, empty, answers, "empty or not finite", "row 1")


def test_tabular_accepts_text_labels_that_never_match_like_the_reference():
    # With 3+ classes scikit-learn compares text with numbers without complaint: every row is wrong.
    answers = answers_for(TABULAR)
    text = csv_frame(
        "Id,Cover_Type\n4000000,one\n4000001,two\n4000002,two\n4000003,one\n4000004,three\n4000005,seven\n"
    )
    assert grade(TABULAR, text, answers) == 0.0
    with_gap = csv_frame("Id,Cover_Type\n4000000,one\n4000001,\n4000002,two\n4000003,one\n4000004,three\n4000005,x\n")
    reject(TABULAR, with_gap, answers, "empty cell", "row 2")


def test_tabular_rejects_bad_ids_and_row_counts():
    answers = answers_for(TABULAR)
    submission = perfect_submission(TABULAR, answers)
    reject(TABULAR, submission.iloc[:-1], answers, "expected 6 rows", "got 5")
    reject(
        TABULAR,
        submission.assign(Id=submission["Id"] + 1),
        answers,
        "1 test id is missing (e.g. 4000000)",
        "4000006 in row 6",
    )
    reject(TABULAR, submission.drop(columns=["Cover_Type"]), answers, "missing Cover_Type")
    assert grade(TABULAR, submission.assign(Elevation=1), answers) == 1.0  # extra columns are ignored


@pytest.mark.parametrize("competition", [ENGLISH, RUSSIAN])
def test_text_normalization_scores_exact_matches(competition):
    answers = answers_for(competition)
    assert grade(competition, perfect_submission(competition, answers), answers) == 1.0
    submission = perfect_submission(competition, answers).astype({"after": object})
    submission.loc[0, "after"] = submission.loc[0, "after"].lower() + " "
    submission.loc[1, "after"] = submission.loc[1, "after"].upper()
    shuffled = roundtrip(submission.iloc[::-1], quoting=csv.QUOTE_NONNUMERIC)
    assert grade(competition, shuffled, answers) == pytest.approx((len(answers) - 2) / len(answers))


def test_text_normalization_counts_empty_cells_as_the_text_nan():
    # both sides go through pandas 2.2's astype(str): a missing value becomes 'nan', so an empty
    # prediction matches an answer read as missing (Russian 'NA' is read as missing by pandas)
    answers = answers_for(RUSSIAN)
    assert answers["after"].isna().sum() == 1
    submission = perfect_submission(RUSSIAN, answers)
    assert grade(RUSSIAN, submission, answers) == 1.0
    blank = submission.astype({"after": object})
    blank.loc[0, "after"] = np.nan
    assert grade(RUSSIAN, roundtrip(blank), answers) == pytest.approx((len(answers) - 1) / len(answers))


def test_text_normalization_compares_numbers_as_pandas_writes_them():
    # a column pandas reads as numbers is turned back into text: 1 -> '1', but 1.0 -> '1.0'
    answers = csv_frame('"id","after"\n"0_0","1"\n"0_1","2"\n"0_2","x"\n')
    as_int = csv_frame("id,after\n0_0,1\n0_1,2\n0_2,3\n")
    assert grade(ENGLISH, as_int, answers) == pytest.approx(2 / 3)
    as_float = csv_frame("id,after\n0_0,1.0\n0_1,2\n0_2,\n")
    assert as_float["after"].dtype == np.float64
    assert grade(ENGLISH, as_float, answers) == 0.0


@pytest.mark.parametrize("competition", [ENGLISH, RUSSIAN])
def test_text_normalization_rejects_bad_ids_and_row_counts(competition):
    answers = answers_for(competition)
    submission = perfect_submission(competition, answers)
    reject(competition, submission.iloc[1:], answers, "expected", "1 fewer")
    repeated = submission.copy()
    repeated.loc[0, "id"] = repeated.loc[1, "id"]
    reject(competition, repeated, answers, "1 test id is missing (e.g. '0_0')", "'0_1' 2 times")
    reject(competition, submission.rename(columns={"after": "before"}), answers, "missing after")
