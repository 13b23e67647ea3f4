"""Checks made when a submission's runs are graded (framework-free): claimed vs re-graded, seeds, coverage.

Each check returns FlagData; the pipeline stores them as Flag rows keyed by (code, key).
"""

import math
from collections import Counter
from dataclasses import dataclass, field

MEDAL_FIELDS = ("gold_medal", "silver_medal", "bronze_medal", "above_median", "valid_submission")


@dataclass(frozen=True)
class FlagData:
    code: str
    severity: str
    key: str
    message: str
    tiers: list[str] = field(default_factory=list)
    evidence: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GradedRun:
    competition_id: str
    seed: int
    run_path: str
    has_file: bool
    claimed: dict | None
    regraded: dict


def _same_score(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(float(a) - float(b)) <= 1e-9


def score_mismatches(runs: list[GradedRun]) -> list[FlagData]:
    flags = []
    for run in runs:
        if run.claimed is None:
            continue
        differences = {}
        if not _same_score(run.claimed.get("score"), run.regraded.get("score")):
            differences["score"] = {"claimed": run.claimed.get("score"), "regraded": run.regraded.get("score")}
        for name in MEDAL_FIELDS:
            if name in run.claimed and bool(run.claimed[name]) != bool(run.regraded.get(name)):
                differences[name] = {"claimed": run.claimed[name], "regraded": run.regraded.get(name)}
        if differences:
            described = "; ".join(f"{k} claimed {v['claimed']!r}, re-graded {v['regraded']!r}" for k, v in differences.items())
            flags.append(FlagData(
                code="score_mismatch", severity="blocking", key=f"{run.competition_id}/seed-{run.seed}",
                message=f"{run.competition_id} seed {run.seed}: {described}.",
                evidence={"file": run.run_path, "differences": differences},
            ))
    return flags


def missing_submissions(runs: list[GradedRun]) -> list[FlagData]:
    return [
        FlagData(code="missing_submission", severity="blocking", key=f"{run.competition_id}/seed-{run.seed}",
                 message=f"{run.competition_id} seed {run.seed}: the team's report claims a valid submission, "
                         f"but the bundle has no {run.run_path}/submission/submission.csv.",
                 evidence={"file": run.run_path})
        for run in runs
        if run.claimed and run.claimed.get("valid_submission") and not run.has_file
    ]


def coverage(*, runs: list[GradedRun], split_members: dict[str, list[str]], seeds_declared: int) -> list[FlagData]:
    """incomplete_coverage, padded_seeds and insufficient_seeds for each tier the submission is listed in."""
    flags = []
    counts = Counter(run.competition_id for run in runs)
    for tier, members in split_members.items():
        missing = [cid for cid in members if counts[cid] == 0]
        if missing:
            flags.append(FlagData(
                code="incomplete_coverage", severity="warning", key=tier, tiers=[tier],
                message=f"{len(missing)} of the {len(members)} competitions of {tier} have no run, e.g. {missing[0]}.",
                evidence={"missing": missing},
            ))
        fewer = {cid: counts[cid] for cid in members if counts[cid] < max(seeds_declared, max(counts.values(), default=0))}
        complete = min((counts[cid] for cid in members), default=0)
        if fewer and not missing:
            flags.append(FlagData(
                code="padded_seeds", severity="warning", key=tier, tiers=[tier],
                message=f"In {tier}, {len(fewer)} competitions have fewer runs than seeds, so a padded aggregate "
                        f"would count missing runs as failures; the board uses {complete} complete seed(s).",
                evidence={"runs_per_competition": fewer, "seeds_declared": seeds_declared},
            ))
        if complete < 3:
            flags.append(FlagData(
                code="insufficient_seeds", severity="warning", key=tier, tiers=[tier],
                message=f"{tier} has {complete} complete seed(s); a comparable entry needs at least 3.",
                evidence={"complete_seeds": complete},
            ))
    return flags


def report_without_runs(*, claimed_ids: Counter, runs: list[GradedRun]) -> list[FlagData]:
    """Entries of the team's report with no run behind them: padding with placeholders."""
    have = Counter(run.competition_id for run in runs)
    extra = {cid: n - have[cid] for cid, n in claimed_ids.items() if n > have[cid]}
    if not extra:
        return []
    return [FlagData(
        code="padded_seeds", severity="blocking", key="report",
        message=f"The team's grading report has {sum(extra.values())} entries with no run in the bundle, "
                f"e.g. {next(iter(extra))}.",
        evidence={"entries_without_runs": extra},
    )]
