"""A format check in a process of its own: `python -m grading.engine.format_check` reads one job as JSON on
stdin and writes {"valid": bool, "reason": str | null} as JSON on stdout. Never a score.

The portal's web process starts one per hosted run's format check (grading/services/grade_file.py,
format_check_isolated), so that a hostile file never runs the grader inside the web process, answers are never
loaded there, and memory and time are bounded: the address space is limited once the libraries are imported
(before the answers and the file are read), and the parent kills the process at its time limit.

The job: competition_id, submission_path, answers_path, answers_cache (a parsed-answers pickle written by the
portal, or null), grader {name, params}, honest_max_bytes, memory_bytes, threads.
"""

import json
import os
import resource
import sys
from typing import Any

GRADER_FAILED = "the grader could not score this file:"


def _limit_memory(memory_bytes: int) -> None:
    if memory_bytes > 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def check(job: dict[str, Any]) -> dict[str, Any]:
    import pickle
    from pathlib import Path

    from grading.engine import csvio
    from grading.engine.medals import MedalsUnknown
    from grading.engine.registry import GraderRef
    from grading.engine.report import grade_submission

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
    if reason and reason.startswith(GRADER_FAILED):
        # An exception's message can quote what the grader held (an answer's id or value): the agent is
        # told which exception it was, never its message.
        kind = reason[len(GRADER_FAILED) :].split(":", 1)[0].strip()
        if kind == "MemoryError":
            return {"error": "memory"}
        reason = f"{GRADER_FAILED} {kind}".rstrip()
    return {"valid": bool(report.valid_submission), "reason": reason}


def main() -> int:
    job = json.loads(sys.stdin.read())
    threads = str(int(job.get("threads") or 1))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = threads
    try:
        answer = check(job)
    except MemoryError:
        answer = {"error": "memory"}
    sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
