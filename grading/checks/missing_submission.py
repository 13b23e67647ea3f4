"""missing_submission: the team's report claims a valid submission that the bundle does not contain."""

from collections.abc import Callable

from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext


def missing_submissions(runs: list[GradedRun], *, tiers_of: Callable[[str], list[str]] | None = None) -> list[FlagData]:
    """One flag per run, scoped to the tiers of its competition (``tiers_of``; none given: the whole entry)."""
    return [
        FlagData(
            code="missing_submission",
            severity="blocking",
            key=f"{run.competition_id}/seed-{run.seed}",
            tiers=tiers_of(run.competition_id) if tiers_of else [],
            message=f"{run.competition_id} seed {run.seed}: the team's report claims a valid submission, "
            f"but the bundle has no {run.run_path}/submission/submission.csv.",
            evidence={"file": run.run_path},
        )
        for run in runs
        if run.claimed and run.claimed.get("valid_submission") and not run.has_file
    ]


def check(context: CheckContext) -> list[FlagData]:
    return missing_submissions(context.graded, tiers_of=context.tiers_of)
