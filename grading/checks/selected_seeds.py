"""selected_seeds: the bundle holds fewer runs than its run group says were made.

MLE-bench's ``metadata.json`` lists every run of a run group, keyed by the run folder's name. A run it lists
that the bundle does not hold is a run made and not reported: upload ten seeds' worth of runs, keep the best
three, and the mean is the best of ten, not of three (issue 30's "best-3-of-10"). Blocking: a maintainer sees
which runs are missing and decides (a run lost to a crash is a failed run, and belongs in the bundle as one).

A team that also rewrites metadata.json leaves nothing in its files to see; only a pre-registered number of
seeds (see the registrations) tells that case apart, so this check is the careless half of the family.
"""

import json
from pathlib import Path

from grading.bundles.layout import MAX_METADATA_BYTES
from grading.checks.base import FlagData
from grading.checks.context import CheckContext

SHOWN = 5  # missing run ids named in the message; the evidence lists all


def listed_runs(group: Path) -> set[str] | None:
    """The run ids a run group's metadata.json lists, or None without a readable one (validation read it)."""
    path = group / "metadata.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_METADATA_BYTES:
            return None
        runs = json.loads(path.read_bytes()).get("runs")
    except (OSError, ValueError, AttributeError):
        return None
    return set(runs) if isinstance(runs, dict) else None


def check(context: CheckContext) -> list[FlagData]:
    groups: dict[Path, set[str]] = {}
    for run in context.runs:
        if run.folder is not None:
            groups.setdefault(run.folder.parent, set()).add(run.folder.name)
    flags = []
    for group, held in sorted(groups.items()):
        listed = listed_runs(group)
        if not listed:
            continue
        missing = sorted(listed - held)
        if not missing:
            continue
        per_competition: dict[str, int] = {}
        for run_id in missing:
            competition_id = run_id.rpartition("_")[0] or run_id
            per_competition[competition_id] = per_competition.get(competition_id, 0) + 1
        shown = ", ".join(missing[:SHOWN]) + (f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else "")
        flags.append(
            FlagData(
                code="selected_seeds",
                severity="blocking",
                key=f"runs/{group.name}",
                tiers=context.tiers_of_all(per_competition),
                message=f"runs/{group.name}/metadata.json lists {len(listed)} runs but the bundle holds "
                f"{len(listed) - len(missing)} of them; {len(missing)} runs were made and not uploaded ({shown}). "
                "Every run made counts: upload them all (a failed run as a failed run), or say in review why "
                "they are missing.",
                evidence={
                    "run_group": group.name,
                    "listed": len(listed),
                    "missing_runs": missing,
                    "missing_per_competition": per_competition,
                },
            )
        )
    return flags
