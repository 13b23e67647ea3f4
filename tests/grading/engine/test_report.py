"""MLE-bench report format, and parsing a team's report back, checked on the official grader's files."""

import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from grading.engine.medals import Thresholds, medals_for
from grading.engine.report import (
    REPORT_FIELDS,
    TOTAL_FIELDS,
    CompetitionReport,
    build_run_group_report,
    report_filename,
)
from grading.engine.report_parser import MalformedReport, parse_competition_report, parse_grading_report

REPORTS = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1" / "grading_reports"
EXAMPLE = REPORTS / "example_run_group_grading_report.json"
OFFICIAL_SINGLE = REPORTS / "official_single_competition_reports.json"


def example() -> dict:
    return json.loads(EXAMPLE.read_text())


def test_report_fields_are_in_the_official_key_order():
    data = example()
    assert list(data) == [*TOTAL_FIELDS, "competition_reports"]
    for report in data["competition_reports"]:
        assert list(report) == list(REPORT_FIELDS)


def test_a_report_built_from_the_example_s_values_serialises_byte_for_byte_like_it():
    reports = [CompetitionReport(**r) for r in example()["competition_reports"]]
    assert build_run_group_report(reports).to_json(with_reason=False) == EXAMPLE.read_text()


def test_the_example_report_round_trips_through_the_parser():
    parsed = parse_grading_report(EXAMPLE.read_text())
    assert parsed.to_json(with_reason=False) == EXAMPLE.read_text()
    assert parsed.claimed_totals == {k: example()[k] for k in TOTAL_FIELDS}
    assert parsed.totals_mismatches() == {}


def test_the_reason_field_comes_last_and_can_be_dropped():
    report = CompetitionReport(**example()["competition_reports"][0], reason="no submission file at x")
    assert list(report.to_dict(with_reason=True)) == [*REPORT_FIELDS, "reason"]
    assert list(report.to_dict(with_reason=False)) == list(REPORT_FIELDS)
    assert parse_competition_report(report.to_dict(with_reason=True)) == report


def test_every_official_single_report_parses_and_its_medals_follow_our_rules():
    reports = parse_grading_report(OFFICIAL_SINGLE.read_bytes()).competition_reports
    assert len(reports) == 16
    for r in reports:
        thresholds = Thresholds(
            r.gold_threshold, r.silver_threshold, r.bronze_threshold, r.median_threshold, r.is_lower_better
        )
        claimed = {
            k: getattr(r, k) for k in ("gold_medal", "silver_medal", "bronze_medal", "above_median", "any_medal")
        }
        assert medals_for(r.score, thresholds) == claimed, r.competition_id
        assert r.valid_submission is (r.score is not None)


def test_a_single_competition_report_parses_as_a_group_of_one_without_totals():
    single = example()["competition_reports"][1]
    parsed = parse_grading_report(json.dumps(single))
    assert [r.competition_id for r in parsed.competition_reports] == ["aerial-cactus-identification"]
    assert parsed.claimed_totals is None


def test_claimed_totals_that_do_not_add_up_are_kept_and_reported():
    data = example()
    data["total_medals"] = 3
    parsed = parse_grading_report(json.dumps(data))
    assert parsed.claimed_totals["total_medals"] == 3
    assert parsed.totals_mismatches() == {"total_medals": (3, 0)}
    assert json.loads(parsed.to_json(with_reason=False))["total_medals"] == 0


def test_a_nan_score_is_accepted_and_written_back_as_mlebench_writes_it():
    data = example()
    data["competition_reports"][1]["score"] = math.nan
    parsed = parse_grading_report(json.dumps(data))
    assert math.isnan(parsed.competition_reports[1].score)
    assert '"score": NaN' in parsed.to_json(with_reason=False)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["competition_reports"][0].pop("score"),
            "competition_reports[0]: missing field(s) score",
        ),
        (
            lambda d: d["competition_reports"][1].update(score="0.99941"),
            'competition_reports[1].score: expected a number or null, got "0.99941"',
        ),
        (
            lambda d: d["competition_reports"][1].update(score=True),
            "competition_reports[1].score: expected a number or null, got true",
        ),
        (
            lambda d: d["competition_reports"][2].update(gold_medal=1),
            "competition_reports[2].gold_medal: expected true or false, got 1",
        ),
        (
            lambda d: d["competition_reports"][0].update(gold_threshold=None),
            "competition_reports[0].gold_threshold: expected a number, got null",
        ),
        (
            lambda d: d["competition_reports"][0].update(created_at="yesterday"),
            "competition_reports[0].created_at: expected an ISO date-time",
        ),
        (
            lambda d: d["competition_reports"][0].update(competition_id=""),
            "competition_reports[0].competition_id: expected a non-empty string",
        ),
        (lambda d: d.update(competition_reports={}), "competition_reports: expected a list, got an object"),
        (lambda d: d.pop("total_runs"), "the report has some totals but not total_runs"),
        (lambda d: d.update(total_runs=-1), "total_runs: expected a whole number >= 0, got -1"),
        (
            lambda d: d["competition_reports"].append([]),
            "competition_reports[3]: expected an object, got a list",
        ),
    ],
)
def test_malformed_reports_are_refused_with_the_path_of_the_problem(mutate, message):
    data = example()
    mutate(data)
    with pytest.raises(MalformedReport) as caught:
        parse_grading_report(json.dumps(data))
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "the report is not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        ("[]", "the report must be a JSON object, got a list"),
        ('{"note": 1}', "the report has neither 'competition_reports' nor 'competition_id'"),
        ('{"total_runs": 1, "total_runs": 2}', "the report repeats the key 'total_runs' in one object"),
        (b"\xff{}", "the report is not UTF-8 text"),
    ],
)
def test_text_that_is_not_a_report_is_refused_clearly(text, message):
    with pytest.raises(MalformedReport) as caught:
        parse_grading_report(text)
    assert str(caught.value).startswith(message)


def test_the_report_file_name_follows_mlebench():
    name = report_filename(now=datetime(2025, 5, 7, 12, 59, 41))
    assert name.startswith("2025-05-07T12-59-41-") and name.endswith("_grading_report.json")
