"""implausible_score: a score far beyond the Kaggle gold threshold, or near-perfect agreement with the answers."""

import math
from typing import Any

from grading.checks.base import FlagData
from grading.checks.context import CheckContext


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def check(context: CheckContext) -> list[FlagData]:
    margin, tolerance = context.settings.implausible_margin, context.settings.perfect_tolerance
    flags = []
    for run in context.runs:
        report = run.regraded or {}
        score = _number(report.get("score"))
        if score is None:
            continue
        facts = context.competitions.get(run.competition_id)
        gold = _number(report.get("gold_threshold", facts.gold_threshold if facts else None))
        median = _number(report.get("median_threshold", facts.median_threshold if facts else None))
        lower = report.get("is_lower_better")
        if lower is None and facts is not None:
            lower = facts.is_lower_better if facts.is_lower_better is not None else not facts.higher_is_better
        sign = -1.0 if lower else 1.0
        best = facts.leaderboard_best if facts else None
        thresholds = {
            "gold_threshold": gold,
            "median_threshold": median,
            "is_lower_better": bool(lower),
            "leaderboard_best": best,
            "margin": margin,
        }
        reason = None
        if gold is not None and median is not None and gold != median:
            limit = gold + sign * margin * abs(gold - median)
            thresholds["implausible_beyond"] = limit
            if sign * (score - limit) > 0:
                reason = f"beyond gold ({gold:g}) by more than {margin:g}× the gold-median spread (limit {limit:g})"
        perfect = 0.0 if lower else 1.0
        bounded = best is not None and (best >= 0.0 if lower else best <= 1.0)
        if (
            reason is None
            and bounded
            and best is not None
            and abs(score - perfect) <= tolerance
            and abs(best - perfect) > tolerance
        ):
            reason = f"near-perfect ({score:g}, perfect is {perfect:g}) where Kaggle's best was {best:g}"
        if reason:
            flags.append(
                FlagData(
                    code="implausible_score",
                    severity="warning",
                    key=f"{run.competition_id}/seed-{run.seed}",
                    tiers=context.tiers_of(run.competition_id),
                    message=f"{run.competition_id} seed {run.seed}: re-graded score {score:g} is {reason}.",
                    evidence={
                        "file": f"{run.run_path}/submission/submission.csv",
                        "regraded": score,
                        "claimed": (run.claimed or {}).get("score"),
                        **thresholds,
                    },
                )
            )
    return flags
