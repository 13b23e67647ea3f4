"""A sign of life for scripts/run: a worker process that stops touching its file is wedged, and is replaced.

With PORTAL_ALIVE_DIR set (scripts/run sets it), each worker process (the grading worker's main process and
pool processes, the GPU worker) touches <PORTAL_ALIVE_DIR>/<kind>-<pid> every ALIVE_SECONDS from a thread of
its own, apart from its database or portal heartbeat, so a slow database or portal never makes it look
wedged. A process that is stopped, a zombie left unreaped, or a main process in a warm shutdown (it stops
touching then: a shutdown that never ends is one way to wedge) goes stale; scripts/run restarts the worker
whose file is older than its lost time (WORKER_LOST_SECONDS, HOSTED_WORKER_LOST_SECONDS). A process may also
say what counts as moving (`moving`): the grading worker's main process touches only while its consumer takes
messages, so a consumer stuck while the process's other threads run goes stale too.

Framework-free: the GPU worker imports it as well as the portal.
"""

import os
import threading
from collections.abc import Callable
from pathlib import Path

ALIVE_SECONDS = 2.0

_started_in: int | None = None
_stopping = threading.Event()


def alive_start(kind: str, moving: Callable[[], bool] | None = None) -> None:
    """Touch this process's file from a daemon thread while `moving()` (when given) says the process makes
    progress; once per process, nothing without PORTAL_ALIVE_DIR."""
    global _started_in
    folder = os.environ.get("PORTAL_ALIVE_DIR")
    if not folder or _started_in == os.getpid():
        return
    _started_in = os.getpid()
    _stopping.clear()  # a forked pool process inherits its parent's state
    path = Path(folder) / f"{kind}-{os.getpid()}"
    path.parent.mkdir(parents=True, exist_ok=True)
    threading.Thread(target=_touch_forever, args=(path, moving), name="alive", daemon=True).start()


def alive_stop() -> None:
    """The worker is shutting down: it stops saying it is alive, so a shutdown that hangs is noticed."""
    _stopping.set()


def _touch_forever(path: Path, moving: Callable[[], bool] | None) -> None:
    while not _stopping.is_set():
        try:
            if moving is None or moving():
                path.touch()
        except OSError:
            pass  # the folder went away: the supervisor that reads it is gone too
        _stopping.wait(ALIVE_SECONDS)
