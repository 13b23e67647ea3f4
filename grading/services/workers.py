"""Worker processes' heartbeats: how the watchdog tells a dead worker from a slow one.

Every grading pool process writes a row every WORKER_HEARTBEAT_SECONDS from a thread of its own, so it keeps
beating while its main thread grades. A run records the process that claimed it; when that process has been
silent for WORKER_LOST_SECONDS (SIGKILL, out of memory, a machine gone), the watchdog re-queues the run.
The rows live in the database, so this works the same on the embedded defaults (SQLite) and on PostgreSQL.
"""

import logging
import os
import socket
import threading
import time
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from grading.models import WorkerHeartbeat

logger = logging.getLogger(__name__)
# Rows of processes gone this long are deleted; by then the watchdog has long re-queued their runs.
HEARTBEAT_KEPT = timedelta(days=1)

_name: tuple[int, str] | None = None
_beating_pid: int | None = None


def worker_name() -> str:
    """This process's name, host:pid:nonce (the nonce tells apart a restarted container reusing the pid)."""
    global _name
    if _name is None or _name[0] != os.getpid():
        _name = (os.getpid(), f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}")
    return _name[1]


def worker_beat(*, name: str | None = None) -> None:
    name = name or worker_name()
    now = timezone.now()
    if not WorkerHeartbeat.objects.filter(name=name).update(beat_at=now):
        WorkerHeartbeat.objects.update_or_create(name=name, defaults={"beat_at": now})


def heartbeat_start() -> None:
    """Beat from a daemon thread of this process, once per process (called in each new pool process)."""
    global _beating_pid
    if _beating_pid == os.getpid():
        return
    _beating_pid = os.getpid()
    threading.Thread(target=_beat_forever, name="grading-heartbeat", daemon=True).start()


def _beat_forever() -> None:
    while True:
        try:
            connection.close_if_unusable_or_obsolete()
            worker_beat()
        except Exception:  # a database hiccup must not stop the beating; the next beat tries again
            logger.warning("worker heartbeat failed", exc_info=True)
        time.sleep(settings.WORKER_HEARTBEAT_SECONDS)


def workers_alive(*, now: datetime | None = None) -> QuerySet:
    """Names of the processes that beat within WORKER_LOST_SECONDS, as a subquery."""
    since = (now or timezone.now()) - timedelta(seconds=settings.WORKER_LOST_SECONDS)
    return WorkerHeartbeat.objects.filter(beat_at__gte=since).values("name")


def heartbeats_prune(*, now: datetime | None = None) -> int:
    return WorkerHeartbeat.objects.filter(beat_at__lt=(now or timezone.now()) - HEARTBEAT_KEPT).delete()[0]
