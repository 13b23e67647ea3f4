"""Hosted runs' and tasks' statuses move only through their transition tables; grading tells runners when a
hosted run's submission is final."""

import ast
from pathlib import Path

import pytest
from django.utils import timezone

from competitions.models import Competition
from grading.models import Submission
from grading.services.submissions import submission_transition
from runners.models import HostedRun, HostedTask
from runners.services.transitions import (
    RUN_TRANSITIONS,
    TASK_TRANSITIONS,
    IllegalTransition,
    hosted_run_transition,
    hosted_tasks_transition,
)
from tests.grading.builders import grading_submission, loaded_benchmark

RUNNERS = Path(__file__).resolve().parents[2] / "runners"
R = HostedRun.Status
T = HostedTask.Status


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


def hosted_run(team, *, status: str = R.QUEUED, submission: Submission | None = None) -> HostedRun:
    run = HostedRun.objects.create(
        team=team,
        benchmark=loaded_benchmark(),
        image="agent:1",
        split="low",
        seeds=1,
        time_limit_hours=1,
        status=status,
        submission=submission,
    )
    competition = Competition.objects.get(slug="spooky-author-identification")
    HostedTask.objects.create(hosted_run=run, competition=competition, seed=0, queued_at=timezone.now())
    return run


def test_every_status_has_its_moves_and_a_final_one_has_none():
    assert set(RUN_TRANSITIONS) == set(R.values)
    assert set(TASK_TRANSITIONS) == set(T.values)
    assert all(not RUN_TRANSITIONS[status] for status in HostedRun.FINAL_STATUSES)
    assert all(not TASK_TRANSITIONS[status] for status in HostedTask.FINAL_STATUSES)


def test_an_illegal_move_is_refused_and_a_lost_race_changes_nothing(registry, alice):
    run = hosted_run(alice.teams.get())
    with pytest.raises(IllegalTransition, match="cannot go from queued to grading"):
        hosted_run_transition(hosted_run_id=run.pk, to=R.GRADING, expected=(R.QUEUED,))
    with pytest.raises(IllegalTransition, match="cannot go from done to running"):
        hosted_tasks_transition(tasks=run.tasks.all(), to=T.RUNNING, expected=(T.DONE,))
    assert hosted_run_transition(hosted_run_id=run.pk, to=R.CANCELLED, reason="cancelled by the team")
    assert not hosted_run_transition(hosted_run_id=run.pk, to=R.CANCELLED, reason="again")
    run.refresh_from_db()
    assert (run.status, run.status_reason) == (R.CANCELLED, "cancelled by the team") and run.finished_at
    assert hosted_tasks_transition(tasks=run.tasks.all(), to=T.CANCELLED, expected=(T.QUEUED,)) == 1
    assert run.tasks.get().finished_at is not None


def test_a_hosted_run_is_done_when_grading_says_its_submission_is_final(registry, alice):
    team = alice.teams.get()
    submission = grading_submission(team, runs=0, status=Submission.Status.GRADING)
    run = hosted_run(team, status=R.GRADING, submission=submission)
    assert submission_transition(submission_id=submission.pk, to=Submission.Status.CHECKING)
    assert HostedRun.objects.get(pk=run.pk).status == R.GRADING  # not final yet
    assert submission_transition(submission_id=submission.pk, to=Submission.Status.FAILED, reason="a test")
    run.refresh_from_db()
    assert run.status == R.DONE and run.finished_at is not None


def _assigned(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [leaf for element in target.elts for leaf in _assigned(element)]
    return [target.value] if isinstance(target, ast.Starred) else [target]


def _status_writes(path: Path) -> list[str]:
    """Where a module writes a status: `x.status = …`, or `status=` passed to update() or create(). An
    exception's own `self.status` (the HTTP status it answers) is no row's."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(
                isinstance(leaf, ast.Attribute)
                and leaf.attr == "status"
                and not (isinstance(leaf.value, ast.Name) and leaf.value.id == "self")
                for target in targets
                for leaf in _assigned(target)
            ):
                found.append(f"{path.name}:{node.lineno}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update", "create", "get_or_create", "update_or_create", "bulk_update")
            and any(keyword.arg == "status" for keyword in node.keywords)
        ):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_status_of_a_hosted_run_or_task_is_written_but_through_the_transitions():
    modules = [
        path
        for path in sorted(RUNNERS.rglob("*.py"))
        if "migrations" not in path.parts and "worker" not in path.parts and path.name != "transitions.py"
    ]
    assert [write for path in modules for write in _status_writes(path)] == []
