"""The process backend's limits and what its agent may see of the host, on real bubblewrap sandboxes: a fork
bomb, a memory hog, a CPU spinner and a /dev/shm filler each end their own task with a clear reason while another
task goes on; the agent has a /proc of its own and, with the work dir on a filesystem of its own, no host path in
its mount table."""

import dataclasses
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runners.worker.backends.base import BackendError, RunPaths, RunSpec
from runners.worker.backends.process import ProcessBackend, ProcessHandle
from runners.worker.backends.sandbox import GIB, task_limits
from runners.worker.execute import Registry, supervise
from tests.runners.worker.test_process_backend import make_paths, make_spec, processes_of, wait_exit

MIB = 1024**2


def spec_with(image: str, **changes: object) -> RunSpec:
    return dataclasses.replace(make_spec(image), **changes)  # type: ignore[arg-type]


@pytest.fixture
def backend(agents_dir: Path) -> ProcessBackend:
    return ProcessBackend(agents_dir=agents_dir, max_processes=4096, cpus=2.0, memory_gb=8.0)


def until(check, timeout: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)
    return found


def test_limits_come_from_the_request_under_the_operators_caps() -> None:
    asked = spec_with("x", processes=100, memory_gb=16.0, cpus=4.0, shm_gb=0.5, time_limit_seconds=60.0)
    limits = task_limits(asked, max_processes=4096, cpus=2.0, memory_gb=8.0)
    assert (limits.processes, limits.memory_bytes, limits.cpu_seconds) == (100, 8 * GIB, 120)
    assert limits.shm_bytes == limits.tmp_bytes == GIB // 2
    unasked = spec_with("x", processes=0, memory_gb=0.0, cpus=0.0, shm_gb=0.0, time_limit_seconds=10.0)
    limits = task_limits(unasked, max_processes=512, cpus=2.0, memory_gb=8.0)
    assert (limits.processes, limits.memory_bytes, limits.cpu_seconds, limits.shm_bytes) == (512, 8 * GIB, 20, GIB)
    assert task_limits(spec_with("x", processes=100_000), max_processes=512, cpus=1, memory_gb=1).processes == 512
    assert "--data=1073741824" in task_limits(spec_with("x"), max_processes=64, cpus=1, memory_gb=8).prlimit()
    gpu = task_limits(spec_with("x", gpus=1), max_processes=64, cpus=1, memory_gb=8)
    assert "--data=unlimited" in gpu.prlimit() and gpu.memory_bytes == GIB  # the worker's watch holds it


def test_a_fork_bomb_ends_its_own_task_with_the_reason_while_another_task_goes_on(backend, add_agent, tmp_path) -> None:
    add_agent("bomb", "bomb() { bomb | bomb & }\nbomb\nsleep 60\n")
    add_agent("steady", 'for i in $(seq 30); do echo "$i" >> "$LOGS_DIR/ticks"; sleep 0.1; done\n')
    steady_paths = make_paths(tmp_path / "steady" / "task")
    steady = backend.start(dataclasses.replace(make_spec("steady"), task_id=2), steady_paths)
    paths = make_paths(tmp_path / "bomb" / "task")
    handle = backend.start(spec_with("bomb", processes=64, max_output_bytes=10 * MIB), paths)
    task = Registry().add(1, 2, {})
    task.started = time.monotonic()
    try:
        verdict = supervise(
            handle, task, spec_with("bomb", processes=64, max_output_bytes=10 * MIB), paths, poll_seconds=0.05
        )
        assert verdict.status == "failed"
        assert "reached its limit of 64 processes and threads" in verdict.reason
        assert wait_exit(steady) == 0, steady.output_tail()
        assert (steady_paths.logs / "ticks").read_text().split()[-1] == "30"
        assert until(lambda: not processes_of(handle._uid))  # type: ignore[arg-type]
    finally:
        handle.remove()
        steady.remove()


def test_one_process_cannot_take_more_memory_than_the_limit(backend, add_agent, tmp_path) -> None:
    add_agent(
        "hog",
        "python3 -c 'import sys\nx = []\nwhile True: x.append(bytearray(16 * 2**20)); "
        'open(sys.argv[1], "w").write(str(len(x) * 16))\' "$LOGS_DIR/mib"\n',
    )
    paths = make_paths(tmp_path / "hog")
    handle = backend.start(spec_with("hog", memory_gb=0.25), paths)
    try:
        code = wait_exit(handle)
        assert code == 1 and "MemoryError" in handle.output_tail()
        assert int((paths.logs / "mib").read_text()) < 256  # measured: what it held before MemoryError
        reason = handle.exit_reason(code)
        assert reason is not None and "ran out of memory under its limit of 0.25 GiB per process" in reason
    finally:
        handle.remove()


def test_processes_that_together_hold_more_memory_than_the_limit_are_stopped(backend, add_agent, tmp_path) -> None:
    hold = (
        "python3 -c 'import time\nx = bytearray(120 * 2**20)\n"
        "for i in range(0, len(x), 4096): x[i] = 1\ntime.sleep(60)'"
    )
    add_agent("many", f"{hold} &\n{hold} &\n{hold} &\nwait\n")
    paths = make_paths(tmp_path / "many")
    spec = spec_with("many", memory_gb=0.25)
    handle = backend.start(spec, paths)
    task = Registry().add(1, 2, {})
    task.started = time.monotonic()
    try:
        verdict = supervise(handle, task, spec, paths, poll_seconds=0.05)
        assert verdict.status == "failed"
        assert "of memory, over its limit of 0.25 GiB" in verdict.reason, verdict.reason
    finally:
        handle.remove()


def test_forked_workers_sharing_their_parents_memory_are_counted_once(backend, add_agent, tmp_path) -> None:
    add_agent(
        "loaders",
        "python3 -c 'import os, time\nx = bytearray(150 * 2**20)\nfor i in range(0, len(x), 4096): x[i] = 1\n"
        "for _ in range(3):\n    if os.fork() == 0:\n        time.sleep(2); os._exit(0)\n"
        "time.sleep(2.5)'\n",
    )
    paths = make_paths(tmp_path / "loaders")
    spec = spec_with("loaders", memory_gb=0.25)
    handle = backend.start(spec, paths)
    task = Registry().add(1, 2, {})
    task.started = time.monotonic()
    try:
        verdict = supervise(handle, task, spec, paths, poll_seconds=0.05)
        assert (verdict.status, verdict.exit_code) == ("exited", 0), verdict.reason  # 4 x 150 MiB resident, 150 shared
    finally:
        handle.remove()


def test_shm_and_tmp_are_tmpfs_mounts_of_the_requested_size(backend, add_agent, tmp_path) -> None:
    add_agent(
        "filler",
        'df -B1 --output=size /dev/shm /tmp | tail -n 2 > "$LOGS_DIR/sizes"\n'
        'head -c 200M /dev/zero > /dev/shm/big 2> "$LOGS_DIR/shm_error" || true\n'
        'stat -c %s /dev/shm/big > "$LOGS_DIR/shm_bytes"\n'
        'head -c 200M /dev/zero > /tmp/big 2> "$LOGS_DIR/tmp_error" || true\n'
        'stat -c %s /tmp/big > "$LOGS_DIR/tmp_bytes"\n',
    )
    paths = make_paths(tmp_path / "filler")
    handle = backend.start(spec_with("filler", shm_gb=1 / 32, memory_gb=1.0), paths)
    try:
        assert wait_exit(handle) == 0, handle.output_tail()
        assert [int(size) for size in (paths.logs / "sizes").read_text().split()] == [32 * MIB, 32 * MIB]
        assert int((paths.logs / "shm_bytes").read_text()) == 32 * MIB
        assert int((paths.logs / "tmp_bytes").read_text()) == 32 * MIB
        assert "No space left on device" in (paths.logs / "shm_error").read_text()
    finally:
        handle.remove()


def test_a_cpu_spinner_is_stopped_at_its_cpu_time_limit_with_the_reason(backend, add_agent, tmp_path) -> None:
    add_agent("spin", "python3 -c 'while True: pass'\n")
    paths = make_paths(tmp_path / "spin")
    started = time.monotonic()
    handle = backend.start(spec_with("spin", time_limit_seconds=2.0, cpus=1.0), paths)
    try:
        code = wait_exit(handle, timeout=30)
        assert time.monotonic() - started < 15
        reason = handle.exit_reason(code)
        assert code == 152 and reason is not None and "its CPU time limit of 2 s" in reason
    finally:
        handle.remove()


def test_the_agent_has_its_own_procfs_and_cannot_read_other_processes_command_lines(
    backend, add_agent, tmp_path
) -> None:
    marker = "operator-secret-in-a-command-line"
    host = subprocess.Popen(["sleep", "120", marker])
    add_agent(
        "peek",
        'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " " > "$LOGS_DIR/cmdlines"\n'
        'ls /proc | grep -cE "^[0-9]+$" > "$LOGS_DIR/count"\n'
        f'cat /proc/{host.pid}/cmdline > "$LOGS_DIR/direct" 2>/dev/null || true\n',
    )
    paths = make_paths(tmp_path / "peek")
    handle = backend.start(make_spec("peek"), paths)
    try:
        assert wait_exit(handle) == 0, handle.output_tail()
        assert marker not in (paths.logs / "cmdlines").read_text()
        assert marker not in (paths.logs / "direct").read_text()
        assert int((paths.logs / "count").read_text()) <= 6
    finally:
        handle.remove()
        host.kill()
        host.wait()


@pytest.fixture
def own_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A work dir on a filesystem of its own, as the README asks of an operator."""
    work = tmp_path / "worker-work-dir"
    work.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(work)], check=True)
    try:
        yield work
    finally:
        subprocess.run(["umount", "-l", str(work)], check=True)


def test_the_mount_table_shows_no_host_folder_path(own_filesystem, add_agent, tmp_path) -> None:
    agents = own_filesystem / "agents"
    (agents / "mounts").mkdir(parents=True)
    (agents / "mounts" / "start.sh").write_text(
        'cat /proc/self/mountinfo > "$LOGS_DIR/mountinfo"\ncat /proc/mounts > "$LOGS_DIR/mounts"\n'
    )
    backend = ProcessBackend(agents_dir=agents)
    paths: RunPaths = make_paths(own_filesystem / "tasks" / "1-2")
    handle: ProcessHandle = backend.start(make_spec("mounts"), paths)
    try:
        assert wait_exit(handle) == 0, handle.output_tail()
        seen = (paths.logs / "mountinfo").read_text() + (paths.logs / "mounts").read_text()
        assert "/home/data" in seen and "/home/submission" in seen
        for host_path in (str(tmp_path), str(own_filesystem), os.environ.get("PORTAL_DATA_DIR") or str(tmp_path)):
            assert host_path not in seen
    finally:
        handle.remove()


def test_the_real_backend_refuses_a_variable_before_anything_starts(backend, add_agent, tmp_path) -> None:
    add_agent("never", 'touch "$LOGS_DIR/ran"\n')
    paths = make_paths(tmp_path / "never" / "task")
    with pytest.raises(BackendError, match="env.GIT_SSH_COMMAND: steers git"):
        backend.start(spec_with("never", env={"GIT_SSH_COMMAND": "sh -c id"}), paths)
    assert not (paths.logs / "ran").exists()
    assert not list(paths.home.parent.glob(".task.*"))  # no sandbox or output file left behind
    assert not processes_of(backend.agent_uid)


# --- through the worker's own task loop: the reason reaches the portal ----------------------------------------


def test_the_worker_reports_a_fork_bomb_and_a_memory_hog_with_their_reasons_and_runs_another_task(
    portal, config, client, add_agent
) -> None:
    from tests.runners.worker.test_execute import run

    add_agent("bomb", "bomb() { bomb | bomb & }\nbomb\nsleep 60\n")
    add_agent(
        "hog", "python3 -c 'x = []\nwhile True: x.append(bytearray(16 * 2**20))'\n"
    )  # one process, over its RLIMIT_DATA
    add_agent("refused", 'touch "$LOGS_DIR/ran"\n')
    portal.add_task(31, image="bomb:1", processes=64)
    portal.add_task(32, image="hog:1", memory_gb=0.25)
    portal.add_task(33, image="refused:1", env={"GIT_SSH_COMMAND": "sh -c id"})
    portal.add_task(34)  # the example agent, after all that

    bomb = run(31, config, client)
    assert bomb is not None and bomb["status"] == "failed"
    assert "reached its limit of 64 processes and threads" in bomb["reason"]
    hog = run(32, config, client)
    assert hog is not None and hog["status"] == "failed" and hog["exit_code"] == 1
    assert "ran out of memory under its limit of 0.25 GiB per process" in hog["reason"]
    refused = run(33, config, client)
    assert refused is not None and refused["status"] == "failed" and refused["exit_code"] is None
    assert "this worker refuses the run's variables: env.GIT_SSH_COMMAND: steers git" in refused["reason"]
    after = run(34, config, client)
    assert after is not None and (after["status"], after["exit_code"]) == ("exited", 0)
    assert [finish.outcome["status"] for finish in portal.finishes] == ["failed", "failed", "failed", "exited"]
