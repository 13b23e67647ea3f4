"""grading_error: a run the server failed to grade, an error of ours and not of the submission.

Blocking, so the entry waits for a maintainer instead of publishing without the run; the publication
service also holds it while any run has a grading error, whatever the flag's decision, because only a
re-grade after the fix gives the run a result.
"""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext


def check(context: CheckContext) -> list[FlagData]:
    return [
        FlagData(
            code="grading_error",
            severity="blocking",
            key=f"{run.competition_id}/seed-{run.seed}",
            tiers=context.tiers_of(run.competition_id),
            message=f"{run.competition_id} seed {run.seed}: the server failed to grade this run ({run.grading_error}). "
            "This is an error of the portal, not of the submission: the run counts for nothing until a maintainer "
            "re-grades the submission after the fix, and the entry is not published before.",
            evidence={"file": run.run_path, "error": run.grading_error},
        )
        for run in context.runs
        if run.grading_error
    ]
