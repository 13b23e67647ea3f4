"""MLE-bench grading reports, and grading one submission into one.

The JSON shape (field set, key order, indent 2) is MLE-bench's, so a report we serve can be fed to
MLE-bench's own aggregation scripts and compared line by line with a team's report. We add one field,
``reason``, because a team deserves to know why a file was invalid; ``to_dict(with_reason=False)``
gives the exact MLE-bench shape.

A competition with no leaderboard yet is graded all the same: its report keeps MLE-bench's shape with
null thresholds, every medal flag false and one more field, ``"medals_known": false``, so the score and
validity are never held back and nobody mistakes the false flags for a verdict. The field appears only
then; a report with known medals is exactly MLE-bench's.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from grading.engine import csvio
from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.medals import MedalsUnknown, Thresholds, medal_rule, medals_for, thresholds_from_leaderboard
from grading.engine.registry import GraderRef, get_grader, run_grader

Inspector = Callable[[pd.DataFrame, Any], None]

# Long enough for "missing 1234 ids, e.g. ..." with examples, short enough for a results table.
MAX_REASON_CHARS = 2000

TOTAL_FIELDS = (
    "total_runs",
    "total_runs_with_submissions",
    "total_valid_submissions",
    "total_medals",
    "total_gold_medals",
    "total_silver_medals",
    "total_bronze_medals",
    "total_above_median",
)


@dataclass(frozen=True)
class CompetitionReport:
    """One graded submission; field order is MLE-bench's report key order, then ``medals_known`` (written
    only when false) and ``reason``. Thresholds are None only when the medals are unknown."""

    competition_id: str
    score: float | None
    gold_threshold: float | None
    silver_threshold: float | None
    bronze_threshold: float | None
    median_threshold: float | None
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    created_at: str
    submission_path: str
    medals_known: bool = True
    reason: str | None = None

    def to_dict(self, *, with_reason: bool) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if self.medals_known:
            del data["medals_known"]
        if not with_reason:
            del data["reason"]
        return data


# MLE-bench's fields; ours (medals_known, reason) come after them.
REPORT_FIELDS = tuple(f.name for f in dataclasses.fields(CompetitionReport) if f.name not in ("medals_known", "reason"))


@dataclass(frozen=True)
class RunGroupReport:
    """A run group's report. Totals are always recomputed from the competition reports when
    serialising; ``claimed_totals`` keeps what a parsed file said, so a mismatch can be flagged."""

    competition_reports: tuple[CompetitionReport, ...]
    claimed_totals: dict[str, int] | None = None

    def totals(self) -> dict[str, int]:
        reports = self.competition_reports
        counts = (
            len(reports),
            sum(r.submission_exists for r in reports),
            sum(r.valid_submission for r in reports),
            sum(r.any_medal for r in reports),
            sum(r.gold_medal for r in reports),
            sum(r.silver_medal for r in reports),
            sum(r.bronze_medal for r in reports),
            sum(r.above_median for r in reports),
        )
        return dict(zip(TOTAL_FIELDS, counts, strict=True))

    def totals_mismatches(self) -> dict[str, tuple[int, int]]:
        """``{field: (claimed, recomputed)}`` for each claimed total that the reports do not add up to."""
        if self.claimed_totals is None:
            return {}
        actual = self.totals()
        return {k: (v, actual[k]) for k, v in self.claimed_totals.items() if actual[k] != v}

    def to_dict(self, *, with_reason: bool) -> dict[str, Any]:
        return {
            **self.totals(),
            "competition_reports": [r.to_dict(with_reason=with_reason) for r in self.competition_reports],
        }

    def to_json(self, *, with_reason: bool) -> str:
        # MLE-bench writes json.dump(..., indent=2): no trailing newline, NaN written as NaN.
        return json.dumps(self.to_dict(with_reason=with_reason), indent=2)


def build_run_group_report(reports: Iterable[CompetitionReport]) -> RunGroupReport:
    return RunGroupReport(competition_reports=tuple(reports))


def report_filename(*, now: datetime | None = None) -> str:
    """MLE-bench's report file name, e.g. ``2025-05-07T12-59-41-GMT_grading_report.json``."""
    stamp = (now or datetime.now()).astimezone().strftime("%Y-%m-%dT%H-%M-%S-%Z")
    return f"{stamp}_grading_report.json"


def grade_submission(
    *,
    competition_id: str,
    submission_path: Path | None,
    answers_path: Path,
    grader: GraderRef,
    leaderboard_scores: Sequence[float] | None = None,
    thresholds: Thresholds | MedalsUnknown | None = None,
    answers: pd.DataFrame | list[dict[str, Any]] | None = None,
    max_bytes: int | None = None,
    max_line_bytes: int | None = None,
    honest_max_bytes: int | None = None,
    display_path: str | None = None,
    created_at: datetime | None = None,
    inspect: Inspector | None = None,
) -> CompetitionReport:
    """Grade one submission file into an MLE-bench competition report. Never raises for a bad file.

    Give either the leaderboard scores (file row order) or precomputed ``thresholds``, or
    ``MedalsUnknown`` where there is no leaderboard yet (thresholds null, medals unknown). ``answers`` may
    be passed preloaded (e.g. shared by the seeds of one competition); the grader then gets a shallow
    copy, which pandas' copy-on-write keeps from changing the caller's frame. Errors that are ours, not
    the team's (unknown grader, unreadable answers, bad leaderboard), do raise. ``display_path`` is what
    to write as ``submission_path`` (e.g. the path inside the bundle rather than on the server).
    ``honest_max_bytes`` is the largest size an honest submission to the competition can reach
    (:mod:`grading.engine.submission_size`); the size limit derived from the answers is raised to it.
    ``inspect(submission, answers)`` is called with the parsed frames once a file is scored (the answer-copy
    measure reads them there rather than parsing the file twice).
    """
    if (leaderboard_scores is None) == (thresholds is None):
        raise TypeError("pass exactly one of leaderboard_scores and thresholds")
    limits = thresholds if thresholds is not None else thresholds_from_leaderboard(leaderboard_scores or [])
    get_grader(grader.name)  # a misconfigured competition is our bug: fail loudly, outside the catch-all
    stamp = (created_at or datetime.now()).isoformat()
    shown = display_path if display_path is not None else str(submission_path)

    exists = submission_path is not None and _is_csv_file(Path(submission_path))
    score: float | None = None
    reason: str | None
    if not exists:
        reason = _missing_reason(submission_path)
    else:
        if max_bytes is None or max_line_bytes is None:
            defaults = _default_limits(Path(answers_path))
            if max_bytes is None:
                max_bytes = max(defaults.max_bytes, honest_max_bytes or 0)
            max_line_bytes = defaults.max_line_bytes if max_line_bytes is None else max_line_bytes
        score, reason = _score(
            Path(submission_path),  # type: ignore[arg-type]
            answers=answers,
            answers_path=Path(answers_path),
            grader=grader,
            max_bytes=max_bytes,
            max_line_bytes=max_line_bytes,
            inspect=inspect,
        )

    known_limits = limits if isinstance(limits, Thresholds) else None
    known = known_limits is not None
    flags = medals_for(score, limits)
    return CompetitionReport(
        competition_id=competition_id,
        score=score,
        gold_threshold=known_limits.gold if known_limits is not None else None,
        silver_threshold=known_limits.silver if known_limits is not None else None,
        bronze_threshold=known_limits.bronze if known_limits is not None else None,
        median_threshold=known_limits.median if known_limits is not None else None,
        any_medal=flags["any_medal"],
        gold_medal=flags["gold_medal"],
        silver_medal=flags["silver_medal"],
        bronze_medal=flags["bronze_medal"],
        above_median=flags["above_median"],
        submission_exists=exists,
        valid_submission=score is not None,
        is_lower_better=limits.is_lower_better,
        created_at=stamp,
        submission_path=shown,
        medals_known=known,
        reason=reason,
    )


def grade_file(
    submission_path: Path | None,
    answers_path: Path,
    *,
    competition_id: str,
    grader: Mapping[str, Any],
    thresholds: Mapping[str, Any],
    honest_max_bytes: int | None = None,
    display_path: str | None = None,
    created_at: datetime | None = None,
    answers: pd.DataFrame | list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """grade_submission from what an entry's evidence records: ``grader`` is ``{"name", "params"}``,
    ``thresholds`` is ``{"gold", "silver", "bronze", "median", "is_lower_better"}`` (gold null: medals unknown).
    The report as the server stores it: MLE-bench's fields, ``medals_known`` when false, and ``reason``.
    ``answers`` may be given loaded (``load_answers(answers_path)``), to share them between seeds."""
    report = grade_submission(
        competition_id=competition_id,
        submission_path=submission_path,
        answers_path=answers_path,
        grader=GraderRef(name=str(grader["name"]), params=dict(grader.get("params") or {})),
        thresholds=medal_rule(thresholds),
        honest_max_bytes=honest_max_bytes,
        display_path=display_path,
        created_at=created_at,
        answers=answers,
    )
    return report.to_dict(with_reason=True)


def _score(
    path: Path,
    *,
    answers: pd.DataFrame | list[dict[str, Any]] | None,
    answers_path: Path,
    grader: GraderRef,
    max_bytes: int,
    max_line_bytes: int,
    inspect: Inspector | None = None,
) -> tuple[float | None, str | None]:
    # Answers are loaded outside the catch-all: answers we cannot read are our failure, not the team's. For a
    # large file they come first, so that a submission column equal to theirs (the ids) is held once
    # (csvio.read_submission); otherwise only once the submission parses (no cost for unreadable files).
    if answers is None and _large(path, max_bytes):
        answers = csvio.load_answers(answers_path)
    # MLE-bench turns any exception inside grading into a null score; so do we, but with a reason.
    try:
        submission = csvio.read_submission(
            path,
            max_bytes=max_bytes,
            max_line_bytes=max_line_bytes,
            answers=answers if isinstance(answers, pd.DataFrame) else None,
        )
    except InvalidSubmission as exc:
        return None, _clip(str(exc))
    if answers is None:
        answers = csvio.load_answers(answers_path)
    theirs = answers.copy(deep=False) if isinstance(answers, pd.DataFrame) else list(answers)
    try:
        # Copy-on-write: a shallow copy keeps whatever the grader does to its frame from the inspector's.
        raw = run_grader(grader, submission.copy(deep=False) if inspect else submission, theirs)
        # round() on the value as returned, like MLE-bench: a numpy float rounds with numpy's
        # algorithm, a Python float with Python's, and the two differ on ties such as 5e-06.
        score = float(round(raw, 5))
    except InvalidSubmission as exc:
        return None, _clip(str(exc) or "the submission is invalid")
    except AnswersProblem:
        raise  # our answers or configuration are wrong: never the team's fault
    except Exception as exc:  # noqa: BLE001 - every grading failure is an invalid submission, not a crash
        return None, _clip(f"the grader could not score this file: {type(exc).__name__}: {exc}")
    if inspect is not None:
        inspect(submission, answers)
    return score, None


def _large(path: Path, max_bytes: int) -> bool:
    """Large enough for the block reader, and not so large that it is refused unread."""
    try:
        return csvio.BLOCK_READ_MIN_BYTES <= path.stat().st_size <= max_bytes
    except OSError:  # read_submission says what is wrong with the file
        return False


def _is_csv_file(path: Path) -> bool:
    return path.suffix.lower() == ".csv" and path.is_file()


def _missing_reason(path: Path | None) -> str:
    if path is None:
        return "no submission file was found for this run"
    path = Path(path)
    if not path.exists():
        return f"no submission file at {path}"
    if not path.is_file():
        return f"{path} is not a file"
    return f"the submission must be a .csv file, not {path.suffix or 'a file without a suffix'}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def _default_limits(answers_path: Path) -> csvio.ReadLimits:
    stat = answers_path.stat()
    return _limits_cached(str(answers_path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=128)
def _limits_cached(path: str, size: int, mtime_ns: int) -> csvio.ReadLimits:
    # Keyed by size and mtime so a replaced answers file is rescanned. Lines shorter than the floor's share
    # cannot change the limit, so the scan measures only longer ones: a few find calls per MiB.
    floor_share = csvio.MIN_MAX_LINE_BYTES // csvio.SIZE_FACTOR
    longest = csvio.longest_line_bytes(Path(path), at_least=floor_share) if path.lower().endswith(".csv") else 0
    return csvio.limits_for_answers(answers_bytes=size, answers_longest_line=longest)
