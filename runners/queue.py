"""The one place hosted runs put work on the broker, after the transaction commits.

A task's message goes to the `gpu` queue by name: GPU workers run their own Celery app
(runners/worker/app.py), which knows no Django and holds no database credentials. Each message carries
the capability that lets a worker claim that attempt (runners/capability.py).
"""

from django.db import transaction

from runners.capability import task_capability

HOSTED_TASK = "runners.hosted_task"
GPU_QUEUE = "gpu"


def _send(task_id: int, attempt: int) -> None:
    from portal.celery import app

    # The third argument is the claim's capability (runners/capability.py): only this message carries it.
    capability = task_capability(task_id=task_id, attempt=attempt)
    app.send_task(HOSTED_TASK, args=[task_id, attempt, capability], queue=GPU_QUEUE, ignore_result=True)


def task_enqueue_after_commit(*, task_id: int, attempt: int) -> None:
    transaction.on_commit(lambda: _send(task_id, attempt))


def assemble_after_commit(*, hosted_run_id: int) -> None:
    from runners.tasks import hosted_assemble

    transaction.on_commit(lambda: hosted_assemble.delay(hosted_run_id))
