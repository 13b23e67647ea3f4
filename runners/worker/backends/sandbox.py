"""The process backend's sandbox: bubblewrap's options for one task, the sandbox's own files beside the task,
and the check that this machine can make one.

bwrap starts as root (it must reach the task's folders wherever the operator put them, and give the agent a uid
that is neither root nor the worker's), builds a root filesystem from nothing, and runs setpriv, which drops to
the agent's uid, every capability and every privilege gain before anything of the agent runs, then unshare, which
gives it a user namespace of its own. The options travel on a file descriptor (`bwrap --args FD`), so that no host
path or team value shows in `ps`, inside the sandbox or out.
"""

import fcntl
import math
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from runners.worker.backends.base import (
    AGENT_DIR,
    CODE_DIR,
    DATA_DIR,
    HOME,
    LOGS_DIR,
    ORACLE_DIR,
    SUBMISSION_DIR,
    VALIDATE_SCRIPT,
    BackendError,
    RunPaths,
    RunSpec,
)
from runners.worker.public_data import remove_tree

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_AGENT_UID = 60100
AGENT_UIDS = 256  # uids the worker may hand out from RUNNER_PROCESS_AGENT_UID on; none may belong to a user
GIB = 1024**3
DEFAULT_SHM_BYTES = GIB
# The most processes and threads a task may have at once unless the run asks for fewer (RunSpec.processes) or
# the operator sets another cap (RUNNER_MAX_PROCESSES): enough for data loaders with many worker threads.
DEFAULT_PROCESSES = 4096
MIN_FILE_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class Limits:
    """What one task may use, enforced by the kernel inside its sandbox (setrlimit through prlimit, before the
    agent's uid is taken, so the agent cannot raise them) and by the size of its tmpfs mounts.

    This machine's cgroups are not delegated to the worker (cgroup v1, or v2 without the memory and pids
    controllers), so the limits are rlimits: RLIMIT_NPROC counts every process and thread of the agent's uid,
    and each agent has a uid of its own, so it is the task's total; RLIMIT_DATA, RLIMIT_CPU and RLIMIT_FSIZE
    hold for each process, and the worker adds the total: it sums the resident memory of the uid's processes
    every poll and stops the task above memory_bytes (ProcessHandle.over_limit).
    """

    processes: int  # RLIMIT_NPROC: processes and threads of the agent's uid at once
    memory_bytes: int  # RLIMIT_DATA of each process (heap, anonymous memory); the worker watches the total
    cpu_seconds: int  # RLIMIT_CPU of each process: SIGXCPU at this, SIGKILL 5 s later
    file_bytes: int  # RLIMIT_FSIZE: the largest file it may write
    shm_bytes: int  # the size of its /dev/shm (a tmpfs)
    tmp_bytes: int  # the size of its /tmp (a tmpfs)
    # False for a task with GPUs: the NVIDIA driver maps large private regions that RLIMIT_DATA would refuse (not
    # tried on a GPU machine), so there the worker's watch of the total alone holds memory.
    data_limit: bool = True

    def prlimit(self) -> list[str]:
        data = self.memory_bytes if self.data_limit else "unlimited"
        return [
            "prlimit", f"--nproc={self.processes}", f"--data={data}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}", f"--fsize={self.file_bytes}", "--core=0", "--",
        ]  # fmt: skip


def task_limits(spec: RunSpec, *, max_processes: int, cpus: float, memory_gb: float) -> Limits:
    """The task's limits: what its run asked for, never above the operator's caps (this worker's RUNNER_CPUS,
    RUNNER_MEMORY_GB and RUNNER_MAX_PROCESSES); what it left out gets the cap."""
    processes = min(spec.processes, max_processes) if spec.processes > 0 else max_processes
    memory = min(spec.memory_gb, memory_gb) if spec.memory_gb > 0 and memory_gb > 0 else spec.memory_gb or memory_gb
    task_cpus = min(spec.cpus, cpus) if spec.cpus > 0 and cpus > 0 else spec.cpus or cpus or 1.0
    shm = int(spec.shm_gb * GIB) if spec.shm_gb > 0 else DEFAULT_SHM_BYTES
    memory_bytes = int(memory * GIB) if memory > 0 else 64 * GIB
    return Limits(
        processes=max(processes, 16),
        memory_bytes=memory_bytes,
        cpu_seconds=max(math.ceil(spec.time_limit_seconds * task_cpus), 1),
        file_bytes=max(spec.max_output_bytes, MIN_FILE_BYTES),
        shm_bytes=min(shm, memory_bytes),
        tmp_bytes=min(shm, memory_bytes),
        data_limit=spec.gpus == 0,
    )


# What of the host's /etc an agent's programs read (the loader's cache, certificates, time zone, Python's
# site configuration), read-only; passwd, group, hosts and hostname are the sandbox's own.
ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone", "ssl", "ca-certificates",
    "ca-certificates.conf", "nsswitch.conf", "host.conf", "gai.conf", "mime.types", "os-release", "debian_version",
    "protocols", "services", "fonts", "magic", "python3", "python3.11", "python3.12", "python3.13",
)  # fmt: skip


def _write_etc(etc: Path, uid: int) -> None:
    etc.mkdir()
    files = {
        "passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:{uid}:{uid}:agent:{HOME}:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nagent:x:{uid}:\nnogroup:x:65534:\n",
        "hosts": "127.0.0.1\tlocalhost agent\n::1\tlocalhost ip6-localhost ip6-loopback\n",
        "hostname": "agent\n",
    }
    for name, text in files.items():
        (etc / name).write_text(text)
        os.chmod(etc / name, 0o444)


def make_box(box: Path, uid: int) -> None:
    """The sandbox's own files, on the host beside the task: /home (the agent's) and its /etc files; its /tmp and
    /dev/shm are size-limited tmpfs mounts of the sandbox."""
    remove_tree(box)
    box.mkdir(mode=0o755)
    (box / "home").mkdir()
    os.chown(box / "home", uid, uid)
    os.chmod(box / "home", 0o755)
    _write_etc(box / "etc", uid)


def gpu_devices() -> list[str]:
    """The NVIDIA device files of this machine (all of them: the process backend cannot pick GPUs)."""
    return sorted(str(path) for path in Path("/dev").glob("nvidia*"))


def sandbox_options(
    spec: RunSpec, paths: RunPaths, agent_dir: Path, box: Path, env: dict[str, str], limits: Limits
) -> list[str]:
    """bubblewrap's options for one task: its namespaces, its root filesystem, and env as its whole environment.

    The task's folders are bound at the neutral paths of base.py: the agent's /proc/self/mountinfo shows their
    paths inside the filesystem they come from, so the operator keeps RUNNER_WORK_DIR on a filesystem of its own
    (README, "Process backend") for none of the host's folder names to show.
    """
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if spec.network:
        args += ["--share-net"]  # the operator's HOSTED_ALLOW_NETWORK: the worker machine's network
    args += ["--die-with-parent", "--new-session", "--hostname", "agent"]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        target = Path("/", name)
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), f"/{name}"]
        elif target.is_dir():
            args += ["--ro-bind", str(target), f"/{name}"]
    for name in ETC_ENTRIES:
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for name in ("passwd", "group", "hosts", "hostname"):
        args += ["--ro-bind", str(box / "etc" / name), f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    for cpu_info in ("/sys/devices/system/cpu", "/sys/devices/system/node"):
        if os.path.isdir(cpu_info):
            args += ["--ro-bind", cpu_info, cpu_info]
    if spec.gpus > 0:
        args += ["--ro-bind", "/sys", "/sys"]  # the NVIDIA libraries read the PCI tree, as in a container
        for device in gpu_devices():
            args += ["--dev-bind", device, device]
    args += [
        "--bind", str(box / "home"), HOME,
        "--ro-bind", str(paths.data), DATA_DIR,
        "--bind", str(paths.submission), SUBMISSION_DIR,
        "--bind", str(paths.logs), LOGS_DIR,
        "--bind", str(paths.code), CODE_DIR,
        "--ro-bind", str(paths.oracle_dir), ORACLE_DIR,
        "--ro-bind", str(paths.validate_script), VALIDATE_SCRIPT,
        "--ro-bind", str(agent_dir), AGENT_DIR,
        "--chdir", HOME,
    ]  # fmt: skip
    # setpriv needs these three to become the agent; it drops them, and every other one, before the agent runs.
    args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args


def drop_to(uid: int) -> list[str]:
    """The agent's uid and gid, no other group, no capability, no_new_privs, then a user namespace of its own
    (mapping only that uid to itself: inside it the agent is nobody more)."""
    return [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
        "--no-new-privs", "--", "unshare", "--user", f"--map-user={uid}", f"--map-group={uid}", "--",
    ]  # fmt: skip


def bwrap_command(bwrap: str, options_fd: int, uid: int, command: list[str], limits: Limits | None = None) -> list[str]:
    """bwrap, then (as root inside the sandbox) prlimit sets the task's limits, then the drop to the agent."""
    return [bwrap, "--args", str(options_fd), "--", *(limits.prlimit() if limits else []), *drop_to(uid), *command]


def options_fd(args: list[str]) -> int:
    """A file descriptor holding args NUL-separated, for bwrap --args; the file is already unlinked."""
    for arg in args:
        if "\x00" in arg:
            raise BackendError("an argument of the sandbox holds a NUL byte")  # team_variables() drops those
    handle = tempfile.TemporaryFile()
    handle.write(b"".join(os.fsencode(arg) + b"\x00" for arg in args))
    handle.flush()
    handle.seek(0)
    fd = os.dup(handle.fileno())
    handle.close()
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def uid_processes(uid: int) -> list[int]:
    """Pids of the processes running as uid (its real uid), on the whole machine."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(entry.path).st_uid == uid:
                found.append(int(entry.name))
        except FileNotFoundError:
            continue
    return found


def check_sandbox(bwrap: str | None) -> str:
    """The path of bwrap when this worker can sandbox agents; BackendError saying what to do otherwise."""
    off = "or set RUNNER_PROCESS_SANDBOX=off to run agents unsandboxed (trusted agents only)"
    found = shutil.which(bwrap or "bwrap")
    if found is None:
        raise BackendError(
            "the process backend runs each agent in a bubblewrap sandbox, and this machine has no bwrap: "
            f"install it (apt-get install bubblewrap), {off}"
        )
    for tool in ("setpriv", "unshare", "prlimit"):
        if shutil.which(tool, path=DEFAULT_PATH) is None:
            raise BackendError(f"the process backend's sandbox needs {tool} (apt-get install util-linux), {off}")
    if os.geteuid() != 0:
        raise BackendError(
            "the process backend's sandbox gives each agent a uid of its own, which only a worker running as root "
            f"can do: run the worker as root, use RUNNER_BACKEND=docker, {off}"
        )
    return found


def _uid_lock_dir() -> Path:
    """Where the workers of this machine mark the agent uids they hand out: root's own folder, not a link."""
    base = Path("/run/lock") if os.path.isdir("/run/lock") else Path(tempfile.gettempdir())
    folder = base / "mle-portal-agent-uids"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise BackendError(f"{folder} is not a folder of the worker's own: remove it and start the worker again")
    return folder


def lock_uid(uid: int) -> int | None:
    """Take uid for one agent on this machine (any worker process): a locked file descriptor, or None when another
    agent has it. The lock goes with the descriptor, also when its worker dies."""
    fd = os.open(_uid_lock_dir() / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def unlock_uid(fd: int) -> None:
    os.close(fd)
