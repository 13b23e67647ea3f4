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


# A random audit's tasks go at the broker's lowest priority (Redis: 9 is last of the steps 0, 3, 6, 9); the claim
# is what keeps them below teams' tasks (runners/services/workers.py), this only spares the worker the refusals.
AUDIT_PRIORITY = 9


def _send(task_id: int, attempt: int, audit: bool = False) -> None:
    # The third argument is the claim's capability (runners/capability.py): only this message carries it.
    capability = task_capability(task_id=task_id, attempt=attempt)
    extra = {"priority": AUDIT_PRIORITY} if audit else {}
    app.send_task(HOSTED_TASK, args=[task_id, attempt, capability], queue=GPU_QUEUE, ignore_result=True, **extra)


def task_enqueue_after_commit(*, task_id: int, attempt: int, audit: bool = False) -> None:
    transaction.on_commit(lambda: _send(task_id, attempt, audit))


def assemble_after_commit(*, hosted_run_id: int) -> None:
    transaction.on_commit(lambda: app.send_task(HOSTED_ASSEMBLE, args=(hosted_run_id,), ignore_result=True))
