"""The process backend, starting real bash agents as real processes in real bubblewrap sandboxes (and, with
RUNNER_PROCESS_SANDBOX=off, unsandboxed)."""

import os
import socket
import time
from pathlib import Path

import pytest

from runners.worker.backends import sandbox
from runners.worker.backends.base import BackendError, RunPaths, RunSpec
from runners.worker.backends.process import DEFAULT_AGENT_UID, ProcessBackend, ProcessHandle

BASH_OWN = {"PWD", "SHLVL", "_", "OLDPWD"}
HOSTILE_ENV = {
    "BASH_ENV": "/home/agent/evil.sh",
    "LD_PRELOAD": "/home/agent/evil.so",
    "PYTHONPATH": "/home/agent",
    "NODE_OPTIONS": "--require /home/agent/evil.js",
    "PS4": "$(touch /tmp/owned)",
    "IFS": "x",
}


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
    for folder in (paths.submission, paths.logs, paths.code):
        os.chmod(folder, 0o777)  # as execute.prepare_task makes them
    (paths.data / "train.csv").write_text("id,y\n1,2\n")
    paths.validate_script.write_text("#!/bin/sh\necho check\n")
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


def wait_for(path: Path, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while not path.is_file() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} not written"
        time.sleep(0.02)
    return path.read_text()


def is_gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for a parent that does not reap it."""
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


def processes_of(uid: int) -> list[int]:
    return sandbox.uid_processes(uid)


def env_of(paths: RunPaths) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (paths.logs / "env").read_text().split("\0") if line)


@pytest.fixture
def backend(agents_dir: Path) -> ProcessBackend:
    return ProcessBackend(agents_dir=agents_dir)


@pytest.fixture
def unsandboxed(agents_dir: Path) -> ProcessBackend:
    return ProcessBackend(agents_dir=agents_dir, sandbox="off")


@pytest.fixture
def paths(tmp_path: Path) -> RunPaths:
    return make_paths(tmp_path / "task")


# --- in the sandbox -----------------------------------------------------------------------------------


def test_the_agent_sees_a_minimal_environment_with_its_sandbox_paths(backend, paths, add_agent, monkeypatch) -> None:
    monkeypatch.setenv("PORTAL_WORKER_TOKEN", "the-worker-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-workers-cloud-key")
    add_agent("env", 'env -0 > "$LOGS_DIR/env"\n')

    spec = make_spec("env:latest", AGENT_TEAM_VAR="from the team")
    handle = backend.start(spec, paths)
    assert wait_exit(handle) == 0, handle.output_tail()

    env = env_of(paths)
    assert "PORTAL_WORKER_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["AGENT_TEAM_VAR"] == "from the team"
    assert env["DATA_DIR"] == "/home/data"
    assert env["HOME"] == "/home" and env["PWD"] == "/home"
    assert env["COMPETITION_ID"] == "demo-comp" and env["TIME_LIMIT_SECS"] == "90"
    assert env["SUBMISSION_DIR"] == "/home/submission" and env["LOGS_DIR"] == "/home/logs"
    assert env["CODE_DIR"] == "/home/code" and env["AGENT_DIR"] == "/home/agent"
    assert env["ORACLE_SOCKET"] == "/home/.oracle/oracle.sock"
    assert env["VALIDATE_SUBMISSION"] == "/home/validate_submission.sh"
    assert set(env) - BASH_OWN == {
        "PATH",
        "HOME",
        "LANG",
        "USER",
        "LOGNAME",
        "AGENT_TEAM_VAR",
        "COMPETITION_ID",
        "TIME_LIMIT_SECS",
        "DATA_DIR",
        "SUBMISSION_DIR",
        "LOGS_DIR",
        "CODE_DIR",
        "ORACLE_SOCKET",
        "VALIDATE_SUBMISSION",
        "AGENT_DIR",
    }  # fmt: skip  (a variable a team may not give is refused: tests/runners/test_envnames.py)


def test_the_agent_runs_as_a_uid_of_its_own_without_capabilities_in_new_namespaces(backend, paths, add_agent) -> None:
    add_agent(
        "whoami",
        'id -u > "$LOGS_DIR/uid"\nid -G > "$LOGS_DIR/groups"\n'
        'grep -E "^Cap(Eff|Prm|Amb)" /proc/self/status > "$LOGS_DIR/caps"\n'
        'grep NoNewPrivs /proc/self/status > "$LOGS_DIR/nnp"\n'
        'for ns in user pid net ipc uts mnt; do echo "$ns $(readlink /proc/self/ns/$ns)"; done > "$LOGS_DIR/ns"\n'
        'cat /proc/sys/kernel/hostname > "$LOGS_DIR/hostname"\n'
        'ls /proc | grep -E "^[0-9]+$" | wc -l > "$LOGS_DIR/pids"\n',
    )
    handle = backend.start(make_spec("whoami"), paths)
    assert wait_exit(handle) == 0, handle.output_tail()

    uid = int((paths.logs / "uid").read_text())
    assert uid == DEFAULT_AGENT_UID and uid not in (0, os.getuid())
    assert (paths.logs / "groups").read_text().split() == [str(uid)]
    assert all(line.split()[1] == "0000000000000000" for line in (paths.logs / "caps").read_text().splitlines())
    assert (paths.logs / "nnp").read_text().split() == ["NoNewPrivs:", "1"]
    inside = dict(line.split() for line in (paths.logs / "ns").read_text().splitlines())
    for ns, link in inside.items():
        assert link != os.readlink(f"/proc/self/ns/{ns}"), f"the agent shares the worker's {ns} namespace"
    assert (paths.logs / "hostname").read_text().strip() == "agent"
    assert int((paths.logs / "pids").read_text()) <= 6  # bwrap's init, bash, ls, grep, wc: nothing of the host
    assert (paths.logs / "uid").stat().st_uid == uid  # its files are its own; the worker reads and deletes them


def test_the_agent_sees_only_its_folders_and_cannot_write_outside_them(backend, paths, add_agent, tmp_path) -> None:
    secret = tmp_path / "operator-secret"
    secret.write_text("operator's secret")
    add_agent(
        "explorer",
        f'ls -a / | tr "\\n" " " > "$LOGS_DIR/root"\nls -a /home | tr "\\n" " " > "$LOGS_DIR/home"\n'
        f'for target in {secret} /proc/1/environ /etc/shadow; do\n'
        '  if cat "$target" >/dev/null 2>&1; then echo "$target" >> "$LOGS_DIR/seen"; fi\n'
        "done\n"
        f'for target in {paths.home} {Path.cwd()} /root /var /work /run; do\n'
        '  if ls "$target" >/dev/null 2>&1; then echo "$target" >> "$LOGS_DIR/seen"; fi\n'
        "done\n"
        'for target in /usr/marker /etc/marker /home/data/marker /home/agent/marker /marker /proc/marker; do\n'
        '  if touch "$target" 2>/dev/null; then echo "$target" >> "$LOGS_DIR/written"; fi\n'
        "done\n"
        'touch /home/scratch /tmp/scratch /dev/shm/scratch "$SUBMISSION_DIR/submission.csv"\n'
        'cat "$DATA_DIR/train.csv" > "$LOGS_DIR/data"\nbash "$VALIDATE_SUBMISSION" > "$LOGS_DIR/validate"\n',
    )  # fmt: skip
    handle = backend.start(make_spec("explorer"), paths)
    assert wait_exit(handle) == 0, handle.output_tail()

    assert (paths.logs / "root").read_text().split() == [".", "..", "bin", "dev", "etc", "home", "lib", "lib64",
                                                          "proc", "sbin", "sys", "tmp", "usr"]  # fmt: skip
    assert (paths.logs / "home").read_text().split() == [".", "..", ".oracle", "agent", "code", "data", "logs",
                                                          "submission", "validate_submission.sh"]  # fmt: skip
    assert not (paths.logs / "seen").exists(), (paths.logs / "seen").read_text()
    assert not (paths.logs / "written").exists(), (paths.logs / "written").read_text()
    assert (paths.logs / "data").read_text() == "id,y\n1,2\n" and (paths.logs / "validate").read_text() == "check\n"
    assert (paths.submission / "submission.csv").is_file()
    assert not any(Path(folder, "marker").exists() for folder in ("/usr", "/etc", "/", str(paths.data)))
    assert not (backend.agents_dir / "explorer" / "marker").exists()


def test_the_agent_has_no_network_not_even_the_hosts_loopback(backend, paths, add_agent) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    add_agent(
        "caller",
        "python3 - > \"$LOGS_DIR/net\" <<'PY'\n"
        "import socket\n"
        f"for host, port in (('127.0.0.1', {port}), ('1.1.1.1', 443), ('10.0.0.1', 80)):\n"
        "    s = socket.socket(); s.settimeout(3)\n"
        "    print(host, s.connect_ex((host, port)))\n"
        "PY\n"
        'ls /sys/class/net 2>/dev/null > "$LOGS_DIR/links" || true\n'
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' >> \"$LOGS_DIR/links\"\n",
    )
    try:
        handle = backend.start(make_spec("caller"), paths)
        assert wait_exit(handle) == 0, handle.output_tail()
    finally:
        listener.close()
    results = dict(line.split() for line in (paths.logs / "net").read_text().splitlines())
    assert all(code != "0" for code in results.values()), results  # refused or unreachable, never connected
    assert (paths.logs / "links").read_text().split() == ["lo"]


def test_an_agent_in_a_long_work_dir_reaches_the_oracle_at_its_short_path(backend, tmp_path, add_agent) -> None:
    paths = make_paths(tmp_path / ("w" * 60) / ("x" * 60) / "task-1-2")
    server = socket.socket(socket.AF_UNIX)
    short = f"/proc/self/fd/{os.open(paths.oracle_dir, os.O_RDONLY)}/oracle.sock"
    server.bind(short)
    os.chmod(short, 0o666)  # as the oracle makes it: the agent's uid connects
    server.listen(1)
    add_agent(
        "caller",
        "python3 -c \"import os, socket; socket.socket(socket.AF_UNIX).connect(os.environ['ORACLE_SOCKET'])\"\n",
    )
    handle = backend.start(make_spec("caller"), paths)
    assert wait_exit(handle) == 0, handle.output_tail()
    server.close()


def test_it_runs_the_agent_in_its_home_and_keeps_its_output(backend, paths, add_agent) -> None:
    add_agent("talker", 'pwd\necho "to stderr" >&2\nexit 3\n')

    handle = backend.start(make_spec("talker"), paths)

    assert wait_exit(handle) == 3
    assert handle.output_tail() == "/home\nto stderr\n"
    assert handle.output_tail(10) == "to stderr\n"
    handle.save_output(paths.home / "run.log")
    assert (paths.home / "run.log").read_text() == "/home\nto stderr\n"


def test_kill_stops_the_agent_and_what_it_hid_in_new_sessions(backend, paths, add_agent) -> None:
    add_agent(
        "forker",
        'setsid bash -c "sleep 300 & sleep 300" &\n( trap "" HUP TERM; exec sleep 300 ) &\n'
        'echo started > "$LOGS_DIR/child"\nsleep 300\n',
    )
    handle = backend.start(make_spec("forker"), paths)
    wait_for(paths.logs / "child")
    assert len(processes_of(DEFAULT_AGENT_UID)) >= 4

    handle.kill()
    handle.kill()

    assert handle.exit_code() == -9
    handle.remove()
    handle.remove()
    assert processes_of(DEFAULT_AGENT_UID) == []


def test_it_kills_what_an_agent_left_running_when_it_exits(backend, paths, add_agent) -> None:
    add_agent("leaver", 'setsid sleep 300 &\nnohup sleep 300 >/dev/null 2>&1 &\necho left > "$LOGS_DIR/child"\n')
    handle = backend.start(make_spec("leaver"), paths)

    assert wait_exit(handle) == 0
    deadline = time.monotonic() + 10
    while processes_of(DEFAULT_AGENT_UID):
        assert time.monotonic() < deadline, "what the agent left runs on"
        time.sleep(0.05)


def test_written_bytes_counts_its_output_and_home_but_not_the_collected_folders(backend, paths, add_agent) -> None:
    add_agent("writer", 'head -c 1000 /dev/zero\nhead -c 500 /dev/zero > "$HOME/scratch"\n'
              'head -c 300 /dev/zero > /tmp/scratch\n'
              'head -c 700 /dev/zero > "$CODE_DIR/counted-elsewhere"\n')  # fmt: skip
    handle = backend.start(make_spec("writer"), paths)
    assert wait_exit(handle) == 0, handle.output_tail()

    assert handle.written_bytes() == 1500  # /tmp is a tmpfs of a fixed size (test_sandbox_limits.py)


def test_remove_deletes_its_output_and_sandbox_and_frees_its_uid(backend, paths, add_agent) -> None:
    add_agent("quiet", 'echo hi\nmkdir -p "$HOME/deep"\ntouch "$HOME/deep/file"\nchmod 000 "$HOME/deep"\n')
    first = backend.start(make_spec("quiet"), paths)
    second = backend.start(make_spec("quiet"), make_paths(paths.home.parent / "other" / "task"))
    assert {first._uid, second._uid} == {DEFAULT_AGENT_UID, DEFAULT_AGENT_UID + 1}  # one uid per running agent
    wait_exit(first)
    wait_exit(second)

    first.remove()

    assert [path.name for path in paths.home.parent.iterdir() if path.name.startswith(".")] == []
    third = backend.start(make_spec("quiet"), paths)
    assert third._uid == DEFAULT_AGENT_UID
    for handle in (second, third):
        wait_exit(handle)
        handle.remove()


def test_two_workers_on_one_machine_never_hand_out_the_same_uid(backend, agents_dir, paths, add_agent) -> None:
    add_agent("sleeper", "sleep 30\n")
    other_worker = ProcessBackend(agents_dir=agents_dir)
    first = backend.start(make_spec("sleeper"), paths)
    second = other_worker.start(make_spec("sleeper"), make_paths(paths.home.parent / "other" / "task"))
    try:
        assert (first._uid, second._uid) == (DEFAULT_AGENT_UID, DEFAULT_AGENT_UID + 1)
    finally:
        first.remove()
        second.remove()
    assert processes_of(DEFAULT_AGENT_UID) == processes_of(DEFAULT_AGENT_UID + 1) == []


@pytest.mark.parametrize("image", ["../etc:1", "Example:1", "ghcr.io/team/agent:1", ".hidden", "", "a b"])
def test_it_refuses_an_image_that_is_not_a_plain_name_without_naming_folders(backend, paths, image: str) -> None:
    with pytest.raises(BackendError, match="plain name") as refused:
        backend.start(make_spec(image), paths)
    assert str(backend.agents_dir) not in str(refused.value) and "RUNNER_" not in str(refused.value)


def test_a_missing_agent_is_refused_naming_the_image_not_the_operators_folders(backend, paths, caplog) -> None:
    with pytest.raises(BackendError) as refused:
        backend.start(make_spec("absent:2.0"), paths)

    assert (
        str(refused.value) == "image 'absent:2.0': this worker has no agent of that name; its operator installs agents"
    )
    assert str(backend.agents_dir / "absent") in caplog.text  # the operator's log says where it looked
    assert not any(name.startswith(".") for name in os.listdir(paths.home.parent))


# --- when there is no sandbox to be had -------------------------------------------------------------------


def test_without_bwrap_it_refuses_to_run_agents_and_names_the_fix(agents_dir) -> None:
    with pytest.raises(BackendError) as refused:
        ProcessBackend(agents_dir=agents_dir, bwrap="/nonexistent/bwrap")
    assert "apt-get install bubblewrap" in str(refused.value)
    assert "RUNNER_PROCESS_SANDBOX=off" in str(refused.value)


def test_a_worker_that_is_not_root_refuses_to_sandbox(agents_dir, monkeypatch) -> None:
    # Stand-in: these tests run as root, and only the check's answer is under test here.
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with pytest.raises(BackendError, match="running as root"):
        ProcessBackend(agents_dir=agents_dir)


def test_agent_uids_that_belong_to_a_user_are_refused(agents_dir) -> None:
    with pytest.raises(BackendError, match="'nobody'"):
        ProcessBackend(agents_dir=agents_dir, agent_uid=65534 - 10)


# --- unsandboxed, as the operator may choose for trusted agents ---------------------------------------------


def test_unsandboxed_the_agent_still_sees_a_minimal_environment(unsandboxed, paths, add_agent, monkeypatch) -> None:
    monkeypatch.setenv("PORTAL_WORKER_TOKEN", "the-worker-token")
    add_agent("env", 'env -0 > "$LOGS_DIR/env"\n')

    with pytest.raises(BackendError, match="env.BASH_ENV: steers"):
        unsandboxed.start(make_spec("env:latest", **HOSTILE_ENV), paths)
    handle = unsandboxed.start(make_spec("env:latest", AGENT_TEAM_VAR="from the team"), paths)
    assert wait_exit(handle) == 0

    env = env_of(paths)
    assert env["HOME"] == str(paths.home) and env["DATA_DIR"] == str(paths.data)
    assert env["AGENT_DIR"] == str(unsandboxed.agents_dir / "env")
    assert set(env) - BASH_OWN == {
        "PATH", "HOME", "LANG", "AGENT_TEAM_VAR", "COMPETITION_ID", "TIME_LIMIT_SECS", "DATA_DIR", "SUBMISSION_DIR",
        "LOGS_DIR", "CODE_DIR", "ORACLE_SOCKET", "VALIDATE_SUBMISSION", "AGENT_DIR",
    }  # fmt: skip


def test_unsandboxed_a_long_work_dir_reaches_the_oracle_through_a_short_link(unsandboxed, tmp_path, add_agent) -> None:
    paths = make_paths(tmp_path / ("w" * 60) / ("x" * 60) / "task-1-2")
    server = socket.socket(socket.AF_UNIX)
    server.bind(f"/proc/self/fd/{os.open(paths.oracle_dir, os.O_RDONLY)}/oracle.sock")
    server.listen(1)
    add_agent(
        "caller",
        "python3 -c \"import os, socket; socket.socket(socket.AF_UNIX).connect(os.environ['ORACLE_SOCKET'])\"\n",
    )
    handle = unsandboxed.start(make_spec("caller"), paths)

    assert wait_exit(handle) == 0, handle.output_tail()
    link = Path(handle._oracle or "")
    assert len(str(link / "oracle.sock")) < 100 and link.resolve() == paths.oracle_dir.resolve()
    handle.remove()
    assert not link.exists() and not link.parent.exists()
    server.close()


def test_unsandboxed_kill_stops_the_agent_and_every_process_it_started(unsandboxed, paths, add_agent) -> None:
    add_agent("forker", 'sleep 300 &\necho $! > "$LOGS_DIR/child"\nsleep 300\n')
    handle = unsandboxed.start(make_spec("forker"), paths)
    child = int(wait_for(paths.logs / "child"))

    handle.kill()

    assert handle.exit_code() == -9
    assert wait_gone(child)
    handle.remove()
