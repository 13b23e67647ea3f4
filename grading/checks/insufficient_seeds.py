"""insufficient_seeds: fewer than MIN_SEEDS complete seeds for a tier.

Seeds are distinct runs (SPEC §4): a run whose submission.csv is a copy of an earlier seed's of the same
competition (byte-identical, identical once normalised, or a near-duplicate: grading/checks/fingerprint.py)
counts once, here, in padded_seeds and in the aggregation's SEM (the runs carry the copy key as their
``submission_sha256``: CheckContext.graded). A
tier's *complete seeds* are then the fewest distinct runs any of its competitions has (a run that made no
submission is a run all the same; only identical files are copies).
"""

from collections import Counter

from grading.checks.base import FlagData, GradedRun
from grading.checks.comparability import MIN_SEEDS
from grading.checks.context import CheckContext
from grading.engine.aggregation import without_copies


def distinct_runs(runs: list[GradedRun]) -> tuple[list[GradedRun], list[GradedRun]]:
    """(counted, copies): of runs of one competition with one submission (the same copy key), the lowest seed is
    counted and the others are copies (the aggregation's own rule)."""
    return without_copies(runs)


def distinct_counts(runs: list[GradedRun]) -> Counter:
    """Distinct runs per competition: what the seed rules count."""
    return Counter(run.competition_id for run in distinct_runs(runs)[0])


def copies_table(runs: list[GradedRun], members: list[str]) -> dict[str, list[int]]:
    """The seeds of each competition whose submission copies an earlier seed's (only those that have any)."""
    table: dict[str, list[int]] = {}
    for run in distinct_runs(runs)[1]:
        if run.competition_id in members:
            table.setdefault(run.competition_id, []).append(run.seed)
    return table


def seed_table(runs: list[GradedRun], members: list[str]) -> dict[str, list[int]]:
    """The seeds each competition has runs for: the evidence of the seed checks."""
    seeds: dict[str, list[int]] = {cid: [] for cid in members}
    for run in runs:
        if run.competition_id in seeds:
            seeds[run.competition_id].append(run.seed)
    return {cid: sorted(found) for cid, found in seeds.items()}


def insufficient_seeds(*, runs: list[GradedRun], split_members: dict[str, list[str]]) -> list[FlagData]:
    counted = distinct_runs(runs)[0]
    counts = Counter(run.competition_id for run in counted)
    flags = []
    for tier, members in split_members.items():
        complete = min((counts[cid] for cid in members), default=0)
        if complete < MIN_SEEDS:
            table = seed_table(counted, members)
            fewest = {cid: seeds for cid, seeds in table.items() if len(seeds) < MIN_SEEDS}
            evidence: dict = {"complete_seeds": complete, "min_seeds": MIN_SEEDS, "seeds_per_competition": fewest}
            message = f"{tier} has {complete} complete seed(s); a comparable entry needs at least {MIN_SEEDS}."
            copies = copies_table(runs, members)
            if copies:
                evidence["copied_seeds"] = copies
                message += (
                    f" {sum(map(len, copies.values()))} run(s) submitted a copy of an earlier seed's file "
                    "(the same once normalised) and count once."
                )
            flags.append(
                FlagData(
                    code="insufficient_seeds",
                    severity="warning",
                    key=tier,
                    tiers=[tier],
                    message=message,
                    evidence=evidence,
                )
            )
    return flags


def check(context: CheckContext) -> list[FlagData]:
    return insufficient_seeds(runs=context.graded, split_members=dict(context.tier_members))
