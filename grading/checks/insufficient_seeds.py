"""insufficient_seeds: fewer than MIN_SEEDS complete seeds for a tier."""

from collections import Counter

from grading.checks.base import FlagData, GradedRun
from grading.checks.comparability import MIN_SEEDS
from grading.checks.context import CheckContext


def seed_table(runs: list[GradedRun], members: list[str]) -> dict[str, list[int]]:
    """The seeds each competition has runs for: the evidence of the seed checks."""
    seeds: dict[str, list[int]] = {cid: [] for cid in members}
    for run in runs:
        if run.competition_id in seeds:
            seeds[run.competition_id].append(run.seed)
    return {cid: sorted(found) for cid, found in seeds.items()}


def insufficient_seeds(*, runs: list[GradedRun], split_members: dict[str, list[str]]) -> list[FlagData]:
    counts = Counter(run.competition_id for run in runs)
    flags = []
    for tier, members in split_members.items():
        complete = min((counts[cid] for cid in members), default=0)
        if complete < MIN_SEEDS:
            table = seed_table(runs, members)
            fewest = {cid: seeds for cid, seeds in table.items() if len(seeds) < MIN_SEEDS}
            flags.append(
                FlagData(
                    code="insufficient_seeds",
                    severity="warning",
                    key=tier,
                    tiers=[tier],
                    message=f"{tier} has {complete} complete seed(s); a comparable entry needs at least {MIN_SEEDS}.",
                    evidence={"complete_seeds": complete, "min_seeds": MIN_SEEDS, "seeds_per_competition": fewest},
                )
            )
    return flags


def check(context: CheckContext) -> list[FlagData]:
    return insufficient_seeds(runs=context.graded, split_members=dict(context.tier_members))
