"""The process backend: runs `bash <agents dir>/<image name>/start.sh` on the worker's own machine, sandboxed.

By default (RUNNER_PROCESS_SANDBOX=bwrap) each agent runs in a bubblewrap sandbox:

- as a uid of its own (RUNNER_PROCESS_AGENT_UID and up, one per running task, none a user of the machine),
  never root nor the worker's user, with no capabilities and no_new_privs, in a user namespace of its own;
- in new pid, network (a loopback only), ipc, uts and mount namespaces: it sees its own processes only, no
  network, and a root filesystem built from nothing: /usr (with the /bin, /lib links) and a few /etc files
  read-only, a /proc of its own pid namespace, a minimal /dev, /home and /tmp of its own (on disk beside the
  task, counted in written_bytes) and the task's folders where the Docker backend puts them: /home/data
  read-only, /home/submission, /home/logs and /home/code writable, /home/.oracle (the format check's socket),
  /home/validate_submission.sh, and its own agent folder read-only at /home/agent.
  Nothing of the checkout, of PORTAL_DATA_DIR, of the worker's work dir beyond that, of other tasks, or of the
  worker's environment and processes is there.
- when the sandbox's pid 1 dies (the agent's first process exits, or the worker kills bwrap) the kernel kills
  every process of the sandbox. How it is built: runners/worker/backends/sandbox.py.

- within limits (sandbox.Limits, from the run's request under the operator's caps): processes and threads,
  memory, CPU time and file size are rlimits the kernel enforces, /dev/shm and /tmp are tmpfs mounts of a fixed
  size, and the worker stops a task whose processes together hold more memory than its limit, or that reaches
  its process limit (a fork bomb), with that reason.

RUNNER_PROCESS_SANDBOX=off
runs agents as plain child processes of the worker, as the worker's user with its files and network: for
trusted agents only. Either way the agent sees a minimal environment plus the task's, never the worker's.
"""

import logging
import math
import os
import pwd
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from runners.envnames import EnvRefused, team_variables
from runners.worker.backends.base import BackendError, RunPaths, RunSpec
from runners.worker.backends.sandbox import (
    AGENT_DIR,
    AGENT_UIDS,
    CODE_DIR,
    DATA_DIR,
    DEFAULT_AGENT_UID,
    DEFAULT_PATH,
    DEFAULT_PROCESSES,
    GIB,
    HOME,
    LOGS_DIR,
    ORACLE_DIR,
    SUBMISSION_DIR,
    VALIDATE_SCRIPT,
    Limits,
    bwrap_command,
    check_sandbox,
    lock_uid,
    make_box,
    options_fd,
    sandbox_options,
    task_limits,
    uid_processes,
    unlock_uid,
)
from runners.worker.collect import tree_bytes
from runners.worker.public_data import remove_tree

log = logging.getLogger(__name__)

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
SANDBOXES = ("bwrap", "off")

# AF_UNIX socket paths hold at most 107 bytes, and an unsandboxed agent connects to the format check's socket by
# its host path; a longer one is reached through a short link in the temporary folder instead.
MAX_SOCKET_PATH = 100

# What an agent's output says when a process of it could not get memory under its RLIMIT_DATA.
OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory", "Out of memory")
SIGXCPU_EXIT = 128 + signal.SIGXCPU
SIGXFSZ_EXIT = 128 + signal.SIGXFSZ
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def _kib(text: str, field: str) -> int | None:
    for line in text.splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return None


def uid_usage(uid: int) -> tuple[int, int]:
    """(tasks, memory bytes) of the processes running as uid: tasks counts threads, as RLIMIT_NPROC does; memory
    is their proportional set size (a page shared by n of them counts 1/n in each, so forked data-loader workers
    that share their parent's pages are not counted n times), their resident size where that cannot be read."""
    tasks = memory = 0
    for pid in uid_processes(uid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            try:
                pss = _kib(Path(f"/proc/{pid}/smaps_rollup").read_text(), "Pss:")
            except OSError:
                pss = None
        except (FileNotFoundError, ProcessLookupError):
            continue
        tasks += _kib(status, "Threads:") or 0
        memory += (pss if pss is not None else _kib(status, "VmRSS:") or 0) * 1024
    return tasks, memory


def _gib(size: int) -> str:
    return f"{size / GIB:.3g} GiB"


def oracle_link(paths: RunPaths) -> Path | None:
    """A short path to the task's oracle folder when its own is too long to connect to; None when it is not."""
    if len(os.fsencode(paths.oracle_dir / "oracle.sock")) <= MAX_SOCKET_PATH:
        return None
    link = Path(tempfile.mkdtemp(prefix="oracle-")) / "o"
    link.symlink_to(paths.oracle_dir, target_is_directory=True)
    return link


def _environment(spec: RunSpec, base: dict[str, str], places: dict[str, str]) -> dict[str, str]:
    """base, the team's variables (those a team may give: runners/envnames.py), then the task's own (last, so a
    team variable cannot move them). BackendError naming a variable a team may not give."""
    try:
        team = team_variables(spec.env)
    except EnvRefused as exc:
        raise BackendError(f"this worker refuses the run's variables: {exc}") from None
    return {
        **base,
        **team,
        "COMPETITION_ID": spec.competition_id,
        "TIME_LIMIT_SECS": str(math.ceil(spec.time_limit_seconds)),
        **places,
    }


def agent_env(spec: RunSpec, paths: RunPaths, agent_dir: Path, oracle: Path | None = None) -> dict[str, str]:
    """What an unsandboxed agent sees: PATH, HOME and LANG, the team's variables, the task's host paths."""
    base = {
        "PATH": os.environ.get("PATH", DEFAULT_PATH),
        "HOME": str(paths.home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    places = {
        "DATA_DIR": str(paths.data),
        "SUBMISSION_DIR": str(paths.submission),
        "LOGS_DIR": str(paths.logs),
        "CODE_DIR": str(paths.code),
        "ORACLE_SOCKET": str((oracle or paths.oracle_dir) / "oracle.sock"),
        "VALIDATE_SUBMISSION": str(paths.validate_script),
        "AGENT_DIR": str(agent_dir),
    }
    return _environment(spec, base, places)


def sandbox_env(spec: RunSpec) -> dict[str, str]:
    """What a sandboxed agent sees: the paths inside its sandbox, as in a container."""
    base = {"PATH": DEFAULT_PATH, "HOME": HOME, "LANG": "C.UTF-8", "USER": "agent", "LOGNAME": "agent"}
    places = {
        "DATA_DIR": DATA_DIR,
        "SUBMISSION_DIR": SUBMISSION_DIR,
        "LOGS_DIR": LOGS_DIR,
        "CODE_DIR": CODE_DIR,
        "ORACLE_SOCKET": f"{ORACLE_DIR}/oracle.sock",
        "VALIDATE_SUBMISSION": VALIDATE_SCRIPT,
        "AGENT_DIR": AGENT_DIR,
    }
    return _environment(spec, base, places)


class ProcessHandle:
    def __init__(
        self,
        process: subprocess.Popen[bytes],
        output: Path,
        paths: RunPaths,
        oracle: Path | None = None,
        *,
        box: Path | None = None,
        uid: int | None = None,
        release: Callable[[], None] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._process = process
        self._limits = limits
        self._output = output
        self._paths = paths
        self._oracle = oracle
        self._box = box
        self._uid = uid
        self._release = release
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
            code = self._process.wait()
            self._ended()
            return code

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
        """The output file plus what the agent wrote outside the collected folders: its /home in a sandbox (its
        /tmp and /dev/shm are tmpfs mounts of a fixed size), whatever it left in its task folder without one."""
        if self._box is not None:
            return tree_bytes([self._output, self._box / "home"])
        paths = self._paths
        counted = {paths.submission, paths.logs, paths.code, paths.oracle_dir}
        try:
            others = [entry for entry in paths.home.iterdir() if entry not in counted]
        except FileNotFoundError:
            others = []
        return tree_bytes([self._output, *others])

    def over_limit(self) -> str | None:
        """The kernel refuses the agent more processes and more memory per process; here the worker ends a task
        that sits at its process limit (a fork bomb spins there until its time is up) or whose processes
        together hold more memory than its limit."""
        if self._uid is None or self._limits is None or self._process.returncode is not None:
            return None
        tasks, resident = uid_usage(self._uid)
        if tasks >= self._limits.processes:
            return (
                f"stopped: the agent reached its limit of {self._limits.processes} processes and threads "
                "(a fork bomb, or more workers than the run asked for)"
            )
        if resident > self._limits.memory_bytes:
            return (
                f"stopped: the agent's processes held {_gib(resident)} of memory, over its limit of "
                f"{_gib(self._limits.memory_bytes)}"
            )
        return None

    def exit_reason(self, code: int) -> str | None:
        if self._limits is None or code == 0:
            return None
        limits = self._limits
        if code == SIGXCPU_EXIT:
            return f"the agent exited with code {code}: a process used its CPU time limit of {limits.cpu_seconds} s"
        if code == SIGXFSZ_EXIT:
            return f"the agent exited with code {code}: it wrote a file over its limit of {_gib(limits.file_bytes)}"
        tail = self.output_tail(8192)
        if any(sign in tail for sign in OUT_OF_MEMORY):
            return (
                f"the agent exited with code {code}: it ran out of memory under its limit of "
                f"{_gib(limits.memory_bytes)} per process (/dev/shm and /tmp: {_gib(limits.tmp_bytes)} each)"
            )
        return None

    def kill(self) -> None:
        with self._lock:
            if self._process.returncode is None:
                self._kill_group()  # bwrap's own pid 1 dies with it (--die-with-parent), and the sandbox with that
                self._process.wait()
                self._ended()

    def _ended(self) -> None:
        """The sandbox is over: once nothing runs as its uid any more, the uid can go to another agent."""
        self._wait_sandbox_gone()
        if self._release is not None:
            self._release()
            self._release = None

    def _wait_sandbox_gone(self, timeout: float = 10) -> None:
        """The kernel ends a pid namespace's processes when its init dies, not at once: its uid is handed out
        again only once nothing runs as it."""
        if self._uid is None:
            return
        deadline = time.monotonic() + timeout
        while left := uid_processes(self._uid):
            if time.monotonic() > deadline:
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                log.warning("uid %s: %d processes outlived their sandbox and were killed", self._uid, len(left))
                return
            time.sleep(0.02)

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
            if self._box is not None:
                remove_tree(self._box)


class ProcessBackend:
    name = "process"

    def __init__(
        self,
        agents_dir: Path,
        *,
        sandbox: str = "bwrap",
        agent_uid: int = DEFAULT_AGENT_UID,
        bwrap: str | None = None,
        max_processes: int = DEFAULT_PROCESSES,
        cpus: float = 0.0,
        memory_gb: float = 0.0,
    ) -> None:
        """Raises BackendError, saying what to do, when sandbox is "bwrap" and this machine cannot make one."""
        if sandbox not in SANDBOXES:
            raise BackendError(f"RUNNER_PROCESS_SANDBOX={sandbox!r} must be one of {', '.join(SANDBOXES)}")
        self.agents_dir = Path(agents_dir)
        self.sandbox = sandbox
        self.agent_uid = agent_uid
        # The operator's caps over every task's request (RUNNER_MAX_PROCESSES, RUNNER_CPUS, RUNNER_MEMORY_GB).
        self.max_processes = max_processes
        self.cpus = cpus
        self.memory_gb = memory_gb
        self._uids_lock = threading.Lock()
        self._uids_in_use: dict[int, int] = {}  # uid: its lock (sandbox.lock_uid)
        self.bwrap = ""
        if sandbox == "bwrap":
            self.bwrap = check_sandbox(bwrap)
            self._check_uids()
            self._try_a_sandbox()
        else:
            log.warning(
                "RUNNER_PROCESS_SANDBOX=off: agents run unsandboxed, as the worker's user (trusted agents only)"
            )

    def _check_uids(self) -> None:
        for uid in range(self.agent_uid, self.agent_uid + AGENT_UIDS):
            try:
                user = pwd.getpwuid(uid)
            except KeyError:
                continue
            raise BackendError(
                f"agents run as uids {self.agent_uid} to {self.agent_uid + AGENT_UIDS - 1}, and {uid} is the user "
                f"{user.pw_name!r} of this machine: set RUNNER_PROCESS_AGENT_UID to the start of a free range"
            )
        if self.agent_uid <= 0:
            raise BackendError(f"RUNNER_PROCESS_AGENT_UID={self.agent_uid} must be a uid above 0, of no user")

    def _try_a_sandbox(self) -> None:
        """Make one empty sandbox now: a kernel or container that does not allow it is told at start, once."""
        with tempfile.TemporaryDirectory(prefix="sandbox-check-") as scratch:
            root = Path(scratch)
            paths = RunPaths(
                home=root / "task",
                data=root / "data",
                submission=root / "task" / "submission",
                logs=root / "task" / "logs",
                code=root / "task" / "code",
                oracle_dir=root / "task" / "oracle",
                validate_script=root / "task" / "validate_submission.sh",
            )
            for folder in (paths.data, paths.submission, paths.logs, paths.code, paths.oracle_dir, root / "agent"):
                folder.mkdir(parents=True)
            paths.validate_script.touch()
            spec = RunSpec(0, 0, "check", "check", {}, 60, 0, 0, 0, 0, False, 0)
            box = root / "box"
            make_box(box, self.agent_uid)
            limits = self.limits(spec)
            fd = options_fd(sandbox_options(spec, paths, root / "agent", box, sandbox_env(spec), limits))
            try:
                done = subprocess.run(
                    bwrap_command(self.bwrap, fd, self.agent_uid, ["true"], limits),
                    pass_fds=(fd,),
                    env={"PATH": DEFAULT_PATH},
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=60,
                )
            finally:
                os.close(fd)
            if done.returncode != 0:
                said = done.stderr.decode(errors="replace").strip()[-500:]
                raise BackendError(
                    f"bubblewrap cannot make a sandbox on this machine ({said or f'exit {done.returncode}'}): it "
                    "needs user, pid, network and mount namespaces (a container must allow them), or set "
                    "RUNNER_PROCESS_SANDBOX=off to run agents unsandboxed (trusted agents only)"
                )

    def limits(self, spec: RunSpec) -> Limits:
        return task_limits(spec, max_processes=self.max_processes, cpus=self.cpus, memory_gb=self.memory_gb)

    def agent_dir(self, image: str) -> Path:
        """<agents dir>/<image name before ':'>, refused unless it is a plain name with a start.sh. The reason
        names the image only: it is shown to the team, the folders are the operator's (and go to the log)."""
        name = image.split(":", 1)[0]
        if not AGENT_NAME.fullmatch(name):
            raise BackendError(
                f"image {image!r}: this worker runs agents by plain name (lowercase letters, digits, '.', '_' "
                "and '-', e.g. example-agent:latest), not registry paths"
            )
        folder = self.agents_dir / name
        if not (folder / "start.sh").is_file():
            log.warning("image %r: no %s (RUNNER_PROCESS_AGENTS_DIR=%s)", image, folder / "start.sh", self.agents_dir)
            raise BackendError(f"image {image!r}: this worker has no agent of that name; its operator installs agents")
        return folder

    def _take_uid(self) -> int:
        """The first agent uid of the range that no agent on this machine has (other workers' included)."""
        with self._uids_lock:
            for uid in range(self.agent_uid, self.agent_uid + AGENT_UIDS):
                if uid not in self._uids_in_use and (fd := lock_uid(uid)) is not None:
                    self._uids_in_use[uid] = fd
                    return uid
        raise BackendError(f"this machine runs {AGENT_UIDS} agents already; the task waits for another attempt")

    def _release_uid(self, uid: int) -> None:
        with self._uids_lock:
            fd = self._uids_in_use.pop(uid, None)
            if fd is not None:
                unlock_uid(fd)

    def start(self, spec: RunSpec, paths: RunPaths) -> ProcessHandle:
        folder = self.agent_dir(spec.image)
        # Beside the task's folder, not in it: the agent's own files must not hold its output log.
        output = paths.home.parent / f".{paths.home.name}.output"
        if self.sandbox == "off":
            return self._start_unsandboxed(spec, paths, folder, output)
        env = sandbox_env(spec)  # BackendError, naming the variable, for one a team may not give
        uid = self._take_uid()
        box = paths.home.parent / f".{paths.home.name}.sandbox"
        fd = -1
        try:
            make_box(box, uid)
            limits = self.limits(spec)
            fd = options_fd(sandbox_options(spec, paths, folder, box, env, limits))
            with output.open("wb") as sink:
                # bwrap --die-with-parent ties the sandbox to this thread: the task's thread, which supervises
                # it to the end (runners/worker/execute.py).
                process = subprocess.Popen(
                    bwrap_command(self.bwrap, fd, uid, ["bash", f"{AGENT_DIR}/start.sh"], limits),
                    pass_fds=(fd,),
                    cwd="/",
                    env={"PATH": DEFAULT_PATH},  # bwrap runs as root: nothing of the team's reaches it
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except (OSError, BackendError) as exc:
            output.unlink(missing_ok=True)
            remove_tree(box)
            self._release_uid(uid)
            log.error("task %s: cannot start the sandbox of %s: %s", spec.task_id, folder, exc)
            raise BackendError(f"image {spec.image!r}: the worker could not start its sandbox") from None
        finally:
            if fd >= 0:
                os.close(fd)
        log.info(
            "task %s attempt %s: started %s as uid %s, pid %s", spec.task_id, spec.attempt, folder, uid, process.pid
        )
        return ProcessHandle(
            process, output, paths, box=box, uid=uid, release=lambda: self._release_uid(uid), limits=limits
        )

    def _start_unsandboxed(self, spec: RunSpec, paths: RunPaths, folder: Path, output: Path) -> ProcessHandle:
        agent_env(spec, paths, folder)  # BackendError, naming the variable, for one a team may not give
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
                log.error("task %s: cannot start %s: %s", spec.task_id, folder / "start.sh", exc)
                raise BackendError(f"image {spec.image!r}: the worker could not start it ({exc.strerror})") from None
        log.info(
            "task %s attempt %s: started %s unsandboxed as pid %s", spec.task_id, spec.attempt, folder, process.pid
        )
        return ProcessHandle(process, output, paths, oracle)
