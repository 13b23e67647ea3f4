"""The worker's heartbeat: register its capacity, then report its running tasks every heartbeat_seconds.

The portal counts a worker alive by its beats (its watchdog re-queues the tasks of a silent one) and answers
each beat with the tasks to cancel. A beat that fails is logged and tried again at the next interval: a
portal that is down for a while must not take the worker, and the agents it runs, down with it.
"""

import logging
import threading
from typing import Any

from runners.worker.client import PortalClient, PortalRefused
from runners.worker.config import WorkerConfig
from runners.worker.execute import REGISTRY, Registry
from runners.worker.measure import measure

log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_SECONDS = 15.0


class Heartbeat:
    def __init__(self, client: PortalClient, config: WorkerConfig, *, registry: Registry = REGISTRY) -> None:
        self.client = client
        self.config = config
        self.registry = registry
        self.interval = DEFAULT_HEARTBEAT_SECONDS
        self.registered = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def register(self) -> bool:
        """POST register/ with what it declares and what it measured of itself; True when the portal took it (and
        then the interval is the portal's)."""
        try:
            answer = self.client.register({**self.config.capacity(), "measured": measure()})
        except Exception as exc:
            log.warning("register with %s failed: %s; trying again in %gs", self.client.portal_url, exc, self.interval)
            return False
        self.interval = float(answer.get("heartbeat_seconds") or DEFAULT_HEARTBEAT_SECONDS)
        self.registered = True
        log.info("registered as %s; beating every %gs", answer.get("worker"), self.interval)
        if answer.get("approved") is False:
            log.warning("%s is not approved yet: %s", answer.get("worker"), answer.get("approval"))
        return True

    def beat(self) -> list[dict[str, Any]]:
        """One heartbeat; the cancel entries it answered, after passing them to the registry."""
        try:
            answer = self.client.heartbeat(self.registry.running())
        except PortalRefused as exc:
            # The portal forgot this worker (its row was removed, or it restarted on an empty database).
            log.warning("heartbeat refused (%s); registering again", exc)
            self.registered = False
            return []
        except Exception as exc:
            log.warning("heartbeat failed: %s; trying again in %gs", exc, self.interval)
            return []
        cancels = [entry for entry in answer.get("cancel") or [] if isinstance(entry, dict)]
        for entry in cancels:
            task_id, attempt = int(entry["task_id"]), int(entry["attempt"])
            if self.registry.cancel(task_id, attempt):
                log.info("task %s attempt %s: cancel requested by the portal", task_id, attempt)
        return cancels

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.registered or self.register():
                    self.beat()
            except Exception:  # a bug here must not end the beats
                log.exception("heartbeat loop error")
            self._stop.wait(self.interval)

    def start(self) -> "Heartbeat":
        """Beat in a daemon thread; registering happens there too, so a worker starts even when the portal is
        down and registers as soon as it comes back."""
        self._thread = threading.Thread(target=self._loop, name="portal-heartbeat", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
