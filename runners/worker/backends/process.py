"""The process backend: runs `bash <agents dir>/<image name>/start.sh` as a plain child process.

No isolation at all (same user, same network, same files as the worker): for demos, tests and trusted agents
only. What it does keep from the worker is its environment: the agent sees a minimal one plus the task's, so
the worker token and whatever else the worker was started with never reach it.
"""

import logging
import math
import os
import re
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from runners.worker.backends.base import BackendError, RunPaths, RunSpec
from runners.worker.collect import tree_bytes

log = logging.getLogger(__name__)

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


# AF_UNIX socket paths hold at most 107 bytes, and a process agent connects to the format check's socket by
# its path; a longer one is reached through a short link in the temporary folder instead.
MAX_SOCKET_PATH = 100


def oracle_link(paths: RunPaths) -> Path | None:
    """A short path to the task's oracle folder when its own is too long to connect to; None when it is not."""
    if len(os.fsencode(paths.oracle_dir / "oracle.sock")) <= MAX_SOCKET_PATH:
        return None
    link = Path(tempfile.mkdtemp(prefix="oracle-")) / "o"
    link.symlink_to(paths.oracle_dir, target_is_directory=True)
    return link


def agent_env(spec: RunSpec, paths: RunPaths, agent_dir: Path, oracle: Path | None = None) -> dict[str, str]:
    """What the agent sees: PATH, HOME and LANG, the team's variables, then the task's own paths (last, so a
    team variable cannot move them)."""
    env = {
        "PATH": os.environ.get("PATH", DEFAULT_PATH),
        "HOME": str(paths.home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    env.update(spec.env)
    env.update(
        {
            "COMPETITION_ID": spec.competition_id,
            "TIME_LIMIT_SECS": str(math.ceil(spec.time_limit_seconds)),
            "DATA_DIR": str(paths.data),
            "SUBMISSION_DIR": str(paths.submission),
            "LOGS_DIR": str(paths.logs),
            "CODE_DIR": str(paths.code),
            "ORACLE_SOCKET": str((oracle or paths.oracle_dir) / "oracle.sock"),
            "VALIDATE_SUBMISSION": str(paths.validate_script),
            "AGENT_DIR": str(agent_dir),
        }
    )
    return env


class ProcessHandle:
    def __init__(
        self, process: subprocess.Popen[bytes], output: Path, paths: RunPaths, oracle: Path | None = None
    ) -> None:
        self._process = process
        self._output = output
        self._paths = paths
        self._oracle = oracle
        self._lock = threading.Lock()
        self._removed = False

    def _kill_group(self) -> None:
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def exit_code(self) -> int | None:
        with self._lock:
            if self._process.returncode is not None:
                return self._process.returncode
            try:
                # WNOWAIT: the exited leader stays a zombie, so its process group id cannot be reused while
                # what it left running in the background is killed.
                exited = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                exited = None
            if exited is None:
                return None
            self._kill_group()
            return self._process.wait()

    def output_tail(self, max_bytes: int = 4096) -> str:
        try:
            with self._output.open("rb") as source:
                size = source.seek(0, os.SEEK_END)
                source.seek(max(size - max_bytes, 0))
                return source.read(max_bytes).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def save_output(self, path: Path) -> None:
        try:
            data = self._output.read_bytes()
        except FileNotFoundError:
            data = b""
        path.write_bytes(data)

    def written_bytes(self) -> int:
        """The output file plus whatever the agent left in its home outside the collected folders."""
        paths = self._paths
        counted = {paths.submission, paths.logs, paths.code, paths.oracle_dir}
        try:
            others = [entry for entry in paths.home.iterdir() if entry not in counted]
        except FileNotFoundError:
            others = []
        return tree_bytes([self._output, *others])

    def kill(self) -> None:
        with self._lock:
            if self._process.returncode is None:
                self._kill_group()
                self._process.wait()

    def remove(self) -> None:
        self.kill()
        with self._lock:
            if self._removed:
                return
            self._removed = True
            self._output.unlink(missing_ok=True)
            if self._oracle is not None:
                self._oracle.unlink(missing_ok=True)
                self._oracle.parent.rmdir()


class ProcessBackend:
    name = "process"

    def __init__(self, agents_dir: Path) -> None:
        self.agents_dir = Path(agents_dir)

    def agent_dir(self, image: str) -> Path:
        """<agents dir>/<image name before ':'>, refused unless it is a plain name with a start.sh."""
        name = image.split(":", 1)[0]
        if not AGENT_NAME.fullmatch(name):
            raise BackendError(
                f"image {image!r}: the process backend runs agents by folder name, which must match "
                f"[a-z0-9][a-z0-9._-]* (RUNNER_PROCESS_AGENTS_DIR={self.agents_dir})"
            )
        folder = self.agents_dir / name
        if not (folder / "start.sh").is_file():
            raise BackendError(
                f"image {image!r}: no agent folder {folder} with a start.sh; the process backend runs "
                f"<RUNNER_PROCESS_AGENTS_DIR>/<name>/start.sh (RUNNER_PROCESS_AGENTS_DIR={self.agents_dir})"
            )
        return folder

    def start(self, spec: RunSpec, paths: RunPaths) -> ProcessHandle:
        folder = self.agent_dir(spec.image)
        # Beside the task's folder, not in it: the agent's own files must not hold its output log.
        output = paths.home.parent / f".{paths.home.name}.output"
        oracle = oracle_link(paths)
        with output.open("wb") as sink:
            try:
                process = subprocess.Popen(
                    ["bash", str(folder / "start.sh")],
                    cwd=paths.home,
                    env=agent_env(spec, paths, folder, oracle),
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                output.unlink(missing_ok=True)
                if oracle is not None:
                    oracle.unlink()
                    oracle.parent.rmdir()
                raise BackendError(f"cannot start {folder / 'start.sh'}: {exc.strerror}") from None
        log.info("task %s attempt %s: started %s as pid %s", spec.task_id, spec.attempt, folder, process.pid)
        return ProcessHandle(process, output, paths, oracle)
