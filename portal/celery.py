import os
import time
from typing import Any

from celery import Celery
from celery.signals import task_received, worker_process_init, worker_ready, worker_shutting_down
from celery.worker import state

from runners.worker.alive import alive_start, alive_stop

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _one_grading_process_per_core(**_: Any) -> None:
    """Each pool process grades with GRADING_THREADS threads (default 1): machines scale by running one
    worker process per core, and threads inside each (Arrow's CSV reader, BLAS) would only fight them."""
    from django.conf import settings

    threads = settings.GRADING_THREADS
    try:
        import pyarrow

        pyarrow.set_cpu_count(threads)
    except ImportError:
        pass
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)


@worker_process_init.connect
def _beat_while_alive(**_: Any) -> None:
    """Each pool process says it is alive, so the watchdog re-queues the runs of one that died."""
    from grading.services.workers import heartbeat_start

    heartbeat_start()


@worker_process_init.connect
def _alive_in_each_pool_process(**_: Any) -> None:
    alive_start("grading")


# When the main process's consumer last took a message; beat sends the watchdog every WATCHDOG_SECONDS, so a
# consumer that works takes one at least that often, busy or idle.
_last_taken = [time.monotonic()]


@task_received.connect
def _the_consumer_took_a_message(**_: Any) -> None:
    _last_taken[0] = time.monotonic()


def consumer_moving(*, now: float | None = None) -> bool:
    """The consumer took a message within max(WORKER_LOST_SECONDS, 3 watchdog periods), or every message it
    took is still running (a full pool takes nothing more, and its processes say they are alive themselves)."""
    from django.conf import settings

    window = max(settings.WORKER_LOST_SECONDS, 3 * settings.WATCHDOG_SECONDS)
    return bool(state.active_requests) or (now or time.monotonic()) - _last_taken[0] < window


@worker_ready.connect
def _alive_in_the_main_process(**_: Any) -> None:
    """The main process takes the messages: scripts/run tells a wedged worker by it (runners/worker/alive.py),
    also one whose consumer is stuck while the process's other threads run."""
    _last_taken[0] = time.monotonic()
    alive_start("grading", moving=consumer_moving)


@worker_shutting_down.connect
def _not_alive_once_shutting_down(**_: Any) -> None:
    alive_stop()


@worker_ready.connect
def _beat_in_the_main_process_when_it_grades(sender: Any, **_: Any) -> None:
    """With the solo or thread pools the tasks run in the worker's main process: it beats for them."""
    from celery.concurrency.prefork import TaskPool

    if not isinstance(sender.pool, TaskPool):
        _beat_while_alive()
