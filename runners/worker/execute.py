"""Running one hosted task on this worker, from claim to finish.

run_task() claims the task (the server's conditional update decides whether this delivery is the one to run),
fetches the competition's public data once per sha256, prepares the task's folder, starts the format-check
oracle and the agent, supervises it (deadline, output cap, cancel), saves and redacts its output, collects
the archive and posts the outcome. Whatever happens after the claim, the portal hears an outcome and the
worker keeps nothing: the agent, its folder and its archive are removed at the end.

The registry holds the tasks running in this process: the heartbeat thread reports them and passes on the
cancel requests the portal answers with.
"""

import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.redaction import redact, redact_tail, redact_tree, redaction_table, secret_values
from runners.worker.backends.base import Backend, BackendError, Handle, RunPaths, RunSpec
from runners.worker.client import PortalClient, PortalRefused
from runners.worker.collect import OverCap, collect, tree_bytes
from runners.worker.config import WorkerConfig
from runners.worker.oracle import OracleServer
from runners.worker.public_data import DataCache, remove_tree

log = logging.getLogger(__name__)

VALIDATE_SCRIPT = Path(__file__).resolve().parent / "validate_submission.sh"
TAIL_BYTES = 4096


class DoesNotFit(Exception):
    """The portal says this worker's free capacity is too small for the task: send it back to the queue."""


DOES_NOT_FIT_LOG_EVERY = 60  # a task that waits long is logged at info once in so many requeues (5 min), not each


def does_not_fit_level(retries: int) -> int:
    """The log level of a task's requeue number `retries` (from 0): info the first time and once every
    DOES_NOT_FIT_LOG_EVERY, debug between, so a task no worker can hold does not fill the log every 5 s."""
    return logging.INFO if retries % DOES_NOT_FIT_LOG_EVERY == 0 else logging.DEBUG


# --- the tasks running in this process -------------------------------------------------------------------


@dataclass
class RunningTask:
    task_id: int
    attempt: int
    secrets: dict[str, str]
    cancel: threading.Event = field(default_factory=threading.Event)
    handle: Handle | None = None
    started: float | None = None  # time.monotonic() when the agent started
    stopped: float | None = None  # and when it stopped

    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.stopped or time.monotonic()) - self.started

    def tail(self, max_bytes: int = TAIL_BYTES) -> str:
        """The agent's last output, redacted; read a bit more than max_bytes so a cut secret is not shown."""
        if self.handle is None:
            return ""
        longest = max((len(value.encode()) for value in redaction_table(self.secrets)), default=0)
        window = max_bytes + longest
        raw = self.handle.output_tail(window)
        truncated = len(raw.encode("utf-8", errors="replace")) >= window - 3
        return redact_tail(raw, self.secrets, truncated=truncated)[-max_bytes:]


class Registry:
    """Thread-safe: task threads add and remove, the heartbeat thread reports and cancels."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[tuple[int, int], RunningTask] = {}

    def add(self, task_id: int, attempt: int, secrets: dict[str, str]) -> RunningTask:
        task = RunningTask(task_id, attempt, secrets)
        with self._lock:
            self._tasks[(task_id, attempt)] = task
        return task

    def remove(self, task_id: int, attempt: int) -> None:
        with self._lock:
            self._tasks.pop((task_id, attempt), None)

    def cancel(self, task_id: int, attempt: int) -> bool:
        """Ask the task's supervisor to kill it; False when this process does not run it."""
        with self._lock:
            task = self._tasks.get((task_id, attempt))
        if task is None:
            return False
        task.cancel.set()
        return True

    def running(self) -> list[dict[str, Any]]:
        """The heartbeat's "running" list."""
        with self._lock:
            tasks = list(self._tasks.values())
        return [
            {
                "task_id": task.task_id,
                "attempt": task.attempt,
                "elapsed_seconds": round(task.elapsed(), 1),
                "output_tail": task.tail(),
            }
            for task in tasks
        ]


REGISTRY = Registry()


# --- one task ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    status: str  # exited | timed_out | cancelled | over_cap | failed
    exit_code: int | None
    reason: str


def task_home(work_dir: Path, task_id: int, attempt: int) -> Path:
    return work_dir / "tasks" / f"{task_id}-{attempt}"


def prepare_task(home: Path, data: Path) -> RunPaths:
    """A fresh folder for the task; the writable ones are open to all because a container's user may not be
    the worker's (the work dir above them is the worker's own)."""
    remove_tree(home)
    home.mkdir(parents=True)
    paths = RunPaths(
        home=home,
        data=data,
        submission=home / "submission",
        logs=home / "logs",
        code=home / "code",
        oracle_dir=home / "oracle",
        validate_script=home / "validate_submission.sh",
    )
    for folder in (paths.submission, paths.logs, paths.code):
        folder.mkdir()
        os.chmod(folder, 0o777)
    paths.oracle_dir.mkdir()
    os.chmod(paths.oracle_dir, 0o755)
    shutil.copyfile(VALIDATE_SCRIPT, paths.validate_script)
    os.chmod(paths.validate_script, 0o555)
    return paths


def run_spec(spec: dict[str, Any]) -> RunSpec:
    return RunSpec(
        task_id=int(spec["task_id"]),
        attempt=int(spec["attempt"]),
        image=str(spec["image"]),
        competition_id=str(spec["competition_id"]),
        env={str(name): str(value) for name, value in (spec.get("env") or {}).items()},
        time_limit_seconds=float(spec["time_limit_seconds"]),
        gpus=int(spec.get("gpus") or 0),
        cpus=float(spec.get("cpus") or 0),
        memory_gb=float(spec.get("memory_gb") or 0),
        shm_gb=float(spec.get("shm_gb") or 0),
        network=bool(spec.get("network")),
        max_output_bytes=int(spec["max_output_bytes"]),
        processes=int(spec.get("processes") or 0),
    )


def output_bytes(paths: RunPaths, handle: Handle) -> int:
    return tree_bytes([paths.submission, paths.logs, paths.code]) + handle.written_bytes()


def supervise(handle: Handle, task: RunningTask, spec: RunSpec, paths: RunPaths, *, poll_seconds: float) -> Verdict:
    """Wait for the agent to exit, killing it at the deadline, past the output cap or on cancel."""
    while True:
        code = handle.exit_code()
        if code is not None:
            limit = handle.exit_reason(code)
            if limit is not None:
                return Verdict("failed", code, limit)
            return Verdict("exited", code, f"the agent exited with code {code}")
        if task.cancel.is_set():
            handle.kill()
            return Verdict("cancelled", handle.exit_code(), "cancelled on the portal while the agent ran")
        if task.elapsed() > spec.time_limit_seconds:
            handle.kill()
            return Verdict(
                "timed_out", handle.exit_code(), f"stopped after the time limit of {spec.time_limit_seconds:g} s"
            )
        breach = handle.over_limit()
        if breach is not None:
            handle.kill()
            return Verdict("failed", handle.exit_code(), breach)
        size = output_bytes(paths, handle)
        if size > spec.max_output_bytes:
            handle.kill()
            reason = f"stopped: the outputs reached {size} bytes, over the cap of {spec.max_output_bytes} bytes"
            return Verdict("over_cap", handle.exit_code(), reason)
        task.cancel.wait(poll_seconds)


def _start_and_supervise(backend: Backend, task: RunningTask, spec: RunSpec, paths: RunPaths, poll: float) -> Verdict:
    if task.cancel.is_set():
        return Verdict("cancelled", None, "cancelled on the portal before the agent started")
    try:
        task.handle = backend.start(spec, paths)
    except BackendError as exc:
        return Verdict("failed", None, str(exc))
    except Exception as exc:
        log.exception("task %s: the %s backend failed to start the agent", spec.task_id, backend.name)
        return Verdict("failed", None, f"the {backend.name} backend could not start the agent: {exc}")
    task.started = time.monotonic()
    return supervise(task.handle, task, spec, paths, poll_seconds=poll)


def _collect(
    verdict: Verdict, paths: RunPaths, archive: Path, spec: RunSpec, secrets: dict[str, str]
) -> tuple[Verdict, Path | None]:
    """Redact, then archive unless the outputs are over the cap (then no archive, status over_cap)."""
    redact_tree([paths.home / "run.log", paths.submission, paths.logs, paths.code], secrets)
    if verdict.status == "over_cap":
        return verdict, None
    try:
        collect(paths.home, archive, max_bytes=spec.max_output_bytes)
    except OverCap as exc:
        return Verdict("over_cap", verdict.exit_code, f"{verdict.reason}; not collected: {exc}"), None
    return verdict, archive


@contextmanager
def _oracle(paths: RunPaths, client: PortalClient, spec: RunSpec) -> Iterator[OracleServer]:
    oracle = OracleServer(
        paths.oracle_dir / "oracle.sock",
        forward=lambda csv: client.validate(spec.task_id, spec.attempt, csv),
        log_path=paths.logs / "format_checks.jsonl",
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


def _run(
    raw_spec: dict[str, Any],
    task: RunningTask,
    home: Path,
    archive: Path,
    *,
    config: WorkerConfig,
    client: PortalClient,
    backend: Backend,
) -> tuple[Verdict, Path | None]:
    """Everything between claim and finish; an error of the worker's own becomes a failed verdict."""
    try:
        spec = run_spec(raw_spec)
        data = DataCache(config.work_dir / "data", client).ensure(spec.competition_id, raw_spec["public_data"])
        paths = prepare_task(home, data)
        with _oracle(paths, client, spec):
            verdict = _start_and_supervise(backend, task, spec, paths, config.poll_seconds)
            if task.handle is not None:
                task.handle.kill()
                task.stopped = time.monotonic()
                task.handle.save_output(home / "run.log")
        nonce_first(home / "run.log", (raw_spec.get("registration") or {}).get("nonce") or "")
        return _collect(verdict, paths, archive, spec, task.secrets)
    except Exception as exc:
        log.exception("task %s attempt %s: the worker could not run it", task.task_id, task.attempt)
        return Verdict("failed", None, f"the worker could not run the task: {exc}"), None


def nonce_first(run_log: Path, nonce: str) -> None:
    """The hosted run's registration nonce as the first line of run.log (SPEC section 9), the agent's output
    after it; a run.log of the nonce alone when the agent left no output. Nothing without a registration."""
    if not nonce:
        return
    agent_output = run_log.with_name("run.log.agent")
    agent_output.unlink(missing_ok=True)  # the worker's name: whatever the agent left there is not its output
    if run_log.is_symlink():  # never read through a link the agent made
        run_log.unlink()
    if run_log.exists():
        run_log.rename(agent_output)
    with run_log.open("wb") as target:
        target.write(nonce.encode() + b"\n")
        if agent_output.exists():
            with agent_output.open("rb") as source:
                shutil.copyfileobj(source, target, 1 << 20)
    agent_output.unlink(missing_ok=True)


def without_folders(text: str, config: WorkerConfig) -> str:
    """A reason as the team reads it: the worker's own folders are the operator's business, not the team's."""
    for folder, word in ((config.work_dir, "[work dir]"), (config.agents_dir, "[agents dir]")):
        for form in {str(folder), str(Path(folder).resolve())}:
            text = text.replace(form, word)
    return text


def _claim(client: PortalClient, task_id: int, attempt: int, capability: str) -> dict[str, Any] | None:
    try:
        return client.claim(task_id, attempt, capability)
    except PortalRefused as exc:
        if exc.status == 409 and exc.code in ("does_not_fit", "not_approved"):
            raise DoesNotFit(exc.message) from None  # back to the queue, for this worker later or another
        if exc.status == 409 and exc.code == "not_queued":
            log.info("task %s attempt %s is not queued any more (%s): skipped", task_id, attempt, exc.message)
            return None
        if exc.status == 403 and exc.code.startswith("capability_"):
            log.warning("task %s attempt %s: the portal refused the message's capability: skipped", task_id, attempt)
            return None
        raise


def run_task(
    task_id: int,
    attempt: int,
    *,
    config: WorkerConfig,
    client: PortalClient,
    backend: Backend,
    registry: Registry = REGISTRY,
    capability: str,
) -> dict[str, Any] | None:
    """Run one task to its end and return the outcome posted to finish/; None when it was not ours to run.
    capability: the queue message's, which the claim carries.

    Raises DoesNotFit when the portal says the task does not fit this worker's free capacity now.
    """
    spec = _claim(client, task_id, attempt, capability)
    if spec is None:
        return None
    claimed = time.monotonic()
    secrets = secret_values(spec.get("env") or {}, spec.get("secret_names") or [])
    task = registry.add(task_id, attempt, secrets)
    home = task_home(config.work_dir, task_id, attempt)
    archive = home.with_name(f"{home.name}.tar.gz")
    try:
        verdict, collected = _run(spec, task, home, archive, config=config, client=client, backend=backend)
        outcome = {
            "attempt": attempt,
            "status": verdict.status,
            "exit_code": verdict.exit_code,
            "reason": redact(without_folders(verdict.reason, config), secrets),
            "elapsed_seconds": round(task.elapsed(), 3),
            # The portal's own overhead, as the worker sees it (benchmarks/hosted_overhead.py).
            "setup_seconds": round(task.started - claimed, 3) if task.started else None,
            "collect_seconds": round(time.monotonic() - task.stopped, 3) if task.stopped else None,
            # The agent's last output as it ended: one that ended between heartbeats (an exit 1 in its first
            # seconds) would show none on the run page without it.
            "output_tail": task.tail(),
        }
        log.info("task %s attempt %s: %s (%s)", task_id, attempt, verdict.status, outcome["reason"])
        try:
            client.finish(task_id, outcome, collected)
        except PortalRefused as exc:
            if exc.status != 409:
                raise
            # The portal ended or re-queued the task meanwhile (its watchdog); this attempt's report is moot.
            log.warning("task %s attempt %s: the portal no longer holds it for this worker: %s", task_id, attempt, exc)
        return outcome
    finally:
        registry.remove(task_id, attempt)
        if task.handle is not None:
            task.handle.remove()
        remove_tree(home)
        archive.unlink(missing_ok=True)
