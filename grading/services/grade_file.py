"""Grading on the server: one submission file against a competition's private answers."""

import logging
import multiprocessing
from pathlib import Path
from typing import Any

from competitions.answers_cache import answers_cache_file, answers_load
from competitions.models import Competition
from competitions.selectors import grading_setup
from grading.engine import agreement, format_check
from grading.engine.report import CompetitionReport, grade_submission

logger = logging.getLogger(__name__)
# Format checks run in children of a forkserver that imported the graders once (grading/engine/format_check.py).
_FORKSERVER = multiprocessing.get_context("forkserver")
_FORKSERVER.set_forkserver_preload(["grading.engine.format_check", "grading.engine.graders"])

# The answers last loaded by this process, with their columns' scales for the agreement measure. Runs are
# queued competition by competition, so a worker often grades several seeds of one competition in a row;
# keeping one competition's answers saves loading them again without holding more than one set in memory.
# Loads come from the parsed-answers cache. The scales are worked out as the answers load, before any
# submission is read: at the measure they would cost a pass and a copy of each column on top of both frames.
_last_answers: tuple[tuple, Any, dict] | None = None


def _answers(path: Path, sha256: str) -> tuple[Any, dict]:
    global _last_answers
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, sha256)
    if _last_answers is None or _last_answers[0] != key:
        _last_answers = None  # let the previous competition's answers go before the next ones load
        answers = answers_load(path=path, sha256=sha256)
        _last_answers = (key, answers, agreement.answer_scales(answers))
    return _last_answers[1], _last_answers[2]


def grade_file(
    *, competition: Competition, submission_path: Path | None, display_path: str | None = None
) -> CompetitionReport:
    """Re-grade one submission.csv. Bad files give an invalid report with a reason; a competition without
    answers or grader raises NotGradable, one without a leaderboard is graded with its medals unknown."""
    return grade_run_file(
        competition=competition, submission_path=submission_path, display_path=display_path, measure=False
    )[0]


def grade_run_file(
    *, competition: Competition, submission_path: Path | None, display_path: str | None = None, measure: bool = True
) -> tuple[CompetitionReport, dict | None]:
    """grade_file, and how far a scored file agrees with the private answers (grading.engine.agreement;
    None when the file was not scored). Only counts come out; a measure that fails never fails the grade."""
    answers_path, grader, medal_rule = grading_setup(competition)
    answers, scales = (
        _answers(answers_path, competition.pack.answers_sha256) if submission_path is not None else (None, {})
    )
    measured: list[dict] = []

    def inspect(submission: Any, answers: Any) -> None:
        try:
            measured.append(
                agreement.measure(submission, answers, id_column=competition.id_column, scales=scales or None)
            )
        except Exception as exc:  # noqa: BLE001 - the measure is a check's input, never a reason to fail grading
            logger.warning("answer agreement of %s not measured: %s", competition.slug, type(exc).__name__)
            measured.append(agreement.not_measured(f"the measure failed ({type(exc).__name__})"))

    report = grade_submission(
        competition_id=competition.slug,
        submission_path=submission_path,
        answers_path=answers_path,
        answers=answers,
        grader=grader,
        thresholds=medal_rule,
        # Whatever intake accepted as honest must not be refused as too large here.
        honest_max_bytes=competition.pack.max_submission_bytes,
        display_path=display_path,
        inspect=inspect if measure else None,
    )
    return report, (measured[0] if measured else None)


class FormatCheckFailed(Exception):
    """The isolated format check did not answer (it crashed, or ran out of time or memory): message says which."""


def format_check_isolated(
    *, competition: Competition, submission_path: Path, timeout_seconds: float, memory_bytes: int
) -> tuple[bool, str | None]:
    """Is this submission valid for the competition, and if not why: grading/engine/format_check.py in a
    process of its own, forked from a forkserver that has the graders imported, with its address space limited
    to memory_bytes and killed after timeout_seconds. The answers are read there (from the parsed-answers cache
    when it holds them), never in this process."""
    answers_path, grader, _ = grading_setup(competition)
    pack = competition.pack
    cached = answers_cache_file(pack.answers_sha256) if pack.answers_sha256 else None
    job = {
        "competition_id": competition.slug,
        "submission_path": str(submission_path),
        "answers_path": str(answers_path),
        "answers_cache": str(cached) if cached is not None and cached.is_file() else None,
        "grader": {"name": grader.name, "params": grader.params},
        "honest_max_bytes": pack.max_submission_bytes,
        "memory_bytes": memory_bytes,
    }
    receive, send = _FORKSERVER.Pipe(duplex=False)
    child = _FORKSERVER.Process(target=format_check.check_in_child, args=(job, send), daemon=True)
    try:
        child.start()
        send.close()
        if not receive.poll(timeout_seconds):
            raise FormatCheckFailed(f"the format check did not finish within {timeout_seconds:g} s")
        try:
            answer: dict[str, Any] = receive.recv()
        except EOFError:
            answer = {"error": "failed", "kind": "the process ended without an answer"}
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join(5)
    if answer.get("error") == "memory":
        raise FormatCheckFailed(f"the format check needed more than {memory_bytes / 1024**3:g} GB of memory")
    if "valid" not in answer:
        # Only the exception's type is logged: its message could quote the answers.
        logger.error("format check for %s failed: %s (exit %s)", competition.slug, answer.get("kind"), child.exitcode)
        raise FormatCheckFailed("the format check failed on the portal's side")
    return bool(answer["valid"]), answer.get("reason") or None
