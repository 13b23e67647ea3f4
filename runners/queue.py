"""The one place hosted runs put work on the broker, after the transaction commits.

Tasks are sent by name, so this module imports none of them (runners/tasks.py imports the services that call
here). A task's message goes to the `gpu` queue: GPU workers run their own Celery app (runners/worker/app.py),
which knows no Django and holds no database credentials. Each message carries the capability that lets a
worker claim that attempt (runners/capability.py).
"""

from django.db import transaction

from portal.celery import app
from runners.capability import task_capability

HOSTED_TASK = "runners.hosted_task"
HOSTED_ASSEMBLE = "runners.tasks.hosted_assemble"
GPU_QUEUE = "gpu"


def _send(task_id: int, attempt: int) -> None:
    # The third argument is the claim's capability (runners/capability.py): only this message carries it.
    capability = task_capability(task_id=task_id, attempt=attempt)
    app.send_task(HOSTED_TASK, args=[task_id, attempt, capability], queue=GPU_QUEUE, ignore_result=True)


def task_enqueue_after_commit(*, task_id: int, attempt: int) -> None:
    transaction.on_commit(lambda: _send(task_id, attempt))


def assemble_after_commit(*, hosted_run_id: int) -> None:
    transaction.on_commit(lambda: app.send_task(HOSTED_ASSEMBLE, args=(hosted_run_id,), ignore_result=True))
