"""The engine: every number the portal publishes is computed here, framework-free.

Graders and MLE-bench reports, medal thresholds, the tier aggregation and the rank interval. Nothing in this
package imports Django, the database or the rest of ``grading``: it ships alone as the wheel
``mle-portal-engine`` (``packaging/engine/``), whose version is ``ENGINE_VERSION``, so anyone can recompute
the board's numbers offline (``mleportal verify --data``). ``tests/grading/engine/test_engine_alone.py`` holds
it to that.

The public interface is the names below, importable from ``grading.engine``. They load on first use, so
``from grading.engine import aggregate, rank_intervals`` costs numpy alone, not pandas and the graders.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# The wheel's version: bump it whenever any number the engine computes can change (a grader, a report field,
# the aggregation, the rank interval), or whenever its public interface changes.
ENGINE_VERSION = "2026.12.4"
# Recorded with every re-graded result; bump it whenever a grader's output can change.
GRADER_VERSION = "2026.11.2"

# Each public name and the module that holds it.
_HOME = {
    **dict.fromkeys(
        ("AGGREGATION_VERSION", "CI_Z", "FIELDS", "RunOutcome", "aggregate", "outcome_from_report", "per_seed"),
        "aggregation",
    ),
    **dict.fromkeys(("seed_percentages", "seeds_of", "without_copies"), "aggregation"),
    **dict.fromkeys(
        ("LEVEL", "RANK_VERSION", "REPLICATES", "RankInterval", "TabRank", "rank_intervals", "tab_ranks"), "ranking"
    ),
    **dict.fromkeys(("REPORT_FIELDS", "CompetitionReport", "grade_file", "grade_submission"), "report"),
    **dict.fromkeys(("MedalsUnknown", "Thresholds", "medal_rule", "medals_for"), "medals"),
    "thresholds_from_leaderboard": "medals",
    **dict.fromkeys(("GraderRef", "get_grader", "grader_names"), "registry"),
    "file_sha256": "hashing",
    "load_answers": "csvio",
}

__all__ = [
    "AGGREGATION_VERSION",
    "CI_Z",
    "ENGINE_VERSION",
    "FIELDS",
    "GRADER_VERSION",
    "LEVEL",
    "RANK_VERSION",
    "REPLICATES",
    "REPORT_FIELDS",
    "CompetitionReport",
    "GraderRef",
    "MedalsUnknown",
    "RankInterval",
    "RunOutcome",
    "TabRank",
    "Thresholds",
    "aggregate",
    "file_sha256",
    "get_grader",
    "grade_file",
    "grade_submission",
    "grader_names",
    "load_answers",
    "medal_rule",
    "medals_for",
    "outcome_from_report",
    "per_seed",
    "rank_intervals",
    "seed_percentages",
    "seeds_of",
    "tab_ranks",
    "thresholds_from_leaderboard",
    "without_copies",
]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'grading.engine' has no attribute {name!r}")
    value = getattr(import_module(f"grading.engine.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # the names above, for type checkers (ruff: they are public through __all__)
    from grading.engine.aggregation import (
        AGGREGATION_VERSION,
        CI_Z,
        FIELDS,
        RunOutcome,
        aggregate,
        outcome_from_report,
        per_seed,
        seed_percentages,
        seeds_of,
        without_copies,
    )
    from grading.engine.csvio import load_answers
    from grading.engine.hashing import file_sha256
    from grading.engine.medals import MedalsUnknown, Thresholds, medal_rule, medals_for, thresholds_from_leaderboard
    from grading.engine.ranking import LEVEL, RANK_VERSION, REPLICATES, RankInterval, TabRank, rank_intervals, tab_ranks
    from grading.engine.registry import GraderRef, get_grader, grader_names
    from grading.engine.report import REPORT_FIELDS, CompetitionReport, grade_file, grade_submission
