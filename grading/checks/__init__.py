"""The fairness checks of SPEC §4 (framework-free): one module per check, one registry the checking step runs.

Each check is a plain function ``check(context) -> list[FlagData]`` over a CheckContext (the parsed bundle
and the re-grade). ``comparability`` holds the comparability rule and its constants; ``scan`` the streaming
log and code scanner; ``patterns`` what it looks for.
"""

from collections.abc import Callable

from grading.checks import (
    answer_copy,
    benchmark_version,
    duplicate_submissions,
    format_checks,
    grader_loophole,
    grading_error,
    implausible_score,
    incomplete_coverage,
    insufficient_seeds,
    known_leaky_competition,
    malformed_report,
    missing_submission,
    nonstandard_resources,
    padded_seeds,
    registration,
    report_only,
    rule_violation,
    runtime_over_budget,
    score_mismatch,
    selected_seeds,
    test_set_feedback,
    unscanned_evidence,
)
from grading.checks.base import FlagData, GradedRun
from grading.checks.context import CheckContext
from grading.checks.incomplete_coverage import incomplete_coverage as _incomplete_coverage
from grading.checks.insufficient_seeds import insufficient_seeds as _insufficient_seeds
from grading.checks.malformed_report import report_problems
from grading.checks.missing_submission import missing_submissions
from grading.checks.padded_seeds import padded_seeds as _padded_seeds
from grading.checks.padded_seeds import report_without_runs
from grading.checks.score_mismatch import score_mismatches

Check = Callable[[CheckContext], list[FlagData]]

CHECKS: dict[str, Check] = {
    "test_set_feedback": test_set_feedback.check,
    "unscanned_evidence": unscanned_evidence.check,
    "padded_seeds": padded_seeds.check,
    "selected_seeds": selected_seeds.check,
    "insufficient_seeds": insufficient_seeds.check,
    "incomplete_coverage": incomplete_coverage.check,
    "score_mismatch": score_mismatch.check,
    "missing_submission": missing_submission.check,
    "duplicate_submissions": duplicate_submissions.check,
    "implausible_score": implausible_score.check,
    "answer_copy": answer_copy.check,
    "runtime_over_budget": runtime_over_budget.check,
    "nonstandard_resources": nonstandard_resources.check,
    "benchmark_version": benchmark_version.check,
    "known_leaky_competition": known_leaky_competition.check,
    "rule_violation": rule_violation.check,
    "grader_loophole": grader_loophole.check,
    "malformed_report": malformed_report.check,
    "report_only": report_only.check,
    "format_checks": format_checks.check,
    "grading_error": grading_error.check,
    "registration": registration.check,
}


def run_checks(context: CheckContext, *, only: list[str] | None = None) -> list[FlagData]:
    """Every registered check (or those named), in registry order; (code, key) pairs are unique."""
    flags: dict[tuple[str, str], FlagData] = {}
    for name, check in CHECKS.items():
        if only is not None and name not in only:
            continue
        for flag in check(context):
            flags.setdefault((flag.code, flag.key), flag)
    return list(flags.values())


def coverage(*, runs: list[GradedRun], split_members: dict[str, list[str]], seeds_declared: int) -> list[FlagData]:
    """incomplete_coverage, padded_seeds and insufficient_seeds for each tier the submission is listed in."""
    return [
        *_incomplete_coverage(runs=runs, split_members=split_members),
        *_padded_seeds(runs=runs, split_members=split_members, seeds_declared=seeds_declared),
        *_insufficient_seeds(runs=runs, split_members=split_members),
    ]


__all__ = [
    "CHECKS",
    "CheckContext",
    "FlagData",
    "GradedRun",
    "coverage",
    "missing_submissions",
    "report_problems",
    "report_without_runs",
    "run_checks",
    "score_mismatches",
]
