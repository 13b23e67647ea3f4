"""What every runner backend offers the supervisor (runners/worker/execute.py)."""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# Where the agent finds things, in a container and in the process backend's sandbox alike: the names
# MLE-bench agents already use.
HOME = "/home"
DATA_DIR = f"{HOME}/data"
SUBMISSION_DIR = f"{HOME}/submission"
LOGS_DIR = f"{HOME}/logs"
CODE_DIR = f"{HOME}/code"
ORACLE_DIR = f"{HOME}/.oracle"
ORACLE_SOCKET = f"{ORACLE_DIR}/oracle.sock"
VALIDATE_SCRIPT = f"{HOME}/validate_submission.sh"
AGENT_DIR = f"{HOME}/agent"


class BackendError(Exception):
    """An agent could not be started (unknown image, engine unreachable); the message says what to do."""


@dataclass(frozen=True)
class RunSpec:
    task_id: int
    attempt: int
    image: str  # "name:tag"
    competition_id: str
    env: dict[str, str]  # the team's variables; the backend adds COMPETITION_ID and the *_DIR paths
    time_limit_seconds: float  # the supervisor enforces it; the backend passes TIME_LIMIT_SECS
    gpus: int
    cpus: float
    memory_gb: float
    shm_gb: float
    network: bool
    max_output_bytes: int
    processes: int = 0  # the most processes and threads at once; 0: the backend's default (the operator's cap)


@dataclass(frozen=True)
class RunPaths:
    """Host paths of one task, made by the supervisor."""

    home: Path  # the task's folder
    data: Path  # the competition's public data (read-only for the agent)
    submission: Path  # empty at the start
    logs: Path
    code: Path
    oracle_dir: Path  # holds oracle.sock, the format check's socket
    validate_script: Path


class Handle(Protocol):
    def exit_code(self) -> int | None:
        """None while the agent runs."""

    def output_tail(self, max_bytes: int = 4096) -> str: ...

    def save_output(self, path: Path) -> None:
        """The whole stdout and stderr, for run.log."""

    def written_bytes(self) -> int:
        """Bytes the agent wrote outside the collected folders (0 where the backend cannot tell)."""

    def over_limit(self) -> str | None:
        """Why the agent must be stopped now for breaking one of its limits (processes, memory), else None."""

    def exit_reason(self, code: int) -> str | None:
        """Why the agent exited, where a limit ended it (memory, CPU time, a file's size), else None."""

    def kill(self) -> None:
        """Stop the agent now; calling it again does nothing."""

    def remove(self) -> None:
        """Remove the container or process and its scratch; calling it again does nothing."""


class Backend(Protocol):
    name: str

    def start(self, spec: RunSpec, paths: RunPaths) -> Handle: ...
