"""A format check in a process of its own: {"valid": bool, "reason": str | null}, never a score.

The portal's web process asks for one per hosted run's format check (grading/services/grade_file.py,
format_check_isolated), so that a hostile file never runs a grader inside the web process, the answers are
never loaded there, and memory and time are bounded. Each check is a child forked from a multiprocessing
forkserver that imported this module and every grader (grading.engine.graders) once: a check costs a fork,
not an interpreter start and the imports of pandas and the graders. The forkserver never imports Django, so
its children hold no settings, database connections or answers of other competitions; they also drop the
environment they inherited. The child limits its address space before it reads the answers or the file, and
the parent kills it at its time limit. (As with any multiprocessing child, the parent's main script is
imported in it under the name __mp_main__: manage.py, gunicorn and pytest guard theirs.)

The job: competition_id, submission_path, answers_path, answers_cache (a parsed-answers pickle written by the
portal, or null), grader {name, params}, honest_max_bytes, memory_bytes.
"""

import os
import pickle
import resource
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from grading.engine import csvio
from grading.engine.medals import MedalsUnknown
from grading.engine.registry import GraderRef
from grading.engine.report import grade_submission

GRADER_FAILED = "the grader could not score this file:"
KEPT_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ")


def _limit_memory(memory_bytes: int) -> None:
    if memory_bytes > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def check(job: dict[str, Any]) -> dict[str, Any]:
    """The verdict on one file; {"error": "memory"} when it needed more than the job's memory."""
    # The limit counts from here: the interpreter and the libraries are ours, the answers and the file are not.
    _limit_memory(int(job.get("memory_bytes") or 0))
    answers: Any = None
    cache = job.get("answers_cache")
    if cache:
        try:
            with open(cache, "rb") as source:
                answers = pickle.load(source)  # the portal's own file, written from its answers
        except (OSError, pickle.UnpicklingError, EOFError):
            answers = None
    if answers is None:
        answers = csvio.load_answers(Path(job["answers_path"]))
    report = grade_submission(
        competition_id=job["competition_id"],
        submission_path=Path(job["submission_path"]),
        answers_path=Path(job["answers_path"]),
        answers=answers,
        grader=GraderRef(job["grader"]["name"], job["grader"].get("params") or {}),
        thresholds=MedalsUnknown(is_lower_better=False),  # medals are no part of a format check
        honest_max_bytes=job.get("honest_max_bytes"),
        display_path="submission.csv",
    )
    reason = report.reason or None
    if reason == csvio.TOO_LARGE_FOR_MEMORY:
        return {"error": "memory"}  # the child's limit, not the team's file: the portal says it could not check
    if reason and reason.startswith(GRADER_FAILED):
        # An exception's message can quote what the grader held (an answer's id or value): the agent is
        # told which exception it was, never its message.
        kind = reason[len(GRADER_FAILED) :].split(":", 1)[0].strip()
        if kind in ("MemoryError", "ArrowMemoryError"):
            return {"error": "memory"}
        reason = f"{GRADER_FAILED} {kind}".rstrip()
    return {"valid": bool(report.valid_submission), "reason": reason}


def _one_thread() -> None:
    """A check uses one core, as a grading process does (portal/celery.py): the web machine serves others."""
    import pyarrow
    from threadpoolctl import threadpool_limits

    pyarrow.set_cpu_count(1)
    threadpool_limits(1)


def check_in_child(job: dict[str, Any], answer_to: Connection) -> None:
    """The forked child's work: one check, its answer sent to the parent."""
    for name in list(os.environ):
        if name not in KEPT_ENVIRONMENT:
            del os.environ[name]
    try:
        _one_thread()
        answer = check(job)
    except MemoryError:
        answer = {"error": "memory"}
    except Exception as exc:  # noqa: BLE001 - ours (answers unreadable, a grader misconfigured): the parent logs it
        answer = {"error": "failed", "kind": type(exc).__name__}
    answer_to.send(answer)
    answer_to.close()
