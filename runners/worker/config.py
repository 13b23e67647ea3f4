"""The GPU worker's settings, read from the environment once at start.

A wrong value stops the worker with a message naming the variable: a worker that starts with a typo in its
capacity would claim tasks it cannot run, or none at all, and say nothing.
"""

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from runners.envnames import operator_allowed

BACKENDS = ("process", "docker")
SANDBOXES = ("bwrap", "off")  # the process backend's: bubblewrap, or none (trusted agents only)
REPO_DIR = Path(__file__).resolve().parent.parent.parent
# The one-machine broker: kombu's filesystem transport with atomic writes and claims (filesystem_broker.py).
FILESYSTEM_TRANSPORT = "runners.worker.filesystem_broker:Transport"


class ConfigError(ValueError):
    """A variable holds a value the worker cannot use; the message names it."""


def _raw(environ: Mapping[str, str], name: str) -> str | None:
    """The value of name, or of the file named by name_FILE (secrets mounted as files), or None."""
    file_name = environ.get(f"{name}_FILE")
    if file_name:
        try:
            return Path(file_name).read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{name}_FILE={file_name!r} cannot be read: {exc.strerror}") from None
    value = environ.get(name)
    return value if value not in (None, "") else None


def _str(environ: Mapping[str, str], name: str, default: str) -> str:
    value = _raw(environ, name)
    return default if value is None else value


def _number[T: (int, float)](environ: Mapping[str, str], name: str, default: T, kind: type[T], minimum: T) -> T:
    value = _raw(environ, name)
    if value is None:
        return default
    try:
        number = kind(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not {'an integer' if kind is int else 'a number'}") from None
    if number < minimum:
        raise ConfigError(f"{name}={value!r} must be at least {minimum}")
    return number


def _choice(environ: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = _str(environ, name, default)
    if value not in choices:
        raise ConfigError(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


def _memory_gb() -> float:
    """MemTotal from /proc/meminfo, in GB (GiB); 0 where the file does not exist."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _version() -> str:
    try:
        return metadata.version("mle-portal")
    except metadata.PackageNotFoundError:
        return "unknown"


def _work_dir(environ: Mapping[str, str], backend: str) -> Path:
    explicit = _raw(environ, "RUNNER_WORK_DIR")
    if explicit:
        folder = Path(explicit)
    elif _raw(environ, "PORTAL_DATA_DIR"):
        folder = Path(str(_raw(environ, "PORTAL_DATA_DIR"))) / "gpu-worker"
    else:
        folder = Path(tempfile.gettempdir()) / "mle-gpu-worker"
    return folder.resolve()


@dataclass(frozen=True)
class WorkerConfig:
    portal_url: str
    token: str
    backend: str
    work_dir: Path
    gpus: int
    gpu_model: str
    gpu_memory_gb: float
    cpus: float
    memory_gb: float
    slots: int
    poll_seconds: float
    agents_dir: Path
    process_sandbox: str = "bwrap"
    agent_uid: int = 60100
    max_processes: int = 4096
    portal_wait_seconds: float = 120.0
    version: str = "unknown"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "WorkerConfig":
        """Read every variable (see the module docstring); raise ConfigError naming the first bad one."""
        env = os.environ if environ is None else environ
        portal_url = _str(env, "PORTAL_URL", "")
        if not portal_url.startswith(("http://", "https://")):
            raise ConfigError(f"PORTAL_URL={portal_url!r} must be the portal's http(s) address")
        token = _str(env, "PORTAL_WORKER_TOKEN", "")
        if not token:
            raise ConfigError(
                "PORTAL_WORKER_TOKEN is not set (or PORTAL_WORKER_TOKEN_FILE): print one on the portal with "
                "`python manage.py issue_worker_token --name NAME`"
            )
        backend = _choice(env, "RUNNER_BACKEND", "process", BACKENDS)
        try:
            operator_allowed(env)  # the team variables this worker passes on beyond runners/envnames.py's list
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return cls(
            portal_url=portal_url.rstrip("/"),
            token=token,
            backend=backend,
            work_dir=_work_dir(env, backend),
            gpus=_number(env, "RUNNER_GPUS", 0, int, 0),
            gpu_model=_str(env, "RUNNER_GPU_MODEL", ""),
            gpu_memory_gb=_number(env, "RUNNER_GPU_MEMORY_GB", 0.0, float, 0.0),
            cpus=_number(env, "RUNNER_CPUS", float(os.cpu_count() or 1), float, 0.0),
            memory_gb=_number(env, "RUNNER_MEMORY_GB", _memory_gb(), float, 0.0),
            slots=_number(env, "RUNNER_SLOTS", 1, int, 1),
            poll_seconds=_number(env, "RUNNER_POLL_SECONDS", 0.25, float, 0.01),
            agents_dir=Path(_str(env, "RUNNER_PROCESS_AGENTS_DIR", str(REPO_DIR / "runners" / "agents"))).resolve(),
            process_sandbox=_choice(env, "RUNNER_PROCESS_SANDBOX", "bwrap", SANDBOXES),
            agent_uid=_number(env, "RUNNER_PROCESS_AGENT_UID", 60100, int, 1),
            max_processes=_number(env, "RUNNER_MAX_PROCESSES", 4096, int, 16),
            portal_wait_seconds=_number(env, "RUNNER_PORTAL_WAIT_SECONDS", 120.0, float, 0.0),
            version=_version(),
        )

    def capacity(self) -> dict[str, Any]:
        """The body of register/: what this worker offers, for the server's fit check."""
        return {
            "gpus": self.gpus,
            "gpu_model": self.gpu_model,
            "gpu_memory_gb": self.gpu_memory_gb,
            "cpus": self.cpus,
            "memory_gb": self.memory_gb,
            "slots": self.slots,
            "backend": self.backend,
            "sandbox": self.process_sandbox if self.backend == "process" else "",
            "version": self.version,
        }


def broker_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Celery settings for the broker the portal publishes hosted tasks to.

    CELERY_BROKER_URL wins; else REDIS_URL, as portal/settings.py does; else the filesystem broker of a
    single-machine install, with the same folders under RUNNER_BROKER_DIR (default $PORTAL_DATA_DIR/broker,
    and PORTAL_DATA_DIR defaults to <repo>/var as in portal/settings.py).
    """
    env = os.environ if environ is None else environ
    url = _raw(env, "CELERY_BROKER_URL") or _raw(env, "REDIS_URL")
    if url:
        return {"broker_url": url.replace("unix://", "redis+socket://", 1)}  # a socket, as Celery names it
    data_dir = Path(_str(env, "PORTAL_DATA_DIR", str(REPO_DIR / "var")))
    broker_dir = Path(_str(env, "RUNNER_BROKER_DIR", str(data_dir / "broker"))).resolve()
    for folder in ("queue", "processed", "control"):
        try:
            (broker_dir / folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"RUNNER_BROKER_DIR={str(broker_dir)!r} cannot be created: {exc.strerror}") from None
    return {
        "broker_url": "filesystem://",
        "broker_transport": FILESYSTEM_TRANSPORT,
        # Remote control broadcasts through files every worker reads and writes; nothing here uses it.
        "worker_enable_remote_control": False,
        "broker_transport_options": {
            "data_folder_in": str(broker_dir / "queue"),
            "data_folder_out": str(broker_dir / "queue"),
            "processed_folder": str(broker_dir / "processed"),
            "control_folder": str(broker_dir / "control"),
            "store_processed": False,
        },
    }
