"""Grading one submission into a report: never raises on a bad file, always says why it is invalid."""

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grading.engine.csvio import MiB
from grading.engine.errors import InvalidSubmission
from grading.engine.medals import read_leaderboard
from grading.engine.registry import GraderRef, register
from grading.engine.report import REPORT_FIELDS, grade_submission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
AERIAL = read_leaderboard(DATA / "leaderboards" / "aerial-cactus-identification.csv")
APTOS = read_leaderboard(DATA / "leaderboards" / "aptos2019-blindness-detection.csv")  # gold 0.930508


# Stand-in graders registered under names no real grader uses; they exercise the engine, not metrics.
@register("engine-tests-accuracy")
def _accuracy(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target: str) -> float:
    if set(submission[id_column]) != set(answers[id_column]):
        raise InvalidSubmission("the ids differ from the test ids")
    merged = answers.merge(submission, on=id_column, suffixes=("_true", "_pred"))
    return float((merged[f"{target}_true"] == merged[f"{target}_pred"]).mean())


@register("engine-tests-constant")
def _constant(submission: pd.DataFrame, answers: pd.DataFrame, *, value: float, as_numpy: bool = False) -> float:
    return np.float64(value) if as_numpy else value


@register("engine-tests-broken")
def _broken(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    return submission["no_such_column"].mean()


@register("engine-tests-mutating")
def _mutating(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    answers["label"] = "changed"
    answers.loc[0, "id"] = 99
    return 1.0


ACCURACY = GraderRef("engine-tests-accuracy", {"id_column": "id", "target": "label"})


@pytest.fixture
def answers(tmp_path) -> Path:
    path = tmp_path / "answers.csv"
    path.write_text("id,label\n1,cat\n2,dog\n3,cat\n")
    return path


def submit(tmp_path: Path, content: str | bytes, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def grade(submission: Path | None, answers_path: Path, grader: GraderRef = ACCURACY, scores=AERIAL, **kw):
    return grade_submission(
        competition_id="aerial-cactus-identification",
        submission_path=submission,
        answers_path=answers_path,
        grader=grader,
        leaderboard_scores=scores,
        **kw,
    )


def test_a_correct_submission_gets_its_score_medals_and_thresholds(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n"), answers)
    assert (report.score, report.valid_submission, report.submission_exists) == (1.0, True, True)
    assert (report.gold_medal, report.any_medal, report.above_median) == (True, True, True)
    assert (report.gold_threshold, report.median_threshold, report.is_lower_better) == (1.0, 0.9991, False)
    assert report.reason is None


def test_the_score_is_rounded_to_five_decimals(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n2,cat\n3,cat\n"), answers)
    assert report.score == 0.66667


def test_the_rounded_score_meets_an_unrounded_threshold(tmp_path, answers):
    # 0.930507 is below aptos' gold threshold 0.930508, but it rounds to 0.93051, which is not.
    report = grade(
        submit(tmp_path, "id,label\n1,cat\n"),
        answers,
        GraderRef("engine-tests-constant", {"value": 0.930507}),
        APTOS,
    )
    assert (report.score, report.gold_medal) == (0.93051, True)


@pytest.mark.parametrize(("as_numpy", "expected"), [(False, 1e-05), (True, 0.0)])
def test_rounding_follows_the_type_the_grader_returns_like_mlebench(tmp_path, answers, as_numpy, expected):
    # round() on a Python float is exact-decimal, on a numpy float it is scale-and-rint; they disagree on
    # ties like 5e-06. MLE-bench calls round() on whatever the metric returned, and so do we.
    grader = GraderRef("engine-tests-constant", {"value": 5e-06, "as_numpy": as_numpy})
    assert grade(submit(tmp_path, "id,label\n1,cat\n"), answers, grader).score == expected


def test_a_missing_submission_is_reported_as_not_existing_with_thresholds(tmp_path, answers):
    report = grade(None, answers)
    assert (report.submission_exists, report.valid_submission, report.score) == (False, False, None)
    assert report.submission_path == "None"
    assert report.gold_threshold == 1.0
    assert report.reason == "no submission file was found for this run"


def test_a_path_that_does_not_exist_is_not_a_submission(tmp_path, answers):
    report = grade(tmp_path / "submission.csv", answers)
    assert report.submission_exists is False
    assert report.submission_path == str(tmp_path / "submission.csv")
    assert report.reason.startswith("no submission file at")


def test_a_file_without_a_csv_suffix_is_not_a_submission(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n", name="submission.parquet"), answers)
    assert (report.submission_exists, report.valid_submission) == (False, False)
    assert report.reason == "the submission must be a .csv file, not .parquet"


def test_the_csv_suffix_is_case_insensitive(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n", name="SUBMISSION.CSV"), answers)
    assert (report.submission_exists, report.score) == (True, 1.0)


def test_an_unreadable_file_is_invalid_with_the_reader_s_reason(tmp_path, answers):
    report = grade(submit(tmp_path, "id;label\n1;cat\n"), answers)
    assert (report.submission_exists, report.valid_submission, report.score) == (True, False, None)
    assert report.reason.startswith("found 1 column 'id;label'; the file must be comma-separated")
    assert not any((report.gold_medal, report.any_medal, report.above_median))


def test_the_grader_s_invalid_submission_message_is_kept(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n9,dog\n"), answers)
    assert report.reason == "the ids differ from the test ids"


def test_any_other_grader_exception_becomes_a_readable_reason_without_a_trace(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n"), answers, GraderRef("engine-tests-broken"))
    assert report.valid_submission is False
    assert report.reason == "the grader could not score this file: KeyError: 'no_such_column'"
    assert "Traceback" not in report.reason


def test_a_nan_score_is_valid_but_earns_nothing(tmp_path, answers):
    report = grade(
        submit(tmp_path, "id,label\n1,cat\n"),
        answers,
        GraderRef("engine-tests-constant", {"value": math.nan}),
    )
    assert report.valid_submission is True and math.isnan(report.score)
    assert not any((report.any_medal, report.gold_medal, report.above_median))


def test_preloaded_answers_are_not_changed_by_the_grader(tmp_path, answers):
    frame = pd.read_csv(answers)
    before = frame.copy()
    grade(submit(tmp_path, "id,label\n1,cat\n"), answers, GraderRef("engine-tests-mutating"), answers=frame)
    pd.testing.assert_frame_equal(frame, before)


def test_unreadable_answers_are_our_error_and_raise(tmp_path):
    missing = tmp_path / "answers.csv"
    with pytest.raises(FileNotFoundError):
        grade(submit(tmp_path, "id,label\n1,cat\n"), missing, max_bytes=MiB, max_line_bytes=MiB)


def test_an_unreadable_submission_does_not_load_the_answers(tmp_path):
    # The answers path is never opened: the submission is refused first.
    report = grade(submit(tmp_path, b""), tmp_path / "answers.csv", max_bytes=MiB, max_line_bytes=MiB)
    assert report.reason.startswith("the file is empty")


def test_an_unknown_grader_is_our_error_and_raises(tmp_path, answers):
    with pytest.raises(KeyError, match="no grader named"):
        grade(submit(tmp_path, "id,label\n1,cat\n"), answers, GraderRef("engine-tests-no-such-grader"))


def test_a_file_over_the_size_cap_is_invalid_not_an_error(tmp_path, answers):
    path = tmp_path / "submission.csv"
    with path.open("wb") as f:
        f.truncate(1024**3)
    report = grade(path, answers)
    assert report.submission_exists is True and report.valid_submission is False
    assert report.reason.startswith("the file is 1.0 GiB, over the 64.0 MiB limit")


def test_the_report_serialises_in_mlebench_order_with_a_naive_iso_timestamp(tmp_path, answers):
    report = grade(
        submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n"),
        answers,
        display_path="runs/g/aerial-cactus-identification_1/submission/submission.csv",
        created_at=datetime(2025, 5, 7, 14, 59, 41, 765720),
    )
    data = json.loads(json.dumps(report.to_dict(with_reason=False)))
    assert list(data) == list(REPORT_FIELDS)
    assert data["created_at"] == "2025-05-07T14:59:41.765720"
    assert data["submission_path"] == "runs/g/aerial-cactus-identification_1/submission/submission.csv"


def test_it_takes_precomputed_thresholds_instead_of_a_leaderboard(tmp_path, answers):
    from grading.engine.medals import thresholds_from_leaderboard

    report = grade_submission(
        competition_id="aerial-cactus-identification",
        submission_path=submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n"),
        answers_path=answers,
        grader=ACCURACY,
        thresholds=thresholds_from_leaderboard(AERIAL),
    )
    assert report.gold_medal is True
    with pytest.raises(TypeError, match="exactly one"):
        grade_submission(competition_id="x", submission_path=None, answers_path=answers, grader=ACCURACY)


def test_without_a_leaderboard_the_score_is_graded_and_the_medals_are_unknown(tmp_path, answers):
    from grading.engine.medals import MedalsUnknown
    from grading.engine.report_parser import parse_competition_report

    report = grade_submission(
        competition_id="siim-isic-melanoma-classification",
        submission_path=submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n"),
        answers_path=answers,
        grader=ACCURACY,
        thresholds=MedalsUnknown(is_lower_better=False),
    )
    assert report.score == 1.0 and report.valid_submission and report.medals_known is False
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold, report.median_threshold) == (
        None,
        None,
        None,
        None,
    )
    assert not any((report.gold_medal, report.silver_medal, report.bronze_medal, report.above_median, report.any_medal))
    # MLE-bench's shape, thresholds null, and one more field that says the false flags are no verdict.
    data = json.loads(json.dumps(report.to_dict(with_reason=False)))
    assert list(data) == [*REPORT_FIELDS, "medals_known"] and data["medals_known"] is False
    assert list(report.to_dict(with_reason=True)) == [*REPORT_FIELDS, "medals_known", "reason"]
    assert parse_competition_report(report.to_dict(with_reason=True)) == report


def test_a_report_with_known_medals_has_exactly_mlebench_s_fields(tmp_path, answers):
    report = grade(submit(tmp_path, "id,label\n1,cat\n2,dog\n3,cat\n"), answers)
    assert report.medals_known is True and list(report.to_dict(with_reason=False)) == list(REPORT_FIELDS)


def test_the_size_limit_rises_to_the_largest_honest_submission(tmp_path, answers):
    path = tmp_path / "submission.csv"
    with path.open("wb") as f:
        f.truncate(100 * MiB)  # over the 64 MiB floor of a small answers file
    assert grade(path, answers).reason.startswith("the file is 100.0 MiB, over the 64.0 MiB limit")
    report = grade_submission(
        competition_id="x",
        submission_path=path,
        answers_path=answers,
        grader=ACCURACY,
        leaderboard_scores=AERIAL,
        honest_max_bytes=200 * MiB,
    )
    assert report.valid_submission is False and "limit" not in report.reason  # read, and refused for what it holds
