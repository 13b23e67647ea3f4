"""report_only: the bundle holds only grading reports, so nothing could be re-graded."""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext


def check(context: CheckContext) -> list[FlagData]:
    if not context.report_only:
        return []
    return [
        FlagData(
            code="report_only",
            severity="blocking",
            key="bundle",
            message="The bundle holds only grading reports: nothing could be re-graded.",
        )
    ]
