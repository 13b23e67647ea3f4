"""padded_seeds: the claimed aggregate needs failing placeholders.

Some competition of the split has fewer runs than seeds (the declared seeds, or the most runs of any
competition of that split, whichever is more), or the team's own report holds entries with no
run behind them. Runs are counted as distinct runs (a copy of an earlier seed's file counts once). A
competition with no run at all is incomplete_coverage's to say; it does not hide the others.
"""

from collections import Counter

from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext
from grading.checks.insufficient_seeds import copies_table, distinct_runs, seed_table


def padded_seeds(*, runs: list[GradedRun], split_members: dict[str, list[str]], seeds_declared: int) -> list[FlagData]:
    counted = distinct_runs(runs)[0]
    counts = Counter(run.competition_id for run in counted)
    flags = []
    for tier, members in split_members.items():
        # The tier's own competitions only, as the padded aggregate counts them (aggregation.seeds_of).
        most = max(seeds_declared, max((counts[cid] for cid in members), default=0))
        # Competitions without any run are incomplete_coverage's; they never hide the ones with too few.
        fewer = {cid: counts[cid] for cid in members if 0 < counts[cid] < most}
        if not fewer:
            continue
        complete = min((counts[cid] for cid in members), default=0)
        evidence: dict = {
            "runs_per_competition": fewer,
            "seeds_declared": seeds_declared,
            "seeds": seed_table(counted, list(fewer)),
        }
        without = sum(1 for cid in members if counts[cid] == 0)
        if without:
            evidence["competitions_without_runs"] = without  # listed by incomplete_coverage
        copies = copies_table(runs, list(fewer))
        if copies:
            evidence["copied_seeds"] = copies
        flags.append(
            FlagData(
                code="padded_seeds",
                severity="warning",
                key=tier,
                tiers=[tier],
                message=f"In {tier}, {len(fewer)} competitions have fewer runs than seeds, so a padded aggregate "
                f"would count missing runs as failures; the board uses {complete} complete seed(s).",
                evidence=evidence,
            )
        )
    return flags


def report_without_runs(*, claimed_ids: Counter, runs: list[GradedRun]) -> list[FlagData]:
    """Entries of the team's report with no run behind them: padding with placeholders."""
    have = Counter(run.competition_id for run in runs)
    extra = {cid: n - have[cid] for cid, n in claimed_ids.items() if n > have[cid]}
    if not extra:
        return []
    return [
        FlagData(
            code="padded_seeds",
            severity="blocking",
            key="report",
            message=f"The team's grading report has {sum(extra.values())} entries with no run in the bundle, "
            f"e.g. {next(iter(extra))}.",
            evidence={"entries_without_runs": extra},
        )
    ]


def check(context: CheckContext) -> list[FlagData]:
    graded = context.graded
    claimed = Counter(
        context.report_claims.get("entries_per_competition")
        or Counter(run.claimed["competition_id"] for run in graded if run.claimed)
    )
    return [
        *padded_seeds(runs=graded, split_members=dict(context.tier_members), seeds_declared=context.seeds_declared),
        *report_without_runs(claimed_ids=claimed, runs=graded),
    ]
