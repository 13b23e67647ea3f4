"""format_checks: the portal's record of an agent's format checks, counted and shown."""

import json

from grading.checks import format_checks
from tests.grading.checks.builders import SPOOKY, check_context, run_files


def _record(run, calls: list[dict]) -> None:
    (run.folder / "format_checks.jsonl").write_text("".join(json.dumps(call) + "\n" for call in calls))


def test_it_counts_each_runs_calls_and_shows_what_they_were_told(tmp_path):
    first, second = run_files(tmp_path, SPOOKY, 0), run_files(tmp_path, SPOOKY, 1)
    _record(first, [{"at": "2026-12-01T10:00:00", "valid": False, "reason": "12 ids missing"}, {"valid": True}])
    _record(second, [{"at": "2026-12-01T10:05:00", "valid": True, "reason": None}])
    (flag,) = format_checks.check(check_context(runs=[first, second]))
    assert flag.code == "format_checks" and flag.severity == "info"
    assert flag.message.startswith("The agent asked the format check 3 times over 2 runs (at most 2")
    assert flag.evidence["calls_per_run"] == {first.run_path: 2, second.run_path: 1}
    assert flag.evidence["invalid_per_run"] == {first.run_path: 1, second.run_path: 0}
    assert flag.evidence["calls"][first.run_path][0]["reason"] == "12 ids missing"


def test_a_run_that_asked_too_often_is_a_warning(tmp_path):
    run = run_files(tmp_path, SPOOKY, 0)
    _record(run, [{"valid": True}] * (format_checks.MANY_CALLS + 1))
    (flag,) = format_checks.check(check_context(runs=[run]))
    assert flag.severity == "warning" and f"more than {format_checks.MANY_CALLS} calls" in flag.message
    assert len(flag.evidence["calls"][run.run_path]) == format_checks.SHOWN_CALLS


def test_uploads_without_the_record_get_no_flag_and_broken_lines_are_skipped(tmp_path):
    plain = run_files(tmp_path, SPOOKY, 0)
    assert format_checks.check(check_context(runs=[plain])) == []
    (plain.folder / "format_checks.jsonl").write_text('not json\n[1]\n{"valid": true}\n')
    (flag,) = format_checks.check(check_context(runs=[plain]))
    assert flag.evidence["calls_per_run"] == {plain.run_path: 1}
