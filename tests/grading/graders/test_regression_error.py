"""RMSE (denoising-dirty-documents, new-york-city-taxi) and mean column-wise RMSLE (nomad2018)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import root_mean_squared_error, root_mean_squared_log_error

from .frames import answers_for, csv_frame, grade, perfect_submission, reject, roundtrip

DENOISING = "denoising-dirty-documents"
TAXI = "new-york-city-taxi-fare-prediction"
NOMAD = "nomad2018-predict-transparent-conductors"


def _denoising():
    answers = answers_for(DENOISING)
    submission = perfect_submission(DENOISING, answers)
    submission["value"] = np.clip(submission["value"] + np.linspace(-0.2, 0.3, len(submission)), 0, 1)
    return answers, submission


def test_denoising_scores_rmse_over_pixels():
    answers, submission = _denoising()
    assert grade(DENOISING, perfect_submission(DENOISING, answers), answers) == 0.0
    expected = root_mean_squared_error(answers["value"], submission["value"])
    assert grade(DENOISING, submission, answers) == pytest.approx(expected, rel=1e-12)
    shuffled = submission.sample(frac=1, random_state=3).reset_index(drop=True)
    assert grade(DENOISING, shuffled, answers) == pytest.approx(expected, rel=1e-14)


def test_denoising_requires_every_pixel_id_exactly_once():
    answers, submission = _denoising()
    reject(DENOISING, submission.iloc[:-1], answers, "expected 12 rows", "got 11")
    renamed = submission.copy()
    renamed.loc[0, "id"] = "1_1_01"
    reject(DENOISING, renamed, answers, "1 test id is missing (e.g. '1_1_1')", "'1_1_01' in row 1")
    repeated = submission.copy()
    repeated.loc[1, "id"] = "1_1_1"
    reject(DENOISING, repeated, answers, "'1_1_2'", "'1_1_1' 2 times")


def test_denoising_reads_values_like_scikit_learn():
    # text that Python's float() understands is a number for the reference (astype(float))
    answers, submission = _denoising()
    text = submission.astype({"value": object})
    text.loc[0, "value"] = "1_0e-1"  # float("1_0e-1") == 1.0
    text = roundtrip(text)
    assert not pd.api.types.is_numeric_dtype(text["value"].dtype)
    submission.loc[0, "value"] = 1.0
    assert grade(DENOISING, text, answers) == grade(DENOISING, submission, answers)
    text.loc[2, "value"] = "white"
    reject(DENOISING, text, answers, "'value'", "not a number", "'white' in row 3")


def test_denoising_rejects_nan_and_inf_but_not_values_outside_zero_one():
    answers, submission = _denoising()
    outside = submission.assign(value=submission["value"] * 3 - 1)
    expected = root_mean_squared_error(answers["value"], outside["value"])
    assert grade(DENOISING, outside, answers) == pytest.approx(expected, rel=1e-12)
    submission.loc[4, "value"] = np.nan
    reject(DENOISING, submission, answers, "missing value", "row 5 (id '1_2_2')")
    submission.loc[4, "value"] = -np.inf
    reject(DENOISING, submission, answers, "infinite", "row 5")
    reject(DENOISING, submission.drop(columns=["value"]), answers, "missing value")


def test_taxi_scores_rmse_after_sorting_both_files_by_key():
    answers = answers_for(TAXI)
    submission = csv_frame(
        "key,fare_amount\n"
        "2012-04-21 04:30:42.0000001,8.0\n2009-06-15 17:26:21.0000001,4.0\n2010-01-05 16:52:16.0000002,18.9\n"
        "2010-03-09 07:51:00.000000135,5.3\n2011-08-18 00:35:00.00000049,6.7\n"
    )
    assert grade(TAXI, perfect_submission(TAXI, answers), answers) == 0.0
    by_hand = np.sqrt(np.mean(np.square([0.3, 0.5, 2.0, 0.0, 1.0])))
    assert grade(TAXI, submission, answers) == pytest.approx(by_hand, rel=1e-12)


def test_taxi_does_not_check_keys_only_the_row_count():
    # MLE-bench sorts both files by key and compares fares row by row: wrong keys are not an error,
    # they just shift each prediction onto whichever ride has the same rank.
    answers = answers_for(TAXI)
    predictions = [10.0, 20.0, 30.0, 40.0, 50.0]
    wrong_keys = pd.DataFrame({"key": ["e", "d", "c", "b", "a"], "fare_amount": predictions})
    truth_sorted = answers.sort_values("key")["fare_amount"].to_numpy()
    expected = root_mean_squared_error(truth_sorted, [50.0, 40.0, 30.0, 20.0, 10.0])
    assert grade(TAXI, roundtrip(wrong_keys), answers) == pytest.approx(expected, rel=1e-12)
    numeric_keys = pd.DataFrame({"key": [3, 1, 2, 2, 9], "fare_amount": predictions})
    expected = root_mean_squared_error(truth_sorted, [20.0, 30.0, 40.0, 10.0, 50.0])  # sorted 1,2,2,3,9
    assert grade(TAXI, roundtrip(numeric_keys), answers) == pytest.approx(expected, rel=1e-12)
    reject(TAXI, roundtrip(wrong_keys.iloc[:4]), answers, "expected 5 rows", "got 4")
    reject(TAXI, roundtrip(wrong_keys.drop(columns=["key"])), answers, "missing key")


def test_taxi_rejects_missing_or_non_numeric_fares():
    answers = answers_for(TAXI)
    submission = perfect_submission(TAXI, answers)
    submission.loc[2, "fare_amount"] = np.nan
    reject(TAXI, submission, answers, "'fare_amount'", "missing value")
    text = perfect_submission(TAXI, answers).astype({"fare_amount": object})
    text.loc[0, "fare_amount"] = "$4.50"
    reject(TAXI, roundtrip(text), answers, "not a number", "'$4.50' in row 1")


def _nomad_submission(answers, noise=0.05):
    submission = answers[["id", "formation_energy_ev_natom", "bandgap_energy_ev"]].copy()
    submission["formation_energy_ev_natom"] += noise
    submission["bandgap_energy_ev"] *= 1 + noise
    return roundtrip(submission)


def test_nomad_averages_the_rmsle_of_both_targets():
    answers = answers_for(NOMAD)
    submission = _nomad_submission(answers)
    expected = (
        root_mean_squared_log_error(answers["formation_energy_ev_natom"], submission["formation_energy_ev_natom"])
        + root_mean_squared_log_error(answers["bandgap_energy_ev"], submission["bandgap_energy_ev"])
    ) / 2
    assert grade(NOMAD, submission, answers) == pytest.approx(expected, rel=1e-12)
    assert grade(NOMAD, perfect_submission(NOMAD, answers), answers) == 0.0


def test_nomad_pairs_rows_by_position_and_ignores_ids():
    answers = answers_for(NOMAD)
    submission = _nomad_submission(answers)
    without_id = submission.drop(columns=["id"])
    assert grade(NOMAD, without_id, answers) == grade(NOMAD, submission, answers)
    wrong_ids = submission.assign(id=[40, 30, 20, 10])
    assert grade(NOMAD, wrong_ids, answers) == grade(NOMAD, submission, answers)
    reversed_rows = submission.iloc[::-1].reset_index(drop=True)  # same ids, other order: other score
    assert grade(NOMAD, reversed_rows, answers) != pytest.approx(grade(NOMAD, submission, answers))
    reject(NOMAD, submission.iloc[:-1], answers, "expected 4 rows")


def test_nomad_rejects_negative_predictions_like_scikit_learn_1_5():
    # scikit-learn 1.5 refuses any negative value in RMSLE; 1.9 accepts values above -1. We keep 1.5.
    answers = answers_for(NOMAD)
    submission = _nomad_submission(answers)
    submission.loc[1, "formation_energy_ev_natom"] = -0.01
    reject(NOMAD, submission, answers, "negative value", "row 2 has -0.01")
    submission.loc[1, "formation_energy_ev_natom"] = np.nan
    reject(NOMAD, submission, answers, "missing value", "row 2")


def test_nomad_reproduces_numpy_float16_log1p_of_boolean_predictions():
    # The reference hands a boolean column to log1p unchanged, and NumPy computes log1p of booleans in
    # float16: log1p(True) is 0.6931 instead of 0.693147.
    answers = answers_for(NOMAD)
    submission = roundtrip(_nomad_submission(answers).assign(formation_energy_ev_natom=[True, False, True, True]))
    assert submission["formation_energy_ev_natom"].dtype == bool
    logged = np.log1p(np.array([True, False, True, True]))
    assert logged.dtype == np.float16
    first = np.sqrt(np.mean((np.log1p(answers["formation_energy_ev_natom"].to_numpy()) - logged.astype(float)) ** 2))
    second = root_mean_squared_log_error(answers["bandgap_energy_ev"], submission["bandgap_energy_ev"])
    assert grade(NOMAD, submission, answers) == pytest.approx((first + second) / 2, rel=1e-12)
