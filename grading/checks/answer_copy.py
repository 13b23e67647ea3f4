"""answer_copy: a submission that reproduces the private answers beyond what an honest model reaches (blocking).

MLE-bench's answers are not secret to a determined team (``mlebench prepare`` derives them from Kaggle's
data), so a copy, rounded, noised, smoothed, pushed through an order-keeping map, mixed with honest rows or
spread over a few runs is the obvious way to a medal. The re-grade measures each scored file against the
answers (grading.engine.agreement: agreement and ``statistics``, counts only) and this check judges them with
statistics an honest model cannot reach, each against an honest reference and at a stated confidence
(``answer_copy_confidence``, 99.9 %):

* **exact** (per run, and pooled over the entry): the share of cells on a continuous target equal to the answer
  to the bit, beyond chance, and on 0/1 targets of a file that writes probabilities, the balanced share (the
  mean over both classes) of cells written as the answer's very 0 or 1, less the other class's cells written so.
  Honest models are close, never equal: the Wilson lower bound must stay below ``answer_copy_exact`` (2 %).
* **hard labels never wrong** (per run): a file of 0/1 only, on 0/1 answers, with no cell wrong.
* **never wrong** (per competition, the entry's seeds pooled): the file's most probable side is never wrong
  while its own probabilities expect errors. An honest model errs at least ``answer_copy_error_ratio`` (half)
  as often as it says; with ``e`` errors expected, none happens with probability ``exp(-ratio * e)``, held
  when that is below 1 - confidence. Smoothed one-hot copies and order-keeping maps of the answers are never
  wrong whatever probabilities they show. Where Kaggle's best is within ``SATURATED`` of a perfect bounded
  score, honest (label-smoothed) models can be never wrong too, and the runs' mean score must also beat it.
* **separation** (per competition): a ROC AUC (the run's own metric) beyond Kaggle's best by more than
  ``z`` Hanley-McNeil standard errors at that best.
* **agreement** (per run, the earlier rule): every row but at most 1 - confidence of them agrees with the
  answers, the chance-corrected lower bound at ``answer_copy_agreement``; where Kaggle's best is within
  ``SATURATED`` of a perfect bounded score, the run must also beat it.

Flags: one per run (``<competition>/seed-N``), per competition (``<competition>``) and one for the entry
(``entry``) naming the runs behind it. The evidence is counts, shares and scores: never an answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Final

from grading.checks.base import FlagData
from grading.checks.context import CheckContext, CompetitionFacts, RunFiles
from grading.engine.agreement import wilson_low

SATURATED: Final = 0.02  # Kaggle's best within this of the perfect score of a metric bounded by 0 and 1
AUC_IS_THE_SCORE: Final = 1e-3  # the measured AUC is the run's metric when the re-graded score is this close
STATISTICS: Final = ("agreement", "exact", "exact 0/1", "hard labels", "never wrong", "separation")
MIN_HARD_CELLS: Final = 20  # a file of hard 0/1 labels is judged from this many scored cells


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


def z_of(confidence: float) -> float:
    """The one-sided normal quantile of ``confidence`` (3.09 for 99.9 %)."""
    return NormalDist().inv_cdf(min(max(confidence, 0.5), 1 - 1e-12))


# --- the statistics, over the measure's counts (framework-free, tested alone) ------------------------------


@dataclass(frozen=True)
class Counts:
    """One file's (or several files' summed) statistics, as grading.engine.agreement measured them."""

    continuous_cells: int = 0
    continuous_exact: int = 0
    continuous_by_chance: int = 0
    class_cells: tuple[int, int] = (0, 0)
    class_exact: tuple[int, int] = (0, 0)
    class_by_chance: tuple[int, int] = (0, 0)
    class_exact_wrong: tuple[int, int] = (0, 0)
    wrong: int = 0
    expected_wrong: float = 0.0
    fractional: int = 0
    auc: tuple[tuple[float, int, int], ...] = ()

    @classmethod
    def of(cls, measured: Mapping[str, Any] | None) -> Counts:
        stats = (measured or {}).get("statistics") if (measured or {}).get("measured") else None
        if not isinstance(stats, Mapping):
            return cls()
        cont, classes = stats.get("continuous") or {}, stats.get("classes") or {}

        def pair(name: str) -> tuple[int, int]:
            value = classes.get(name) or (0, 0)
            return (int(value[0]), int(value[1]))

        return cls(
            continuous_cells=int(cont.get("cells", 0)),
            continuous_exact=int(cont.get("exact", 0)),
            continuous_by_chance=int(cont.get("exact_by_chance", 0)),
            class_cells=pair("cells"),
            class_exact=pair("exact"),
            class_by_chance=pair("exact_by_chance"),
            class_exact_wrong=pair("exact_wrong"),
            wrong=int(classes.get("wrong", 0)),
            expected_wrong=float(classes.get("expected_wrong", 0.0)),
            fractional=int(classes.get("fractional", 0)),
            auc=tuple((float(a), int(p), int(n)) for a, p, n in classes.get("auc") or ()),
        )

    def __add__(self, other: Counts) -> Counts:
        def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
            return (a[0] + b[0], a[1] + b[1])

        return Counts(
            continuous_cells=self.continuous_cells + other.continuous_cells,
            continuous_exact=self.continuous_exact + other.continuous_exact,
            continuous_by_chance=self.continuous_by_chance + other.continuous_by_chance,
            class_cells=add(self.class_cells, other.class_cells),
            class_exact=add(self.class_exact, other.class_exact),
            class_by_chance=add(self.class_by_chance, other.class_by_chance),
            class_exact_wrong=add(self.class_exact_wrong, other.class_exact_wrong),
            wrong=self.wrong + other.wrong,
            expected_wrong=self.expected_wrong + other.expected_wrong,
            fractional=self.fractional + other.fractional,
            auc=self.auc + other.auc,
        )

    @property
    def scored_class_cells(self) -> int:
        return self.class_cells[0] + self.class_cells[1]


def exact_continuous(counts: Counts, *, z: float) -> tuple[float, float] | None:
    """(share, lower bound) of cells on continuous targets equal to the answer beyond chance; None without any."""
    n = counts.continuous_cells
    if not n:
        return None
    chance = counts.continuous_by_chance / n
    return counts.continuous_exact / n - chance, wilson_low(counts.continuous_exact, n, z=z) - chance


def exact_balanced(counts: Counts, *, z: float) -> tuple[float, float] | None:
    """(share, lower bound) of 0/1 cells written as the answer's very 0 or 1, for a file that writes probabilities;
    None otherwise. Per class: the share of its cells written as its exact value, less the share of the other
    class's cells written as that value too (what writing it without knowing the answer gives); the two classes
    averaged, so a rare class counts as much as the common one."""
    if not counts.fractional or not all(counts.class_cells):
        return None
    shares, lows = [], []
    for label in (0, 1):
        n, others = counts.class_cells[label], counts.class_cells[1 - label]
        wrong = counts.class_exact_wrong[label] / others
        shares.append(counts.class_exact[label] / n - wrong)
        lows.append(wilson_low(counts.class_exact[label], n, z=z) - wrong)
    return sum(shares) / 2, sum(lows) / 2


def hard_never_wrong(counts: Counts) -> bool:
    """A file of 0/1 only on 0/1 answers of both classes, not one cell wrong."""
    return (
        not counts.fractional
        and all(counts.class_cells)
        and counts.scored_class_cells >= MIN_HARD_CELLS
        and counts.wrong == 0
    )


def never_wrong_chance(counts: Counts, *, error_ratio: float) -> float | None:
    """For a file that writes probabilities and is never wrong: the chance an honest model, erring at least
    ``error_ratio`` as often as its probabilities say, is never wrong either (Poisson); None otherwise."""
    if counts.wrong or not counts.fractional or counts.expected_wrong <= 0:
        return None
    return math.exp(-error_ratio * counts.expected_wrong)


def hanley_mcneil_se(auc: float, positives: int, negatives: int) -> float:
    """The standard error of a ROC AUC of ``auc`` over these class counts (Hanley and McNeil, 1982)."""
    if positives <= 0 or negatives <= 0:
        return math.inf
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    variance = auc * (1 - auc) + (positives - 1) * (q1 - auc * auc) + (negatives - 1) * (q2 - auc * auc)
    return math.sqrt(max(variance, 0.0) / (positives * negatives))


def separation(aucs: Sequence[tuple[float, int, int]], *, runs: int, best: float) -> tuple[float, float] | None:
    """(mean AUC over the columns of ``runs`` files, z against Kaggle's ``best``): the standard error is a
    column mean's at ``best`` (one file's, never shrunk for seeds that share the rows); None without columns."""
    if not aucs or runs <= 0 or best >= 1.0:
        return None
    mean = sum(a for a, _, _ in aucs) / len(aucs)
    columns = len(aucs) / runs
    per_file = aucs[: max(1, round(columns))]
    se = math.sqrt(sum(hanley_mcneil_se(best, p, n) ** 2 for _, p, n in per_file)) / len(per_file)
    if not se or not math.isfinite(se):
        return None
    return mean, (mean - best) / se


def auc_scored(runs: Sequence[RunFiles], facts: CompetitionFacts | None) -> list[RunFiles]:
    """The runs whose re-graded score is the ROC AUC measured (the mean over its columns): AUC competitions."""
    chosen = []
    for run in runs:
        aucs, score = Counts.of(run.agreement).auc, _number((run.regraded or {}).get("score"))
        if not aucs or score is None or _lower_is_better(run, facts):
            continue
        if abs(sum(a for a, _, _ in aucs) / len(aucs) - score) <= AUC_IS_THE_SCORE:
            chosen.append(run)
    return chosen


def fired(found: Sequence[str]) -> list[str]:
    """The names of the statistics behind these findings ("exact", "never wrong", ...)."""
    return [finding.split(":", 1)[0] for finding in found]


def margins(context: CheckContext) -> dict[str, float]:
    """How close the entry comes to each statistic's limit, held or not (benchmarks/fairness_corpus.py prints
    the honest corpus's closest): the largest exact lower bounds, the smallest never-wrong chance, the largest
    AUC z."""
    limit, ratio, _, z = _settings(context)
    out: dict[str, float] = {}

    def keep(name: str, value: float | None, *, larger: bool = True) -> None:
        if value is None:
            return
        if name not in out or (value > out[name] if larger else value < out[name]):
            out[name] = value

    by_competition: dict[str, list[RunFiles]] = {}
    for run in context.runs:
        if (run.agreement or {}).get("measured"):
            by_competition.setdefault(run.competition_id, []).append(run)
            counts = Counts.of(run.agreement)
            keep("exact_low", (exact_continuous(counts, z=z) or (None, None))[1])
            keep("exact_01_low", (exact_balanced(counts, z=z) or (None, None))[1])
    for cid, runs in by_competition.items():
        counts = sum((Counts.of(run.agreement) for run in runs), Counts())
        if counts.fractional and counts.expected_wrong > 0:
            # The chance an honest model would be as rarely wrong: its errors' share of the forecast.
            keep("error_share_of_forecast", counts.wrong / counts.expected_wrong, larger=False)
        facts = context.competitions.get(cid)
        best = _number(facts.leaderboard_best) if facts else None
        scored = auc_scored(runs, facts)
        aucs = sum((Counts.of(run.agreement).auc for run in scored), ())
        if best is not None and aucs:
            separated = separation(aucs, runs=len(scored), best=best)
            keep("auc_z", separated[1] if separated else None)
    return out


# --- the flags ----------------------------------------------------------------------------------------


def _settings(context: CheckContext) -> tuple[float, float, float, float]:
    s = context.settings
    return s.answer_copy_exact, s.answer_copy_error_ratio, s.answer_copy_confidence, z_of(s.answer_copy_confidence)


def _against(best: float | None, gold: float | None) -> str:
    text = f"Kaggle's best {best:g}" if best is not None else "no Kaggle leaderboard"
    return text + (f", gold {gold:g}" if gold is not None else "")


def _exact_findings(counts: Counts, *, limit: float, z: float) -> tuple[list[str], dict[str, Any]]:
    """What the exact statistics find (messages, each starting with its statistic's name) and their evidence."""
    found: list[str] = []
    evidence: dict[str, Any] = {}
    cont = exact_continuous(counts, z=z)
    if cont is not None:
        evidence["exact_continuous"] = {
            "cells": counts.continuous_cells,
            "exact": counts.continuous_exact,
            "exact_by_chance": counts.continuous_by_chance,
            "share": round(cont[0], 4),
            "low": round(cont[1], 4),
            "limit": limit,
        }
        if cont[1] > limit:
            found.append(
                f"exact: {counts.continuous_exact} of {counts.continuous_cells} cells on a continuous target equal the "
                f"answer exactly ({counts.continuous_by_chance} by chance): at least {cont[1]:.1%} beyond chance, "
                f"where an honest model stays under {limit:.0%}"
            )
    balanced = exact_balanced(counts, z=z)
    if counts.scored_class_cells:
        evidence["exact_classes"] = {
            "cells_0": counts.class_cells[0],
            "cells_1": counts.class_cells[1],
            "exact_0": counts.class_exact[0],
            "exact_1": counts.class_exact[1],
            "exact_wrong_0": counts.class_exact_wrong[0],
            "exact_wrong_1": counts.class_exact_wrong[1],
            "fractional": counts.fractional,
            "wrong": counts.wrong,
            "limit": limit,
            **({"share": round(balanced[0], 4), "low": round(balanced[1], 4)} if balanced else {}),
        }
    if balanced is not None and balanced[1] > limit:
        found.append(
            f"exact 0/1: the file writes probabilities, yet {counts.class_exact[1]} of {counts.class_cells[1]} "
            f"cells of class 1 and {counts.class_exact[0]} of {counts.class_cells[0]} of class 0 are the answer's "
            f"very 1 or 0 ({sum(counts.class_exact_wrong)} cells the other class's): balanced, at least "
            f"{balanced[1]:.1%} beyond writing them blind, where an honest model stays under {limit:.0%}"
        )
    if hard_never_wrong(counts):
        found.append(
            f"hard labels: 0/1 on all {counts.scored_class_cells} scored cells ({counts.class_cells[1]} of class 1), "
            "not one wrong: the answers themselves"
        )
    return found, evidence


def _agreement_finding(context: CheckContext, run: RunFiles) -> tuple[str | None, dict[str, Any]]:
    measured = run.agreement or {}
    limit = context.settings.answer_copy_agreement
    confidence = context.settings.answer_copy_confidence
    low = float(measured.get("agreement_low", 0.0))
    rows, agree = int(measured.get("rows", 0)), int(measured.get("rows_agree", 0))
    facts = context.competitions.get(run.competition_id)
    lower = _lower_is_better(run, facts)
    score = _number((run.regraded or {}).get("score"))
    best = _number(facts.leaderboard_best) if facts else None
    is_saturated, is_beyond = saturated(best, lower=lower), beyond(score, best, lower=lower)
    evidence = {
        "agreement_low": low,
        "limit": limit,
        "beyond_best": is_beyond,
        "best_is_near_perfect": is_saturated,
    }
    # An honest strong model agrees on nearly every row of a label target; a copy on all but a few in a thousand.
    disagreeing = rows - agree
    if low < limit or disagreeing > (1 - confidence) * rows or (is_saturated and not is_beyond):
        return None, evidence
    return (
        f"agreement: {agree} of {rows} rows agree with the answers ({disagreeing} do not), at least {low:.1%} "
        f"beyond chance (limit {limit:.0%})"
    ), evidence


def run_flag(context: CheckContext, run: RunFiles) -> FlagData | None:
    measured = run.agreement or {}
    if not measured.get("measured"):
        return None
    limit, _, _, z = _settings(context)
    counts = Counts.of(measured)
    found, stats = _exact_findings(counts, limit=limit, z=z)
    agreement_found, agreement_evidence = _agreement_finding(context, run)
    if agreement_found:
        found.insert(0, agreement_found)
    if not found:
        return None
    facts = context.competitions.get(run.competition_id)
    lower = _lower_is_better(run, facts)
    report = run.regraded or {}
    score = _number(report.get("score"))
    best = _number(facts.leaderboard_best) if facts else None
    gold = _number(report.get("gold_threshold", facts.gold_threshold if facts else None))
    rows, agree, exact = measured.get("rows", 0), measured.get("rows_agree", 0), measured.get("rows_exact", 0)
    shown = f"{score:g}" if score is not None else "none"
    return FlagData(
        code="answer_copy",
        severity="blocking",
        key=run.key,
        tiers=context.tiers_of(run.competition_id),
        message=f"{run.competition_id} seed {run.seed}: the file reproduces the private answers: "
        + "; ".join(found)
        + f". {agree} of {rows} rows agree ({exact} exactly); re-graded score {shown} against "
        f"{_against(best, gold)}.",
        evidence={
            "file": f"{run.run_path}/submission/submission.csv",
            "rows": rows,
            "rows_matched_by_id": measured.get("rows_matched", 0),
            "rows_agree": agree,
            "rows_exact": exact,
            "share_agree": measured.get("share_agree"),
            "chance": measured.get("chance"),
            "agreement": measured.get("agreement"),
            **agreement_evidence,
            "columns": measured.get("columns"),
            "column_kinds": measured.get("column_kinds"),
            "tolerance": measured.get("tolerance"),
            "regraded": score,
            "leaderboard_best": best,
            "gold_threshold": gold,
            "is_lower_better": lower,
            "statistics": fired(found),
            **stats,
        },
    )


def competition_flag(context: CheckContext, cid: str, runs: Sequence[RunFiles]) -> FlagData | None:
    """The competition's runs pooled: never wrong against their own probabilities, AUC beyond Kaggle's best."""
    _, ratio, confidence, z = _settings(context)
    measured = [run for run in runs if (run.agreement or {}).get("measured")]
    if not measured:
        return None
    counts = sum((Counts.of(run.agreement) for run in measured), Counts())
    facts = context.competitions.get(cid)
    best = _number(facts.leaderboard_best) if facts else None
    found: list[str] = []
    evidence: dict[str, Any] = {
        "runs": len(measured),
        "seeds": sorted(run.seed for run in measured),
        "cells": counts.scored_class_cells,
        "wrong": counts.wrong,
        "expected_wrong": round(counts.expected_wrong, 2),
        "error_ratio": ratio,
        "confidence": confidence,
        "leaderboard_best": best,
    }
    chance = never_wrong_chance(counts, error_ratio=ratio)
    lower = _lower_is_better(measured[0], facts)
    scores = [score for run in measured if (score := _number((run.regraded or {}).get("score"))) is not None]
    mean_score = sum(scores) / len(scores) if scores else None
    # Where Kaggle's best is (nearly) perfect, an honest model can be never wrong too: the files must beat it.
    room = not saturated(best, lower=lower) or beyond(mean_score, best, lower=lower)
    if chance is not None:
        evidence.update(
            {
                "honest_never_wrong_chance": chance,
                "best_is_near_perfect": saturated(best, lower=lower),
                "score": mean_score,
            }
        )
        if chance < 1 - confidence and room:
            found.append(
                f"never wrong: the most probable side is never wrong on {counts.scored_class_cells} cells where the "
                f"file's own probabilities expect {counts.expected_wrong:.1f} errors; an honest model erring at least "
                f"{ratio:.0%} as often as it says would be never wrong with probability {chance:.1e}"
            )
    auc_runs = auc_scored(measured, facts)
    if best is not None and auc_runs:
        aucs = sum((Counts.of(run.agreement).auc for run in auc_runs), ())
        separated = separation(aucs, runs=len(auc_runs), best=best)
        if separated is not None:
            mean, zed = separated
            evidence.update({"auc": round(mean, 5), "auc_z": round(zed, 2), "z_limit": round(z, 2)})
            if zed >= z:
                found.append(
                    f"separation: ROC AUC {mean:.4f} over {len(auc_runs)} run(s), {zed:.1f} Hanley-McNeil standard "
                    f"errors beyond Kaggle's best {best:g} (limit {z:.2f}): separation beyond any Kaggle team"
                )
    if not found:
        return None
    return FlagData(
        code="answer_copy",
        severity="blocking",
        key=cid,
        tiers=context.tiers_of(cid),
        message=f"{cid}, seeds {', '.join(str(s) for s in evidence['seeds'])}: the files reproduce the private "
        f"answers: " + "; ".join(found) + ".",
        evidence={**evidence, "statistics": fired(found)},
    )


def entry_flag(context: CheckContext, held: Sequence[FlagData]) -> FlagData | None:
    """The entry's runs pooled (a little copied in every run), and the runs and competitions held above."""
    limit, _, _, z = _settings(context)
    measured = [run for run in context.runs if (run.agreement or {}).get("measured")]
    counts = sum((Counts.of(run.agreement) for run in measured), Counts())
    found, stats = _exact_findings(counts, limit=limit, z=z)
    found = [f for f in found if not f.startswith("hard labels")]  # a statement about one file
    behind = sorted(flag.key for flag in held)
    if not found and not behind:
        return None
    parts = [f"pooled over its {len(measured)} measured runs, " + "; ".join(found)] if found else []
    if behind:
        parts.append(
            f"{len(behind)} of its {len(context.runs)} runs or competitions hold answer copies ({', '.join(behind)})"
        )
    return FlagData(
        code="answer_copy",
        severity="blocking",
        key="entry",
        tiers=context.tiers_of_all(run.competition_id for run in context.runs),
        message="The entry reproduces the private answers: " + "; ".join(parts) + ".",
        evidence={
            "runs": len(context.runs),
            "runs_measured": len(measured),
            "held": behind,
            "statistics": fired(found),
            **stats,
        },
    )


def check(context: CheckContext) -> list[FlagData]:
    flags = [flag for run in context.runs if (flag := run_flag(context, run)) is not None]
    by_competition: dict[str, list[RunFiles]] = {}
    for run in context.runs:
        by_competition.setdefault(run.competition_id, []).append(run)
    for cid, runs in by_competition.items():
        if (flag := competition_flag(context, cid, runs)) is not None:
            flags.append(flag)
    if (entry := entry_flag(context, flags)) is not None:
        flags.append(entry)
    return flags
