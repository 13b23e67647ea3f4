"""The one place grading puts work on the broker. Services say what should happen next; this module knows the
tasks (imported late: grading/tasks.py imports the services) and sends them after the transaction commits,
so a rolled-back change never starts work and a worker never reads rows that are not there yet."""

from django.db import transaction


def validate_after_commit(*, submission_id: int) -> None:
    from grading.tasks import validate_submission

    transaction.on_commit(lambda: validate_submission.delay(submission_id))


def finish_after_commit(*, submission_id: int) -> None:
    from grading.tasks import finish_submission

    transaction.on_commit(lambda: finish_submission.delay(submission_id))


def grade_now(*, run_ids: list[int]) -> None:
    """Runs the scheduler has just marked queued (it sends them itself, in its own order)."""
    from grading.tasks import grade_run

    for pk in run_ids:
        grade_run.delay(pk)


def validate_now(*, submission_id: int) -> None:
    """The watchdog sends again a submission whose message was lost."""
    from grading.tasks import validate_submission

    validate_submission.delay(submission_id)


def finish_now(*, submission_id: int) -> None:
    from grading.tasks import finish_submission

    finish_submission.delay(submission_id)
