"""The GPU worker's own Celery app: `celery -A runners.worker.app worker -Q gpu -P threads -c <slots>`.

It shares only the broker with the portal (runners.worker.config.broker_settings: CELERY_BROKER_URL, else
REDIS_URL, else the filesystem broker under RUNNER_BROKER_DIR) and imports no Django: the worker machine
holds a worker token, not the portal's settings or database credentials.

Messages are acknowledged early and no results are kept: the portal is the source of truth for every task
and re-queues lost work itself, so a message redelivered after a worker crash would only be refused by the
claim anyway.
"""

import functools
import hashlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import Celery, Task
from celery.signals import celeryd_after_setup, worker_init, worker_ready, worker_shutting_down

from runners.worker.alive import alive_start, alive_stop
from runners.worker.backends.base import Backend, BackendError
from runners.worker.backends.process import ProcessBackend
from runners.worker.client import PortalClient
from runners.worker.config import ConfigError, WorkerConfig, broker_settings
from runners.worker.execute import DOES_NOT_FIT_LOG_EVERY, DoesNotFit, does_not_fit_level, run_task
from runners.worker.heartbeat import Heartbeat

log = logging.getLogger(__name__)

QUEUE = "gpu"
TASK_NAME = "runners.hosted_task"
# A task that does not fit now goes back to the queue for this long: another worker, or this one with a slot
# freed, takes it; the server fails tasks that no worker took within HOSTED_QUEUE_TIMEOUT.
REQUEUE_SECONDS = 5

app = Celery("runners.worker")
app.conf.update(
    **broker_settings(),
    task_default_queue=QUEUE,
    task_routes={TASK_NAME: {"queue": QUEUE}},
    task_ignore_result=True,
    task_acks_late=False,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
)


@dataclass(frozen=True)
class Worker:
    config: WorkerConfig
    backend: Backend


def make_backend(config: WorkerConfig) -> Backend:
    if config.backend == "docker":
        from runners.worker.backends.docker import DockerBackend  # the docker SDK only where it is used

        # The label names this worker's containers without giving the token away.
        return DockerBackend(worker_label=hashlib.sha256(config.token.encode()).hexdigest()[:16])
    try:
        backend = ProcessBackend(
            agents_dir=config.agents_dir,
            sandbox=config.process_sandbox,
            agent_uid=config.agent_uid,
            max_processes=config.max_processes,
            cpus=config.cpus,
            memory_gb=config.memory_gb,
        )
    except BackendError as exc:  # no sandbox to be had here: the worker does not start, and says why
        raise ConfigError(str(exc)) from None
    if config.process_sandbox == "bwrap":
        for name, folder in (("RUNNER_WORK_DIR", config.work_dir), ("RUNNER_PROCESS_AGENTS_DIR", config.agents_dir)):
            if not os.path.ismount(folder):
                log.warning(
                    "%s=%s is not a filesystem of its own: agents read its path in their mount table "
                    "(/proc/self/mountinfo); mount a filesystem there to hide it (README, process backend)",
                    name,
                    folder,
                )
    return backend


@functools.cache
def worker() -> Worker:
    """The configuration and backend, built once per process from the environment."""
    config = WorkerConfig.from_env()
    config.work_dir.mkdir(parents=True, exist_ok=True)
    return Worker(config=config, backend=make_backend(config))


def client_for(config: WorkerConfig) -> PortalClient:
    return PortalClient(config.portal_url, config.token)


@app.task(name=TASK_NAME, bind=True, ignore_result=True, acks_late=False, max_retries=None)
def hosted_task(self: Task, task_id: int, attempt: int, capability: str = "") -> None:
    """Run one hosted task (runners.worker.execute.run_task); one that does not fit is sent back, unbounded,
    with the same arguments (the capability included). A message without a capability (queued before
    capabilities existed) is refused by the portal, which queues the task again in time."""
    current = worker()
    try:
        run_task(
            task_id,
            attempt,
            capability=capability,
            config=current.config,
            client=client_for(current.config),
            backend=current.backend,
        )
    except DoesNotFit as exc:
        log.log(
            does_not_fit_level(self.request.retries),
            "task %s attempt %s does not fit this worker now (%s): back to the queue for %ss (time %d; said "
            "again every %d times, the run page gives the team the reason)",
            task_id,
            attempt,
            exc,
            REQUEUE_SECONDS,
            self.request.retries + 1,
            DOES_NOT_FIT_LOG_EVERY,
        )
        raise self.retry(countdown=REQUEUE_SECONDS, max_retries=None) from None


@worker_init.connect
def _check_the_configuration(**_: Any) -> None:
    """A bad variable stops the worker before it takes any message, naming the variable."""
    try:
        worker()
    except ConfigError as exc:
        raise SystemExit(f"GPU worker configuration: {exc}") from None


@celeryd_after_setup.connect
def _wait_for_the_portal(**_: Any) -> None:
    """Take no message before the portal answers: a worker started beside it (scripts/run) is up before its
    web server, and a claim sent then would only fail. Quiet while it waits; one clear line if it never came."""
    config = worker().config
    if config.portal_wait_seconds <= 0:
        return
    started = time.monotonic()
    error = client_for(config).wait_until_up(timeout=config.portal_wait_seconds)
    if error is None:
        log.info("GPU worker: the portal at %s answers (after %.1fs)", config.portal_url, time.monotonic() - started)
    else:
        log.error(
            "GPU worker: the portal at %s did not answer /healthz within %gs (RUNNER_PORTAL_WAIT_SECONDS); last "
            "error: %s. Check PORTAL_URL and that the portal runs; starting anyway, and registering as soon as it "
            "answers.",
            config.portal_url,
            config.portal_wait_seconds,
            error,
        )


_heartbeat: list[Heartbeat] = []


@worker_ready.connect
def _start_the_heartbeat(sender: Any = None, **_: Any) -> None:
    """The heartbeat reports and cancels the tasks of this process's registry: tasks must run in this process."""
    pool = getattr(sender, "pool", None)
    if pool is not None and type(pool).__module__.endswith("prefork"):
        log.error("GPU worker: start it with -P threads; in prefork children the heartbeat cannot see its tasks")
    config = worker().config
    log.info(
        "GPU worker: %s backend, work dir %s, capacity %s", config.backend, Path(config.work_dir), config.capacity()
    )
    remove_orphans = getattr(worker().backend, "remove_orphans", None)
    if remove_orphans is not None:
        remove_orphans()  # nothing runs yet: what carries this worker's label is left from a crash
    _heartbeat.append(Heartbeat(client_for(config), config).start())
    alive_start("gpu")


@worker_shutting_down.connect
def _stop_the_heartbeat(**_: Any) -> None:
    alive_stop()
    while _heartbeat:
        _heartbeat.pop().stop()
