"""The process backend, starting real bash agents as real processes."""

import os
import time
from pathlib import Path

import pytest

from runners.worker.backends.base import BackendError, RunPaths, RunSpec
from runners.worker.backends.process import ProcessBackend, ProcessHandle


def make_paths(home: Path) -> RunPaths:
    paths = RunPaths(
        home=home,
        data=home.parent / "data",
        submission=home / "submission",
        logs=home / "logs",
        code=home / "code",
        oracle_dir=home / "oracle",
        validate_script=home / "validate_submission.sh",
    )
    for folder in (paths.data, paths.submission, paths.logs, paths.code, paths.oracle_dir):
        folder.mkdir(parents=True)
    return paths


def make_spec(image: str, **env: str) -> RunSpec:
    return RunSpec(
        task_id=1,
        attempt=2,
        image=image,
        competition_id="demo-comp",
        env=env,
        time_limit_seconds=90.0,
        gpus=0,
        cpus=1.0,
        memory_gb=1.0,
        shm_gb=1.0,
        network=False,
        max_output_bytes=1000,
    )


def wait_exit(handle: ProcessHandle, timeout: float = 20) -> int:
    deadline = time.monotonic() + timeout
    while (code := handle.exit_code()) is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return code


def is_gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for a parent that does not reap it (the init of a container)."""
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while not is_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def backend(agents_dir: Path) -> ProcessBackend:
    return ProcessBackend(agents_dir=agents_dir)


@pytest.fixture
def paths(tmp_path: Path) -> RunPaths:
    return make_paths(tmp_path / "task")


def test_the_agent_sees_a_minimal_environment_and_the_tasks_own(backend, paths, add_agent, monkeypatch) -> None:
    monkeypatch.setenv("PORTAL_WORKER_TOKEN", "the-worker-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-workers-cloud-key")
    add_agent("env", 'env -0 > "$LOGS_DIR/env"\n')

    handle = backend.start(make_spec("env:latest", TEAM_VAR="from the team", DATA_DIR="/elsewhere"), paths)
    assert wait_exit(handle) == 0

    env = dict(line.split("=", 1) for line in (paths.logs / "env").read_text().split("\0") if line)
    assert "PORTAL_WORKER_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["TEAM_VAR"] == "from the team"
    assert env["HOME"] == str(paths.home)
    assert env["DATA_DIR"] == str(paths.data)  # a team variable cannot move the task's folders
    assert env["COMPETITION_ID"] == "demo-comp"
    assert env["TIME_LIMIT_SECS"] == "90"
    assert env["SUBMISSION_DIR"] == str(paths.submission)
    assert env["LOGS_DIR"] == str(paths.logs)
    assert env["CODE_DIR"] == str(paths.code)
    assert env["ORACLE_SOCKET"] == str(paths.oracle_dir / "oracle.sock")
    assert env["VALIDATE_SUBMISSION"] == str(paths.validate_script)
    assert env["AGENT_DIR"] == str(backend.agents_dir / "env")
    bash_own = {"PWD", "SHLVL", "_", "OLDPWD"}
    assert set(env) - bash_own == {
        "PATH", "HOME", "LANG", "TEAM_VAR", "COMPETITION_ID", "TIME_LIMIT_SECS", "DATA_DIR", "SUBMISSION_DIR",
        "LOGS_DIR", "CODE_DIR", "ORACLE_SOCKET", "VALIDATE_SUBMISSION", "AGENT_DIR",
    }  # fmt: skip


def test_an_agent_deep_in_a_long_work_dir_reaches_the_oracle_through_a_short_link(backend, tmp_path, add_agent) -> None:
    """Unix socket paths hold 107 bytes; a task folder deeper than that still gets a socket path it can connect to."""
    import socket

    paths = make_paths(tmp_path / ("w" * 60) / ("x" * 60) / "task-1-2")
    server = socket.socket(socket.AF_UNIX)
    server.bind(f"/proc/self/fd/{os.open(paths.oracle_dir, os.O_RDONLY)}/oracle.sock")
    server.listen(1)
    add_agent(
        "caller",
        "python3 -c \"import os, socket; socket.socket(socket.AF_UNIX).connect(os.environ['ORACLE_SOCKET'])\"\n",
    )
    handle = backend.start(make_spec("caller"), paths)

    assert wait_exit(handle) == 0, handle.output_tail()
    link = Path(handle._oracle or "")
    assert len(str(link / "oracle.sock")) < 100 and link.resolve() == paths.oracle_dir.resolve()
    handle.remove()
    assert not link.exists() and not link.parent.exists()
    server.close()


def test_it_runs_the_agent_in_its_task_folder_and_keeps_its_output(backend, paths, add_agent) -> None:
    add_agent("talker", 'pwd\necho "to stderr" >&2\nexit 3\n')

    handle = backend.start(make_spec("talker"), paths)

    assert wait_exit(handle) == 3
    assert handle.output_tail() == f"{paths.home}\nto stderr\n"
    assert handle.output_tail(10) == "to stderr\n"
    handle.save_output(paths.home / "run.log")
    assert (paths.home / "run.log").read_text() == f"{paths.home}\nto stderr\n"


def test_kill_stops_the_agent_and_every_process_it_started(backend, paths, add_agent) -> None:
    add_agent("forker", 'sleep 300 &\necho $! > "$LOGS_DIR/child"\nsleep 300\n')
    handle = backend.start(make_spec("forker"), paths)
    deadline = time.monotonic() + 10
    while not (paths.logs / "child").is_file() or not (paths.logs / "child").read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child = int((paths.logs / "child").read_text())

    handle.kill()
    handle.kill()

    assert handle.exit_code() == -9
    assert wait_gone(child)
    handle.remove()
    handle.remove()


def test_it_kills_what_an_agent_left_running_when_it_exits(backend, paths, add_agent) -> None:
    add_agent("leaver", 'sleep 300 &\necho $! > "$LOGS_DIR/child"\n')
    handle = backend.start(make_spec("leaver"), paths)

    assert wait_exit(handle) == 0

    child = int((paths.logs / "child").read_text())
    assert wait_gone(child)


def test_written_bytes_counts_its_output_and_its_home_outside_the_collected_folders(backend, paths, add_agent) -> None:
    add_agent("writer", 'head -c 1000 /dev/zero\nhead -c 500 /dev/zero > "$HOME/scratch"\n'
              'head -c 700 /dev/zero > "$CODE_DIR/counted-elsewhere"\n')  # fmt: skip
    handle = backend.start(make_spec("writer"), paths)
    wait_exit(handle)

    assert handle.written_bytes() == 1500


def test_remove_deletes_its_output_file(backend, paths, add_agent) -> None:
    add_agent("quiet", "echo hi\n")
    handle = backend.start(make_spec("quiet"), paths)
    wait_exit(handle)

    handle.remove()

    assert [path.name for path in paths.home.parent.iterdir() if path.name.endswith(".output")] == []


@pytest.mark.parametrize("image", ["../etc:1", "Example:1", "ghcr.io/team/agent:1", ".hidden", "", "a b"])
def test_it_refuses_an_image_that_is_not_a_plain_folder_name(backend, paths, image: str) -> None:
    with pytest.raises(BackendError, match="RUNNER_PROCESS_AGENTS_DIR"):
        backend.start(make_spec(image), paths)


def test_it_names_the_missing_agent_folder_and_the_variable(backend, paths) -> None:
    with pytest.raises(BackendError) as refused:
        backend.start(make_spec("absent:2.0"), paths)

    assert str(backend.agents_dir / "absent") in str(refused.value)
    assert f"RUNNER_PROCESS_AGENTS_DIR={backend.agents_dir}" in str(refused.value)
    assert not any(name.endswith(".output") for name in os.listdir(paths.home.parent))
