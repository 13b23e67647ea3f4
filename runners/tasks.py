"""Hosted runs' server-side tasks (the GPU side's task lives in runners/worker/app.py)."""

from celery import shared_task

from runners import queue
from runners.services.assembly import hosted_run_assemble
from runners.services.watchdog import hosted_watchdog as watchdog_run


@shared_task(name=queue.HOSTED_ASSEMBLE, ignore_result=True)
def hosted_assemble(hosted_run_id: int) -> None:
    hosted_run_assemble(hosted_run_id=hosted_run_id)


@shared_task(ignore_result=True)
def hosted_watchdog() -> dict[str, int]:
    return watchdog_run()
