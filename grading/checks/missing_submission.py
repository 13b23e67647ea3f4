"""missing_submission: the team's report claims a valid submission that the bundle does not contain."""

from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext


def missing_submissions(runs: list[GradedRun]) -> list[FlagData]:
    return [
        FlagData(code="missing_submission", severity="blocking", key=f"{run.competition_id}/seed-{run.seed}",
                 message=f"{run.competition_id} seed {run.seed}: the team's report claims a valid submission, "
                         f"but the bundle has no {run.run_path}/submission/submission.csv.",
                 evidence={"file": run.run_path})
        for run in runs
        if run.claimed and run.claimed.get("valid_submission") and not run.has_file
    ]


def check(context: CheckContext) -> list[FlagData]:
    return missing_submissions(context.graded)
