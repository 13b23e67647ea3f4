"""grader_loophole: a submission uses a known weakness of a grader (data per benchmark version).

Each loophole's data names a detector. ``empty_cells``: the metric skips empty prediction cells (HMS's KL
divergence), so blanking the classes one is unsure of scores better than it should; a submission with
empty cells in the prediction columns trips it. Blank lines are no rows (pandas, the grader, skips them).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from grading.checks.base import FlagData
from grading.checks.context import CheckContext, KnownIssue

MAX_FIELD = 1 << 20
SHOWN_ROWS = 5


def empty_cells(path: Path, *, id_column: str = "", columns: list[str] | None = None) -> dict | None:
    """Rows and columns with empty prediction cells, read in one streaming pass."""
    csv.field_size_limit(MAX_FIELD)
    rows = cells = 0
    per_column: dict[str, int] = {}
    first: list[int] = []
    with path.open("rb") as raw:
        reader = csv.reader(io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=""))
        header = next(reader, None)
        if not header:
            return None
        watched = [
            i
            for i, name in enumerate(header)
            if name != id_column and (not columns or name in columns) and (id_column or i > 0)
        ]
        for line_no, row in enumerate(reader, start=2):
            if not row:
                continue  # a blank line: pandas (the grader) skips it, so it has no cells
            rows += 1
            empty = [i for i in watched if i >= len(row) or not row[i].strip()]
            if empty:
                cells += len(empty)
                for i in empty:
                    per_column[header[i]] = per_column.get(header[i], 0) + 1
                if len(first) < SHOWN_ROWS:
                    first.append(line_no)
    if not cells:
        return None
    return {"rows": rows, "empty_cells": cells, "per_column": per_column, "first_lines": first}


DETECTORS = {"empty_cells": empty_cells}


def _detect(issue: KnownIssue, path: Path, context: CheckContext, competition: str) -> dict | None:
    detector = DETECTORS.get(str(issue.data.get("detector", "")))
    if detector is None:
        return None
    facts = context.competitions.get(competition)
    try:
        return detector(
            path,
            id_column=str(issue.data.get("id_column") or (facts.id_column if facts else "")),
            columns=list(issue.data.get("columns") or []),
        )
    except (OSError, csv.Error, UnicodeError):
        return None


def check(context: CheckContext) -> list[FlagData]:
    loopholes: dict[str, list[KnownIssue]] = {}
    for issue in context.known_issues:
        if issue.kind == "loophole":
            loopholes.setdefault(issue.competition, []).append(issue)
    flags = []
    for run in context.runs:
        if run.submission is None or run.competition_id not in loopholes:
            continue
        for issue in loopholes[run.competition_id]:
            found = _detect(issue, run.submission, context, run.competition_id)
            if not found:
                continue
            flags.append(
                FlagData(
                    code="grader_loophole",
                    severity="blocking",
                    key=f"{run.competition_id}/seed-{run.seed}",
                    tiers=context.tiers_of(run.competition_id),
                    message=f"{run.competition_id} seed {run.seed}: {found['empty_cells']} empty prediction cell(s) "
                    f"in {run.run_path}/submission/submission.csv; {issue.description}",
                    evidence={
                        "file": f"{run.run_path}/submission/submission.csv",
                        "known_issue": issue.description,
                        "detector": issue.data.get("detector"),
                        **found,
                        "regraded": (run.regraded or {}).get("score"),
                        "claimed": (run.claimed or {}).get("score"),
                    },
                )
            )
    return flags
