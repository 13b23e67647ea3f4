"""Checks made when a submission's runs are graded (framework-free): claimed vs re-graded, seeds, coverage.

Each check returns FlagData; the pipeline stores them as Flag rows keyed by (code, key).
"""

import math
from collections import Counter
from dataclasses import dataclass, field

MEDAL_FIELDS = ("gold_medal", "silver_medal", "bronze_medal", "above_median", "valid_submission")
# What can still be compared when a competition has no leaderboard here yet (the re-grade says
# "medals_known": false): the score and validity, never the medals.
UNKNOWN_MEDAL_FIELDS = ("gold_medal", "silver_medal", "bronze_medal", "above_median")


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


def _medals_unknown(run: GradedRun) -> bool:
    return run.regraded.get("medals_known") is False


def score_mismatches(runs: list[GradedRun]) -> list[FlagData]:
    """score_mismatch for each run whose claim differs from the re-grade. Where the re-grade's medals are
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
            described = "; ".join(f"{k} claimed {v['claimed']!r}, re-graded {v['regraded']!r}" for k, v in differences.items())
            flags.append(FlagData(
                code="score_mismatch", severity="blocking", key=f"{run.competition_id}/seed-{run.seed}",
                message=f"{run.competition_id} seed {run.seed}: {described}.",
                evidence={"file": run.run_path, "differences": differences},
            ))
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
        notes.append(FlagData(
            code="medals_unknown", severity="info", key=competition_id,
            message=f"{competition_id} has no leaderboard on this portal yet, so the medals of its {len(unknown)} "
                    "run(s) are unknown: their scores and validity are re-graded, their medals count as none in the "
                    "aggregates until a leaderboard is imported and the submission is re-graded"
                    + (f"; the team's claimed {said} could not be checked." if said else "."),
            evidence={"seeds": seeds, "claimed_unchecked": claimed},
        ))
    return notes


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


def report_problems(problems: list[dict]) -> list[FlagData]:
    """The team's own grading report did not fit MLE-bench's format: shown, never fatal to the bundle."""
    return [
        FlagData(
            code="malformed_report", severity="warning", key=found["file"],
            message=f"{found['file']}: {found['total']} problem(s) in the team's own grading report, e.g. "
                    f"{found['problems'][0]}. The submissions were re-graded as usual; claims that could not be "
                    "read are not compared.",
            evidence={"file": found["file"], "problems": found["problems"], "total": found["total"]},
        )
        for found in problems
        if found.get("problems")
    ]
