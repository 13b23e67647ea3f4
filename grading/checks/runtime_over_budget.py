"""runtime_over_budget: logs show a run longer than the declared runtime, or the declared runtime is above
the board's standard (24 h)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from grading.checks.base import FlagData
from grading.checks.comparability import REFERENCE_RUNTIME_HOURS
from grading.checks.context import CheckContext

PROBE = 65536
_STAMP = re.compile(rb"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")


def _stamps(data: bytes) -> list[datetime]:
    found = []
    for match in _STAMP.finditer(data):
        try:
            year, month, day, hour, minute, second = (int(g) for g in match.groups())
            found.append(datetime(year, month, day, hour, minute, second))
        except ValueError:
            continue
    return found


def log_span(path: Path) -> tuple[datetime, datetime] | None:
    """The first time stamp of the first 64 KiB and the last of the last 64 KiB (no more is read)."""
    try:
        with path.open("rb") as f:
            head = f.read(PROBE)
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - PROBE))
            tail = f.read(PROBE)
    except OSError:
        return None
    first, last = _stamps(head), _stamps(tail)
    if not first or not last:
        return None
    return first[0], last[-1]


def check(context: CheckContext) -> list[FlagData]:
    manifest = context.manifest
    declared = manifest.runtime_hours if manifest else None
    budget = declared if declared is not None else REFERENCE_RUNTIME_HOURS
    flags = []
    if declared is not None and declared > REFERENCE_RUNTIME_HOURS:
        flags.append(
            FlagData(
                code="runtime_over_budget",
                severity="warning",
                key="manifest",
                message=f"The manifest declares {declared:g} h per run, above the board's standard of "
                f"{REFERENCE_RUNTIME_HOURS:g} h.",
                evidence={
                    "file": "manifest.json",
                    "runtime_hours": declared,
                    "reference_hours": REFERENCE_RUNTIME_HOURS,
                },
            )
        )
    limit = budget * (1 + context.settings.runtime_tolerance)
    over: list[dict[str, str | float]] = []
    for run in context.runs:
        if run.folder is None:
            continue
        span = log_span(run.folder / "run.log")
        if span is None:
            continue
        hours = (span[1] - span[0]).total_seconds() / 3600
        if hours > limit:
            over.append(
                {
                    "run": f"{run.run_path}/run.log",
                    "competition": run.competition_id,
                    "seed": run.seed,
                    "first": span[0].isoformat(),
                    "last": span[1].isoformat(),
                    "hours": round(hours, 2),
                }
            )
    if over:
        over.sort(key=lambda r: -float(r["hours"]))
        flags.append(
            FlagData(
                code="runtime_over_budget",
                severity="warning",
                key="logs",
                tiers=context.tiers_of_all(str(r["competition"]) for r in over),
                message=f"{len(over)} run(s) log more than the {budget:g} h "
                f"{'declared' if declared is not None else 'standard'} "
                f"(tolerance {context.settings.runtime_tolerance:.0%}), longest {over[0]['hours']} h "
                f"({over[0]['run']}).",
                evidence={
                    "budget_hours": budget,
                    "limit_hours": round(limit, 3),
                    "total": len(over),
                    "runs": over[:10],
                },
            )
        )
    return flags
