"""A small builder of a fake MLE-bench checkout: runs/<run_group>/<report>, runs/run_group_experiments.csv and
an ENTRIES.csv. Report entries are MLE-bench's real ones (the shipped example report), with the fields a test
cares about changed."""

import csv
import hashlib
import json
from functools import cache
from pathlib import Path

from grading.engine.report import TOTAL_FIELDS

DATA = Path(__file__).resolve().parents[2] / "competitions" / "data" / "mlebench-v1"
EXAMPLE_REPORT = DATA / "grading_reports" / "example_run_group_grading_report.json"
REPORT_NAME = "2024-09-19T20-07-15-GMT_grading_report.json"
ENTRIES_HEADER = ["experiment_id", "agent", "llms", "date", "runtime_hours", "source_url", "notes"]


@cache
def _example_entries() -> tuple[dict, ...]:
    return tuple(json.loads(EXAMPLE_REPORT.read_text())["competition_reports"])


def split(name: str) -> list[str]:
    return (DATA / "splits" / f"{name}.txt").read_text().split()


def report_entry(
    competition_id: str,
    *,
    run_group: str,
    run_id: str | None = None,
    medal: str | None = None,
    valid: bool = True,
    score: float = 0.5,
) -> dict:
    """One competition report as MLE-bench writes it, of a run made and submitted; `medal` is gold, silver,
    bronze or None."""
    template = _example_entries()[1]  # a valid submission
    if run_id is None:
        digest = hashlib.sha256(f"{run_group}/{competition_id}".encode()).hexdigest()
        run_id = f"{competition_id}_{digest[:12]}"
    entry = {
        **template,
        "competition_id": competition_id,
        "score": score if valid else None,
        "any_medal": medal is not None,
        "above_median": medal is not None,
        "submission_exists": True,
        "valid_submission": valid,
        "submission_path": f"runs/{run_group}/{run_id}/submission/submission.csv",
    }
    for name in ("gold", "silver", "bronze"):
        entry[f"{name}_medal"] = medal == name
    return entry


def no_submission_entry(competition_id: str) -> dict:
    template = _example_entries()[0]  # MLE-bench's report of a run that made no submission
    return {**template, "competition_id": competition_id, "submission_path": "None"}


def write_report(checkout: Path, run_group: str, entries: list[dict], *, name: str = REPORT_NAME) -> Path:
    totals = dict.fromkeys(TOTAL_FIELDS, 0)
    totals["total_runs"] = len(entries)
    path = checkout / "runs" / run_group / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**totals, "competition_reports": entries}, indent=2))
    return path


def write_run_groups(checkout: Path, rows: list[tuple[str, str]]) -> None:
    path = checkout / "runs" / "run_group_experiments.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["experiment_id,run_group", *(f"{experiment},{group}" for experiment, group in rows)]
    path.write_text("\n".join(lines) + "\n")


def write_entries(path: Path, rows: list[list[str]], *, header: list[str] = ENTRIES_HEADER) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path
