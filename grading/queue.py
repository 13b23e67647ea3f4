"""The one place grading puts work on the broker. Services say what should happen next; this module sends the
tasks by name (grading/tasks.py imports the services, so importing it here would close a cycle) and after the
transaction commits, so a rolled-back change never starts work and a worker never reads rows that are not there
yet. A task's routes (settings.CELERY_TASK_ROUTES) and time limits follow its name, as with `.delay()`."""

from django.db import transaction

from portal.celery import app

VALIDATE_SUBMISSION = "grading.tasks.validate_submission"
GRADE_RUN = "grading.tasks.grade_run"
FINISH_SUBMISSION = "grading.tasks.finish_submission"


def send(task: str, object_id: int) -> None:
    app.send_task(task, args=(object_id,))  # a tuple, as .delay() sends: the same message, argsrepr too


def validate_after_commit(*, submission_id: int) -> None:
    transaction.on_commit(lambda: send(VALIDATE_SUBMISSION, submission_id))


def finish_after_commit(*, submission_id: int) -> None:
    transaction.on_commit(lambda: send(FINISH_SUBMISSION, submission_id))


def grade_now(*, run_ids: list[int]) -> None:
    """Runs the scheduler has just marked queued (it sends them itself, in its own order)."""
    for pk in run_ids:
        send(GRADE_RUN, pk)


def validate_now(*, submission_id: int) -> None:
    """The watchdog sends again a submission whose message was lost."""
    send(VALIDATE_SUBMISSION, submission_id)


def finish_now(*, submission_id: int) -> None:
    send(FINISH_SUBMISSION, submission_id)
