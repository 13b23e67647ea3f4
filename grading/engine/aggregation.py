"""Leaderboard math (SPEC §5), framework-free and versioned.

Per seed and tier: percentage = count / size of the tier's split × 100, for any medal, gold, silver,
bronze, above median, valid submission and submission made. Across seeds: mean, SEM with ddof = 1
(0 for one seed), 95% CI = mean ± 1.96·SEM.

Two aggregates are made for every tier, and both are stored:

* **complete**: only the seeds in which every competition of the split has a run (MLE-bench's default,
  which takes as many seeds as the competition with the fewest runs has);
* **padded**: as many seeds as the competition with the most runs has, a missing run counting as a
  failure (MLE-bench's ``--pad-missing``). The board marks a cell that uses it.

Seeds are distinct runs (SPEC §4): a run whose submission file is byte-identical to that of an earlier seed
of the same competition (``submission_sha256``) is a copy and is left out, as if that seed had no run of the
competition. So three identical seeds are one complete seed (SEM 0), and a padded seed counts a copy as a
failure. The aggregate says how many runs it left out as copies (``copies``, only when there are any) and
how many seeds it would have counted had copies counted (``seeds_with_copies``).

A run of a competition with no leaderboard yet has unknown medals; it counts as no medal, as MLE-bench
would count its false flags, and the aggregate says how many of its runs were such
(``medals_unknown_runs``, only when there are any), so the figure is never silently too low.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

AGGREGATION_VERSION = "2026.12-1"  # copies across seeds count once
FIELDS = ("any_medal", "gold", "silver", "bronze", "above_median", "valid_submission", "submission_exists")
CI_Z = 1.96


@dataclass(frozen=True)
class RunOutcome:
    competition_id: str
    seed: int
    submission_exists: bool
    valid_submission: bool
    gold: bool
    silver: bool
    bronze: bool
    above_median: bool
    medals_known: bool = True
    submission_sha256: str = ""  # empty: no file, or not known; never a copy

    @property
    def any_medal(self) -> bool:
        return self.gold or self.silver or self.bronze


def outcome_from_report(
    report: Mapping[str, Any], *, seed: int, submission_sha256: str = "", competition_id: str | None = None
) -> RunOutcome:
    """What the aggregation counts of one MLE-bench competition report (the server's re-grade of a run, a
    team's own report, or a per-seed report of an entry's evidence); an empty report counts as no submission.
    The competition is the report's own unless ``competition_id`` says it."""
    return RunOutcome(
        competition_id=competition_id if competition_id is not None else str(report.get("competition_id", "")),
        seed=seed,
        submission_exists=bool(report.get("submission_exists")),
        valid_submission=bool(report.get("valid_submission")),
        gold=bool(report.get("gold_medal")),
        silver=bool(report.get("silver_medal")),
        bronze=bool(report.get("bronze_medal")),
        above_median=bool(report.get("above_median")),
        medals_known=bool(report.get("medals_known", True)),
        submission_sha256=submission_sha256,
    )


def _stats(values: Sequence[float]) -> dict[str, float]:
    n = len(values)
    mean = sum(values) / n
    sem = 0.0 if n == 1 else math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) / math.sqrt(n)
    return {"mean": mean, "sem": sem, "ci_low": mean - CI_Z * sem, "ci_high": mean + CI_Z * sem}


def seed_percentages(outcomes: Iterable[RunOutcome], *, split: Sequence[str]) -> dict[str, float]:
    """One seed's percentages over the split; runs of competitions outside the split are ignored."""
    members = set(split)
    counts = dict.fromkeys(FIELDS, 0)
    for run in outcomes:
        if run.competition_id in members:
            for name in FIELDS:
                counts[name] += bool(getattr(run, name))
    return {name: counts[name] / len(split) * 100 for name in FIELDS}


class SeededRun(Protocol):
    @property
    def competition_id(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def submission_sha256(self) -> str: ...


def without_copies[R: SeededRun](outcomes: Iterable[R]) -> tuple[list[R], list[R]]:
    """(distinct, copies): of the runs of one competition with the same submission file, the lowest seed's is
    kept and the others are copies. The aggregation's runs and the checks' (grading/checks) alike."""
    seen: set[tuple[str, str]] = set()
    distinct, copies = [], []
    for run in sorted(outcomes, key=lambda r: (r.competition_id, r.seed)):
        same = (run.competition_id, run.submission_sha256)
        if run.submission_sha256 and same in seen:
            copies.append(run)
            continue
        seen.add(same)
        distinct.append(run)
    return distinct, copies


def seeds_of(
    outcomes: Iterable[RunOutcome], *, split: Sequence[str], padded: bool, count_copies: bool = False
) -> list[tuple[int, list[RunOutcome]]]:
    """The seeds the aggregate counts, each with its runs of the split's competitions (a padded seed's missing
    runs are absent: they count as failures).

    Complete: seeds in which every split competition has a distinct run. Padded: as many seeds as the split
    competition with the most distinct runs has, in seed order; missing runs and copies fail.
    ``count_copies`` counts copies as runs (only to say what the copies would have added).
    """
    members = set(split)
    runs_in = list(outcomes) if count_copies else without_copies(outcomes)[0]
    by_seed: dict[int, dict[str, RunOutcome]] = {}
    for run in runs_in:
        if run.competition_id in members:
            by_seed.setdefault(run.seed, {})[run.competition_id] = run
    if padded:
        most = max((sum(1 for runs in by_seed.values() if cid in runs) for cid in members), default=0)
        seeds = sorted(by_seed)[:most]
    else:
        seeds = sorted(seed for seed, runs in by_seed.items() if members <= runs.keys())
    return [(seed, list(by_seed[seed].values())) for seed in seeds]


def per_seed(outcomes: Iterable[RunOutcome], *, split: Sequence[str], padded: bool) -> list[dict[str, float]]:
    """Each counted seed's percentages, in seed order (what the rank interval resamples)."""
    return [seed_percentages(runs, split=split) for _, runs in seeds_of(outcomes, split=split, padded=padded)]


def aggregate(outcomes: Iterable[RunOutcome], *, split: Sequence[str], padded: bool) -> dict | None:
    """The AGG of SPEC §6 for one tier, or None when no seed qualifies (see seeds_of)."""
    outcomes = list(outcomes)
    seeds = seeds_of(outcomes, split=split, padded=padded)
    if not seeds:
        return None
    rows = [seed_percentages(runs, split=split) for _, runs in seeds]
    result: dict = {"seeds": len(seeds)}
    for name in FIELDS:
        result[name] = _stats([row[name] for row in rows])
    members = set(split)
    copies = [run for run in without_copies(outcomes)[1] if run.competition_id in members]
    if copies:
        result["copies"] = len(copies)
        result["seeds_with_copies"] = len(seeds_of(outcomes, split=split, padded=padded, count_copies=True))
    unknown = sorted({run.competition_id for _, runs in seeds for run in runs if not run.medals_known})
    if unknown:
        result["medals_unknown_runs"] = sum(not run.medals_known for _, runs in seeds for run in runs)
        result["medals_unknown_competitions"] = unknown
    return result


def format_mean_sem(agg: dict | None, field: str = "any_medal") -> str:
    """'12.3 ± 1.2' as in the MLE-bench README, or '—' when there is no aggregate."""
    if not agg:
        return "—"
    return f"{agg[field]['mean']:.1f} ± {agg[field]['sem']:.1f}"
