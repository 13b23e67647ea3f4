"""The format check's own verdict (grading/engine/format_check.py), called in this process: what an agent is
told when a grader fails on its file. The isolated process around it is tested with the worker API
(tests/runners/test_worker_api_trust.py)."""

from pathlib import Path

import pytest

from grading.engine import format_check, registry

ANSWER_ID = "answer-only-id-7f3a"


@pytest.fixture
def leaky_grader(monkeypatch):
    """A grader whose exception quotes the answers, as a KeyError or a library's ValueError can."""

    def grade(submission, answers, **_):
        raise ValueError(f"unexpected label for {answers['id'].iloc[0]}")

    monkeypatch.setitem(registry._GRADERS, "leaky_for_tests", grade)
    return "leaky_for_tests"


def _job(tmp_path: Path, grader: str) -> dict:
    (tmp_path / "answers.csv").write_text(f"id,label\n{ANSWER_ID},1\n")
    (tmp_path / "submission.csv").write_text("id,label\nmine,0\n")
    return {
        "competition_id": "demo",
        "submission_path": str(tmp_path / "submission.csv"),
        "answers_path": str(tmp_path / "answers.csv"),
        "answers_cache": None,
        "grader": {"name": grader, "params": {}},
        "honest_max_bytes": None,
        "memory_bytes": 0,
    }


def test_a_grader_failure_is_told_by_its_type_never_its_message(tmp_path, leaky_grader):
    answer = format_check.check(_job(tmp_path, leaky_grader))

    assert answer == {"valid": False, "reason": "the grader could not score this file: ValueError"}
    assert ANSWER_ID not in str(answer)
