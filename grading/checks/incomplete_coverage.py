"""incomplete_coverage: competitions of the claimed split with no run."""

from collections import Counter

from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext


def incomplete_coverage(*, runs: list[GradedRun], split_members: dict[str, list[str]]) -> list[FlagData]:
    counts = Counter(run.competition_id for run in runs)
    flags = []
    for tier, members in split_members.items():
        missing = [cid for cid in members if counts[cid] == 0]
        if missing:
            flags.append(
                FlagData(
                    code="incomplete_coverage",
                    severity="warning",
                    key=tier,
                    tiers=[tier],
                    message=f"{len(missing)} of the {len(members)} competitions of {tier} have no run, "
                    f"e.g. {missing[0]}.",
                    evidence={"missing": missing},
                )
            )
    return flags


def check(context: CheckContext) -> list[FlagData]:
    return incomplete_coverage(runs=context.graded, split_members=dict(context.tier_members))
