"""The Docker backend: one container per task attempt, isolated from the network and from the worker's files.

The container sees only the task's folders (public data read-only, submission/logs/code writable, the format
check's socket and script); the portal's answers live on the portal, never on a worker, and nothing of the
worker's own disk is mounted. The agent runs the image's own command (MLE-bench images: ``bash
/home/agent/start.sh``), possibly as root inside the container, so the supervisor watches two things the agent
could fill: the collected folders on the host (their size) and the container's own layer (``written_bytes``).
"""

import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.types import DeviceRequest, LogConfig, Mount

from runners.envnames import EnvRefused, team_variables
from runners.worker.backends.base import (
    AGENT_DIR,
    CODE_DIR,
    DATA_DIR,
    LOGS_DIR,
    ORACLE_DIR,
    ORACLE_SOCKET,
    SUBMISSION_DIR,
    VALIDATE_SCRIPT,
    BackendError,
    RunPaths,
    RunSpec,
)

logger = logging.getLogger(__name__)


# Enough for data loaders with many worker threads (the limit counts threads), small enough that a fork bomb
# stops at the container instead of taking the worker down.
PIDS_LIMIT = 8192
# stdout and stderr stay with the engine until run.log is saved; rotating caps what a chatty agent can put on
# the engine's disk (json-file reads the rotated files back, so logs() still returns all that is kept).
LOG_MAX_SIZE = "64m"
LOG_MAX_FILES = 4
# Inspecting the container's size walks its writable layer; the supervisor asks every poll, the answer may lag.
WRITTEN_BYTES_CACHE_SECONDS = 2.0
GIB = 1024**3


def agent_environment(spec: RunSpec) -> dict[str, str]:
    """The team's variables (those a team may give, runners/envnames.py) plus the portal's; the portal's win, so
    that a team cannot move the folders. BackendError naming a variable a team may not give."""
    try:
        team = team_variables(spec.env)
    except EnvRefused as exc:
        raise BackendError(f"this worker refuses the run's variables: {exc}") from None
    return {
        **team,
        "COMPETITION_ID": spec.competition_id,
        "TIME_LIMIT_SECS": str(int(spec.time_limit_seconds)),
        "DATA_DIR": DATA_DIR,
        "SUBMISSION_DIR": SUBMISSION_DIR,
        "LOGS_DIR": LOGS_DIR,
        "CODE_DIR": CODE_DIR,
        "ORACLE_SOCKET": ORACLE_SOCKET,
        "VALIDATE_SUBMISSION": VALIDATE_SCRIPT,
        "AGENT_DIR": AGENT_DIR,
    }


def _bind(source: Path, target: str, *, read_only: bool) -> Mount:
    # Mount (not the older `volumes` binds) refuses a missing source instead of creating it as root.
    return Mount(target=target, source=str(source.resolve()), type="bind", read_only=read_only)


def container_options(spec: RunSpec, paths: RunPaths) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create`` of one task attempt.

    A pure function of the spec and the paths, so that what a container gets (above all the GPU request,
    which needs a GPU machine to run) can be checked anywhere.
    """
    options: dict[str, Any] = {
        "image": spec.image,
        "name": f"portal-task-{spec.task_id}-{spec.attempt}-{secrets.token_hex(4)}",
        "hostname": "agent",
        "environment": agent_environment(spec),
        "mounts": [
            _bind(paths.data, DATA_DIR, read_only=True),
            _bind(paths.submission, SUBMISSION_DIR, read_only=False),
            _bind(paths.logs, LOGS_DIR, read_only=False),
            _bind(paths.code, CODE_DIR, read_only=False),
            _bind(paths.oracle_dir, ORACLE_DIR, read_only=False),
            _bind(paths.validate_script, VALIDATE_SCRIPT, read_only=True),
        ],
        "security_opt": ["no-new-privileges"],
        "pids_limit": min(spec.processes, PIDS_LIMIT) if spec.processes > 0 else PIDS_LIMIT,
        "labels": {"portal.task": str(spec.task_id), "portal.attempt": str(spec.attempt)},
        "log_config": LogConfig(
            type=LogConfig.types.JSON, config={"max-size": LOG_MAX_SIZE, "max-file": str(LOG_MAX_FILES)}
        ),
        "detach": True,
    }
    if not spec.network:
        options["network_mode"] = "none"  # else the engine's default network
    if spec.cpus > 0:
        options["nano_cpus"] = int(spec.cpus * 1e9)
    if spec.memory_gb > 0:
        # The same value for memory and memory+swap: the limit is memory, not memory plus the worker's swap.
        options["mem_limit"] = options["memswap_limit"] = int(spec.memory_gb * GIB)
    if spec.shm_gb > 0:
        options["shm_size"] = int(spec.shm_gb * GIB)
    if spec.gpus > 0:
        options["device_requests"] = [DeviceRequest(count=spec.gpus, capabilities=[["gpu"]])]
    return options


def _engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"


def connect() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the default socket); BackendError when it does not answer."""
    try:
        client = docker.from_env()
        client.ping()
    except (DockerException, requests.RequestException) as error:
        raise BackendError(
            f"The Docker engine at {_engine_address()} does not answer ({error}). Start it (on one machine: "
            f'export DOCKER_HOST="$(scripts/dockerd)") or set DOCKER_HOST to an engine that runs.'
        ) from error
    return client


def engine_check(client: docker.DockerClient | None = None) -> None:
    """Raise BackendError with a message an operator can act on when the engine cannot be reached."""
    if client is None:
        connect().close()
        return
    try:
        client.ping()
    except (DockerException, requests.RequestException) as error:
        raise BackendError(f"The Docker engine at {_engine_address()} does not answer ({error}).") from error


class DockerHandle:
    """One started container; every method is safe to call after the container has gone."""

    def __init__(self, *, client: docker.DockerClient, container: Container, owner: tuple[int, int] | None) -> None:
        self._client = client
        self._container = container
        self._owner = owner
        self._image = str(container.attrs.get("Config", {}).get("Image", ""))
        self._mounts: list[dict[str, Any]] = list(container.attrs.get("HostConfig", {}).get("Mounts") or [])
        self._exit_code: int | None = None
        # The supervisor polls while the heartbeat thread may kill (a cancel): one of them hands the files back.
        self._lock = threading.Lock()
        self._handed_back = False
        self._removed = False
        self._written: tuple[float, int] | None = None

    @property
    def container_id(self) -> str:
        return str(self._container.id)

    def exit_code(self) -> int | None:
        with self._lock:
            return self._observe_exit()

    def _observe_exit(self) -> int | None:
        if self._exit_code is None and not self._removed:
            try:
                self._container.reload()
            except NotFound:
                # Someone removed it under us: it does not run any more, and its exit code is lost.
                self._exit_code = -1
            else:
                state = self._container.attrs.get("State", {})
                if state.get("Status") in ("exited", "dead"):
                    self._exit_code = int(state.get("ExitCode", -1))
            if self._exit_code is not None:
                self._hand_back()
        return self._exit_code

    def output_tail(self, max_bytes: int = 4096) -> str:
        # The engine's tail counts lines, not bytes: ask for more lines until they hold max_bytes, or all there is.
        lines = 64
        while True:
            try:
                raw = bytes(self._container.logs(stdout=True, stderr=True, tail=lines))
            except (NotFound, APIError):
                return ""
            if len(raw) >= max_bytes or raw.count(b"\n") < lines or lines >= max_bytes:
                return raw[-max_bytes:].decode("utf-8", errors="replace")
            lines *= 4

    def save_output(self, path: Path) -> None:
        with path.open("wb") as out:
            try:
                for chunk in self._container.logs(stdout=True, stderr=True, stream=True, follow=False):
                    out.write(chunk)
            except (NotFound, APIError) as error:
                out.write(f"\n[the container's output could not be read: {error}]\n".encode())

    def written_bytes(self) -> int:
        now = time.monotonic()
        if self._written is not None and now - self._written[0] < WRITTEN_BYTES_CACHE_SECONDS:
            return self._written[1]
        try:
            rows = self._client.api.containers(all=True, filters={"id": self.container_id}, size=True)
        except APIError:
            rows = []
        size = int(rows[0].get("SizeRw") or 0) if rows else (self._written[1] if self._written else 0)
        self._written = (now, size)
        return size

    def over_limit(self) -> str | None:
        """The engine enforces pids_limit, mem_limit and shm_size itself (cgroups): a fork bomb stops at its
        limit, a memory hog is killed by the kernel (exit_reason says so)."""
        return None

    def exit_reason(self, code: int) -> str | None:
        if code == 0:
            return None
        state = self._container.attrs.get("State", {})
        if state.get("OOMKilled"):
            limit = int(self._container.attrs.get("HostConfig", {}).get("Memory") or 0)
            shown = f" of {limit / GIB:.3g} GiB" if limit else ""
            return f"the agent exited with code {code}: the kernel killed it for using more than its memory{shown}"
        return None

    def kill(self) -> None:
        try:
            self._container.kill()
        except NotFound:
            return
        except APIError as error:
            # 409: it is not running any more, which is what kill wants.
            if error.status_code != 409:
                raise BackendError(f"Could not kill container {self.container_id[:12]}: {error}") from error
        self._wait_stopped(timeout=10)
        self.exit_code()

    def remove(self) -> None:
        if self._removed:
            return
        with self._lock:
            if self._observe_exit() is None:
                self._exit_code = 137  # the forced removal below kills it, as docker kill does
            self._hand_back()
            try:
                self._container.remove(force=True, v=True)
            except NotFound:
                pass
            except APIError as error:
                if error.status_code != 409 or "in progress" not in str(error):
                    raise BackendError(f"Could not remove container {self.container_id[:12]}: {error}") from error
            self._removed = True

    def _wait_stopped(self, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self._container.reload()
            except NotFound:
                return
            if self._container.attrs.get("State", {}).get("Status") != "running":
                return
            time.sleep(0.1)

    def _hand_back(self) -> None:
        """Give the worker's user the files the agent left in the writable folders.

        An agent running as root in the container leaves root-owned files (and folders it may have made 0700)
        on the host; a worker that does not run as root could then not read them to collect, nor delete the
        task's folder. A short container of the same image, with only those folders mounted and no network,
        changes their owner back (``-h``: a link is changed itself, never what it points to). Best effort: a
        failure is logged and collection reports what it cannot read.
        """
        if self._handed_back or self._owner is None:
            return
        self._handed_back = True
        writable = [m for m in self._mounts if m.get("Target") in (SUBMISSION_DIR, LOGS_DIR, CODE_DIR)]
        if not writable:
            return
        uid, gid = self._owner
        try:
            helper = self._client.containers.run(
                self._image,
                entrypoint=["chown"],
                command=["-R", "-h", "-P", f"{uid}:{gid}", *[str(m["Target"]) for m in writable]],
                user="0:0",
                mounts=[Mount(target=m["Target"], source=m["Source"], type="bind") for m in writable],
                network_mode="none",
                security_opt=["no-new-privileges"],
                pids_limit=64,
                labels={"portal.role": "hand-back"},
                detach=True,
            )
            try:
                result = helper.wait(timeout=120)
                if result.get("StatusCode") != 0:
                    logger.warning("hand-back of %s exited %s", self.container_id[:12], result.get("StatusCode"))
            finally:
                helper.remove(force=True)
        except (DockerException, requests.RequestException) as error:
            logger.warning("hand-back of %s failed: %s", self.container_id[:12], error)


class DockerBackend:
    """Starts each task attempt in a container of the team's image, on a local Docker engine.

    Images are never pulled: the operator loads the images a worker may run (``docker load`` / ``docker
    pull`` by hand), so that a submission cannot make a GPU machine fetch arbitrary code from the internet.
    """

    name = "docker"

    def __init__(
        self,
        client: docker.DockerClient | None = None,
        *,
        owner: tuple[int, int] | None = None,
        worker_label: str = "",
    ) -> None:
        """owner: uid and gid that get the agent's files back after it exits; by default the worker's own user
        when it is not root (root reads and deletes whatever the agent left). worker_label: marks this worker's
        containers (label portal.worker), so that after a crash it removes its own orphans and no one else's."""
        self.client = client if client is not None else connect()
        if owner is None and os.geteuid() != 0:
            owner = (os.getuid(), os.getgid())
        self.owner = owner
        self.worker_label = worker_label

    def remove_orphans(self) -> int:
        """Remove the containers this worker left when it last ended without cleaning up (SIGKILL, a crash):
        called at start, when it runs nothing yet. Their tasks were queued again by the portal's watchdog."""
        if not self.worker_label:
            return 0
        try:
            found = self.client.containers.list(
                all=True, sparse=True, filters={"label": f"portal.worker={self.worker_label}"}
            )
        except (DockerException, requests.RequestException) as error:
            logger.warning("could not list this worker's old containers: %s", error)
            return 0
        for container in found:
            try:
                container.remove(force=True)
            except DockerException as error:
                logger.warning("could not remove the old container %s: %s", container.short_id, error)
        if found:
            logger.warning("removed %s container(s) left by this worker's last run", len(found))
        return len(found)

    def start(self, spec: RunSpec, paths: RunPaths) -> DockerHandle:
        try:
            self.client.images.get(spec.image)
        except ImageNotFound as error:
            raise BackendError(
                f"Image {spec.image!r} is not on this worker's Docker engine. Workers never pull images: the "
                f"operator must load it (docker load -i image.tar, or docker pull {spec.image}) and retry."
            ) from error
        except (DockerException, requests.RequestException) as error:
            # The engine's address and error are the operator's (its folders): they go to the log, not the team.
            logger.error("the Docker engine at %s does not answer: %s", _engine_address(), error)
            raise BackendError(
                f"This worker's Docker engine did not answer when starting {spec.image!r}; the operator is told "
                "in the worker's log. The task can be asked for again."
            ) from error
        options = container_options(spec, paths)
        if self.worker_label:
            options["labels"] = {**options["labels"], "portal.worker": self.worker_label}
        try:
            container = self.client.containers.create(**options)
        except (DockerException, requests.RequestException) as error:
            raise BackendError(f"Could not create the container for {spec.image!r}: {error}") from error
        try:
            container.start()
            container.reload()
        except (DockerException, requests.RequestException) as error:
            try:
                container.remove(force=True)
            except DockerException:
                pass
            hint = ""
            if spec.gpus > 0 and "device driver" in str(error):
                hint = " This engine cannot give containers GPUs: install the NVIDIA Container Toolkit on the worker."
            raise BackendError(f"Could not start the container for {spec.image!r}: {error}.{hint}") from error
        logger.info("started %s (%s) for task %s attempt %s", options["name"], spec.image, spec.task_id, spec.attempt)
        return DockerHandle(client=self.client, container=container, owner=self.owner)
