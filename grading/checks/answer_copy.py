"""answer_copy: a submission that reproduces the private answers beyond what an honest model reaches (blocking).

MLE-bench's answers are not secret to a determined team (``mlebench prepare`` derives them from Kaggle's
data), so a copy, rounded, noised, with a few rows changed or its columns and rows reordered, is the obvious
way to a medal. The re-grade measures each scored file against the answers (grading.engine.agreement: the
chance-corrected share of answer rows the file reproduces, and its 99.9 % lower bound). The run is held for
review when that lower bound reaches ``answer_copy_agreement`` (90 %): no honest model of a competition whose
best Kaggle score leaves room to the perfect one is that sure to reproduce nine rows in ten. Where Kaggle's
best is itself within ``SATURATED`` of the perfect score of a bounded metric, honest models agree that much
too, so the run must also score beyond that best. The evidence is counts and the scores only.
"""

from __future__ import annotations

import math
from typing import Any, Final

from grading.checks.base import FlagData
from grading.checks.context import CheckContext, CompetitionFacts, RunFiles

SATURATED: Final = 0.02  # Kaggle's best within this of the perfect score of a metric bounded by 0 and 1


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _lower_is_better(run: RunFiles, facts: CompetitionFacts | None) -> bool:
    lower = (run.regraded or {}).get("is_lower_better")
    if lower is None and facts is not None:
        lower = facts.is_lower_better if facts.is_lower_better is not None else not facts.higher_is_better
    return bool(lower)


def saturated(best: float | None, *, lower: bool) -> bool:
    """Kaggle's best is (nearly) perfect on a metric bounded by 0 and 1: honest models agree that much too."""
    if best is None:
        return False
    perfect = 0.0 if lower else 1.0
    bounded = best >= 0.0 if lower else best <= 1.0
    return bounded and abs(best - perfect) <= SATURATED


def beyond(score: float | None, best: float | None, *, lower: bool) -> bool:
    if score is None or best is None:
        return False
    return score < best if lower else score > best


def run_flag(context: CheckContext, run: RunFiles) -> FlagData | None:
    measured = run.agreement or {}
    if not measured.get("measured"):
        return None
    limit = context.settings.answer_copy_agreement
    low = float(measured.get("agreement_low", 0.0))
    if low < limit:
        return None
    facts = context.competitions.get(run.competition_id)
    lower = _lower_is_better(run, facts)
    report = run.regraded or {}
    score = _number(report.get("score"))
    best = _number(facts.leaderboard_best) if facts else None
    gold = _number(report.get("gold_threshold", facts.gold_threshold if facts else None))
    is_saturated = saturated(best, lower=lower)
    is_beyond = beyond(score, best, lower=lower)
    if is_saturated and not is_beyond:
        return None
    rows, agree, exact = measured.get("rows", 0), measured.get("rows_agree", 0), measured.get("rows_exact", 0)
    against = f"Kaggle's best {best:g}" if best is not None else "no Kaggle leaderboard"
    if gold is not None:
        against += f", gold {gold:g}"
    shown = f"{score:g}" if score is not None else "none"
    return FlagData(
        code="answer_copy",
        severity="blocking",
        key=f"{run.competition_id}/seed-{run.seed}",
        tiers=context.tiers_of(run.competition_id),
        message=f"{run.competition_id} seed {run.seed}: the file reproduces the private answers: {agree} of {rows} "
        f"rows agree ({exact} exactly), at least {low:.1%} beyond chance (limit {limit:.0%}); re-graded score "
        f"{shown} against {against}.",
        evidence={
            "file": f"{run.run_path}/submission/submission.csv",
            "rows": rows,
            "rows_matched_by_id": measured.get("rows_matched", 0),
            "rows_agree": agree,
            "rows_exact": exact,
            "share_agree": measured.get("share_agree"),
            "chance": measured.get("chance"),
            "agreement": measured.get("agreement"),
            "agreement_low": low,
            "limit": limit,
            "columns": measured.get("columns"),
            "column_kinds": measured.get("column_kinds"),
            "tolerance": measured.get("tolerance"),
            "regraded": score,
            "leaderboard_best": best,
            "gold_threshold": gold,
            "is_lower_better": lower,
            "beyond_best": is_beyond,
            "best_is_near_perfect": is_saturated,
        },
    )


def check(context: CheckContext) -> list[FlagData]:
    return [flag for run in context.runs if (flag := run_flag(context, run)) is not None]
