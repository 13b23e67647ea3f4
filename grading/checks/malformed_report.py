"""malformed_report: the team's own grading report did not fit MLE-bench's format (never fatal)."""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext


def report_problems(problems: list[dict]) -> list[FlagData]:
    """The team's own grading report did not fit MLE-bench's format: shown, never fatal to the bundle."""
    return [
        FlagData(
            code="malformed_report",
            severity="warning",
            key=found["file"],
            message=f"{found['file']}: {found['total']} problem(s) in the team's own grading report, e.g. "
            f"{found['problems'][0]}. The submissions were re-graded as usual; claims that could not be "
            "read are not compared.",
            evidence={"file": found["file"], "problems": found["problems"], "total": found["total"]},
        )
        for found in problems
        if found.get("problems")
    ]


def check(context: CheckContext) -> list[FlagData]:
    return report_problems(context.report_claims.get("problems") or [])
