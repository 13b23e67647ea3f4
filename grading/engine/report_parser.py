"""Reading a team's own MLE-bench grading report back into report objects.

The file comes from the team, so every field is checked for presence and type and each problem is
reported with its JSON path (``competition_reports[3].score: ...``). Values are kept as claimed, even
when they contradict each other (a medal with a null score, totals that do not add up): judging the
claim against the re-grade is the caller's job, and it needs the claim as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from grading.engine import safe_json
from grading.engine.report import TOTAL_FIELDS, CompetitionReport, RunGroupReport

_FLOAT_FIELDS = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")
_BOOL_FIELDS = (
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
)


class MalformedReport(ValueError):
    """A grading report that is not valid JSON or not in MLE-bench's report format."""


def parse_grading_report(data: str | bytes | Mapping[str, Any]) -> RunGroupReport:
    """Parse a run-group report (totals + ``competition_reports``) or a single competition report.

    A file of MLE-bench's ``grade-sample`` holds one competition report; it comes back as a run group of
    one with no claimed totals. Totals, when present, must all be present and are kept as claimed.
    """
    obj = load_report_json(data) if isinstance(data, (str, bytes, bytearray)) else data
    if not isinstance(obj, Mapping):
        raise MalformedReport(f"the report must be a JSON object, got {_kind(obj)}")
    if "competition_reports" not in obj:
        if "competition_id" in obj:
            return RunGroupReport(competition_reports=(parse_competition_report(obj),))
        raise MalformedReport("the report has neither 'competition_reports' nor 'competition_id'")
    items = obj["competition_reports"]
    if not isinstance(items, list):
        raise MalformedReport(f"competition_reports: expected a list, got {_kind(items)}")
    reports = tuple(parse_competition_report(item, where=f"competition_reports[{i}]") for i, item in enumerate(items))
    return RunGroupReport(competition_reports=reports, claimed_totals=parse_totals(obj))


def parse_competition_report(obj: Any, *, where: str = "report") -> CompetitionReport:
    if not isinstance(obj, Mapping):
        raise MalformedReport(f"{where}: expected an object, got {_kind(obj)}")
    missing = [
        name
        for name in (
            "competition_id",
            "score",
            *_FLOAT_FIELDS,
            *_BOOL_FIELDS,
            "created_at",
            "submission_path",
        )
        if name not in obj
    ]
    if missing:
        raise MalformedReport(f"{where}: missing field(s) {', '.join(missing)}")

    competition_id = obj["competition_id"]
    if not isinstance(competition_id, str) or not competition_id.strip():
        raise MalformedReport(f"{where}.competition_id: expected a non-empty string, got {_show(competition_id)}")
    score = obj["score"]
    if score is not None:
        score = _number(score, f"{where}.score", "a number or null")
    medals_known = obj.get("medals_known", True)
    if not isinstance(medals_known, bool):
        raise MalformedReport(f"{where}.medals_known: expected true or false, got {_show(medals_known)}")
    # Null thresholds belong to a report of unknown medals (no leaderboard yet), which says so.
    floats = {
        name: None if obj[name] is None and not medals_known else _number(obj[name], f"{where}.{name}", "a number")
        for name in _FLOAT_FIELDS
    }
    bools: dict[str, bool] = {}
    for name in _BOOL_FIELDS:
        if not isinstance(obj[name], bool):
            raise MalformedReport(f"{where}.{name}: expected true or false, got {_show(obj[name])}")
        bools[name] = obj[name]
    created_at = obj["created_at"]
    if not isinstance(created_at, str) or not _is_iso(created_at):
        raise MalformedReport(
            f"{where}.created_at: expected an ISO date-time such as 2025-05-07T14:59:41.765720, got {_show(created_at)}"
        )
    path = obj["submission_path"]
    if not isinstance(path, str):
        raise MalformedReport(f"{where}.submission_path: expected a string, got {_show(path)}")
    reason = obj.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise MalformedReport(f"{where}.reason: expected a string or null, got {_show(reason)}")
    return CompetitionReport(
        competition_id=competition_id,
        score=score,
        gold_threshold=floats["gold_threshold"],
        silver_threshold=floats["silver_threshold"],
        bronze_threshold=floats["bronze_threshold"],
        median_threshold=floats["median_threshold"],
        any_medal=bools["any_medal"],
        gold_medal=bools["gold_medal"],
        silver_medal=bools["silver_medal"],
        bronze_medal=bools["bronze_medal"],
        above_median=bools["above_median"],
        submission_exists=bools["submission_exists"],
        valid_submission=bools["valid_submission"],
        is_lower_better=bools["is_lower_better"],
        created_at=created_at,
        submission_path=path,
        medals_known=medals_known,
        reason=reason,
    )


def load_report_json(data: str | bytes | bytearray) -> Any:
    """The report file's JSON, refused with MalformedReport when it is not JSON we can store."""
    try:
        # MLE-bench writes NaN for a NaN score (Python's json allows it), so we accept it too.
        return safe_json.loads(data, allow_nan=True, object_pairs_hook=_no_duplicate_keys)
    except safe_json.UnsafeJson as exc:
        raise MalformedReport(f"the report {exc}" if exc.path is None else str(exc)) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A duplicated key would let a file say two things at once; json.loads would silently keep the last.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise MalformedReport(f"the report repeats the key {key!r} in one object")
        seen[key] = value
    return seen


def parse_totals(obj: Mapping[str, Any]) -> dict[str, int] | None:
    present = [name for name in TOTAL_FIELDS if name in obj]
    if not present:
        return None
    missing = [name for name in TOTAL_FIELDS if name not in obj]
    if missing:
        raise MalformedReport(f"the report has some totals but not {', '.join(missing)}")
    totals = {}
    for name in TOTAL_FIELDS:
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MalformedReport(f"{name}: expected a whole number >= 0, got {_show(value)}")
        totals[name] = value
    return totals


def _number(value: Any, where: str, expected: str) -> float:
    # bool is an int in Python, but true is not a score.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedReport(f"{where}: expected {expected}, got {_show(value)}")
    try:
        return float(value)
    except OverflowError:
        raise MalformedReport(f"{where}: {_show(value)} is too large to be a number") from None


def _is_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _show(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else _kind(value)
    return text if len(text) <= 80 else text[:77] + "..."
