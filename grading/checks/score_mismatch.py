"""score_mismatch: the team's claimed score or medal differs from the server's re-grade."""

import math
from collections.abc import Callable
from typing import Any

from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext

MEDAL_FIELDS = ("gold_medal", "silver_medal", "bronze_medal", "above_median", "valid_submission")
# What can still be compared when a competition has no leaderboard here yet (the re-grade says
# "medals_known": false): the score and validity, never the medals.
UNKNOWN_MEDAL_FIELDS = ("gold_medal", "silver_medal", "bronze_medal", "above_median")


def _same_score(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(float(a) - float(b)) <= 1e-9


def _medals_unknown(run: GradedRun) -> bool:
    return run.regraded.get("medals_known") is False


def score_mismatches(runs: list[GradedRun], *, tiers_of: Callable[[str], list[str]] | None = None) -> list[FlagData]:
    """score_mismatch for each run whose claim differs from the re-grade, scoped to the tiers of its
    competition (``tiers_of``; none given: the whole entry). Where the re-grade's medals are
    unknown (no leaderboard here yet) only the score and validity are compared, and one info note per
    competition says that its medals are unchecked and count as none in the aggregates."""
    flags = _unknown_medal_notes(runs)
    for run in runs:
        if run.claimed is None:
            continue
        differences = {}
        if not _same_score(run.claimed.get("score"), run.regraded.get("score")):
            differences["score"] = {"claimed": run.claimed.get("score"), "regraded": run.regraded.get("score")}
        unknown = UNKNOWN_MEDAL_FIELDS if _medals_unknown(run) else ()
        for name in MEDAL_FIELDS:
            if name in unknown:
                continue
            if name in run.claimed and bool(run.claimed[name]) != bool(run.regraded.get(name)):
                differences[name] = {"claimed": run.claimed[name], "regraded": run.regraded.get(name)}
        if differences:
            described = "; ".join(
                f"{k} claimed {v['claimed']!r}, re-graded {v['regraded']!r}" for k, v in differences.items()
            )
            flags.append(
                FlagData(
                    code="score_mismatch",
                    severity="blocking",
                    key=f"{run.competition_id}/seed-{run.seed}",
                    tiers=tiers_of(run.competition_id) if tiers_of else [],
                    message=f"{run.competition_id} seed {run.seed}: {described}.",
                    evidence={"file": run.run_path, "differences": differences},
                )
            )
    return flags


def _unknown_medal_notes(runs: list[GradedRun]) -> list[FlagData]:
    by_competition: dict[str, list[GradedRun]] = {}
    for run in runs:
        if _medals_unknown(run):
            by_competition.setdefault(run.competition_id, []).append(run)
    notes = []
    for competition_id, unknown in sorted(by_competition.items()):
        seeds = sorted(run.seed for run in unknown)
        claimed = {
            f"seed {run.seed}": [name for name in UNKNOWN_MEDAL_FIELDS if (run.claimed or {}).get(name)]
            for run in unknown
            if any((run.claimed or {}).get(name) for name in UNKNOWN_MEDAL_FIELDS)
        }
        said = "; ".join(f"{seed}: {', '.join(names)}" for seed, names in claimed.items())
        notes.append(
            FlagData(
                code="medals_unknown",
                severity="info",
                key=competition_id,
                message=f"{competition_id} has no leaderboard on this portal yet, so the medals of its {len(unknown)} "
                "run(s) are unknown: their scores and validity are re-graded, their medals count as none in the "
                "aggregates until a leaderboard is imported and the submission is re-graded"
                + (f"; the team's claimed {said} could not be checked." if said else "."),
                evidence={"seeds": seeds, "claimed_unchecked": claimed},
            )
        )
    return notes


def check(context: CheckContext) -> list[FlagData]:
    return score_mismatches(context.graded, tiers_of=context.tiers_of)
