"""The Docker backend on a real engine: what an agent's container can and cannot reach, and how it is stopped.

Each test runs a small bash agent (an image made from the example agent's by make_agent_image) with the
task's folders made under tmp_path, and reads what the agent found from the host side. The GPU request is
checked on the options alone (container_options), because this machine has no GPU.
"""

import dataclasses
import json
import os
import random
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.types import DeviceRequest

from runners.worker.backends.base import Backend, BackendError, RunPaths, RunSpec
from runners.worker.backends.docker import (
    PIDS_LIMIT,
    DockerBackend,
    DockerHandle,
    container_options,
    engine_check,
)
from runners.worker.oracle import OracleServer
from tests.runners.docker_engine import MakeAgentImage

REPO = Path(__file__).resolve().parents[2]
VALIDATE_SCRIPT = REPO / "runners" / "worker" / "validate_submission.sh"
MB = 1_000_000
STANDARD_MOUNTS = {"/", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}
TASK_MOUNTS = {
    "/home/data",
    "/home/submission",
    "/home/logs",
    "/home/code",
    "/home/.oracle",
    "/home/validate_submission.sh",
}


def run_spec(image: str, **overrides: Any) -> RunSpec:
    spec = RunSpec(
        # A task id no other test uses, so that the label filter finds this test's containers only.
        task_id=random.randint(10**8, 10**9),
        attempt=1,
        image=image,
        competition_id="spooky-author-identification",
        env={},
        time_limit_seconds=600.0,
        gpus=0,
        cpus=1.0,
        memory_gb=1.0,
        shm_gb=0.25,
        network=False,
        max_output_bytes=20 * MB,
    )
    return dataclasses.replace(spec, **overrides)


@pytest.fixture
def paths(tmp_path: Path) -> RunPaths:
    """A task's folders as the supervisor makes them; writable by any uid, since the agent may not be root."""
    home = tmp_path / "task"
    paths = RunPaths(
        home=home,
        data=home / "data",
        submission=home / "submission",
        logs=home / "logs",
        code=home / "code",
        oracle_dir=home / ".oracle",
        validate_script=VALIDATE_SCRIPT,
    )
    for folder in (paths.data, paths.submission, paths.logs, paths.code, paths.oracle_dir):
        folder.mkdir(parents=True)
    for folder in (paths.submission, paths.logs, paths.code, paths.oracle_dir):
        folder.chmod(0o777)
    return paths


class TrackingBackend(DockerBackend):
    """Remembers its handles, so that a failed test still leaves no container behind."""

    def __init__(self, client: docker.DockerClient) -> None:
        super().__init__(client)
        self.handles: list[DockerHandle] = []

    def start(self, spec: RunSpec, paths: RunPaths) -> DockerHandle:
        handle = super().start(spec, paths)
        self.handles.append(handle)
        return handle


@pytest.fixture
def backend(docker_client: docker.DockerClient) -> Iterator[TrackingBackend]:
    backend = TrackingBackend(docker_client)
    yield backend
    for handle in backend.handles:
        handle.remove()


def wait_exit(handle: DockerHandle, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while (code := handle.exit_code()) is None:
        assert time.monotonic() < deadline, f"the agent still runs after {timeout} s: {handle.output_tail()}"
        time.sleep(0.1)
    return code


def run_agent(backend: DockerBackend, image: str, paths: RunPaths, **spec) -> tuple[DockerHandle, int]:
    handle = backend.start(run_spec(image, **spec), paths)
    return handle, wait_exit(handle)


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def test_the_agent_has_no_network(backend, make_agent_image: MakeAgentImage, paths):
    image = make_agent_image(
        """
ls /sys/class/net > /home/logs/interfaces
python3 - > /home/logs/connect <<'PY'
import socket
connection = socket.socket()
connection.settimeout(3)
try:
    connection.connect(("1.1.1.1", 80))
    print("connected")
except OSError as error:
    print("refused:", error)
PY
"""
    )
    _, code = run_agent(backend, image, paths)
    assert code == 0
    assert (paths.logs / "interfaces").read_text().split() == ["lo"]
    assert (paths.logs / "connect").read_text().startswith("refused:")


def test_the_data_folder_is_read_only(backend, make_agent_image, paths):
    (paths.data / "train.csv").write_text("id,label\n1,0\n")
    image = make_agent_image(
        """
echo changed > /home/data/train.csv 2>/dev/null && echo wrote >> /home/logs/result || echo refused >> /home/logs/result
touch /home/data/new.csv 2>/dev/null && echo made >> /home/logs/result || echo refused >> /home/logs/result
rm -f /home/data/train.csv 2>/dev/null && echo removed >> /home/logs/result || echo refused >> /home/logs/result
"""
    )
    _, code = run_agent(backend, image, paths)
    assert code == 0
    assert (paths.logs / "result").read_text().split() == ["refused", "refused", "refused"]
    assert (paths.data / "train.csv").read_text() == "id,label\n1,0\n"
    assert sorted(p.name for p in paths.data.iterdir()) == ["train.csv"]


def test_the_portals_answers_are_out_of_reach(backend, make_agent_image, paths, tmp_path):
    portal_data = Path(os.environ.get("PORTAL_DATA_DIR") or tmp_path / "portal-data")
    answers = portal_data / f"competitions-{uuid.uuid4().hex[:8]}" / "private" / "answers.csv"
    answers.parent.mkdir(parents=True)
    answers.write_text("id,label\n1,secret-answer-7f3a\n")
    try:
        image = make_agent_image(
            f"""
test -e {answers} && echo visible > /home/logs/answers || echo absent > /home/logs/answers
# The needle is made at run time, so that this script itself does not hold it.
needle="secret-answer-"; needle="${{needle}}7f3a"
grep -rls --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "$needle" / > /home/logs/found || true
awk '{{print $5}}' /proc/self/mountinfo > /home/logs/mounts
"""
        )
        _, code = run_agent(backend, image, paths)
    finally:
        answers.unlink()
    assert code == 0
    assert (paths.logs / "answers").read_text().strip() == "absent"
    assert (paths.logs / "found").read_text() == ""
    mounts = set((paths.logs / "mounts").read_text().split())
    own = {m for m in mounts - STANDARD_MOUNTS if not m.startswith(("/proc", "/dev", "/sys"))}
    assert own == TASK_MOUNTS


def test_kill_stops_a_running_agent_and_remove_leaves_no_container(backend, make_agent_image, paths, docker_client):
    spec = run_spec(make_agent_image("sleep 600"))
    handle = backend.start(spec, paths)
    time.sleep(0.5)
    assert handle.exit_code() is None

    started = time.monotonic()
    handle.kill()
    assert handle.exit_code() is not None
    assert time.monotonic() - started < 5
    handle.kill()

    handle.remove()
    handle.remove()
    label = f"portal.task={spec.task_id}"
    assert docker_client.containers.list(all=True, sparse=True, filters={"label": label}) == []
    assert handle.exit_code() is not None


def test_a_restarted_worker_removes_its_own_orphaned_containers_and_no_one_elses(
    docker_client, make_agent_image, paths
):
    image = make_agent_image("sleep 600")
    mine, theirs = f"worker-a-{random.randint(0, 10**9)}", f"worker-b-{random.randint(0, 10**9)}"
    orphan = DockerBackend(docker_client, worker_label=mine).start(run_spec(image), paths)  # its worker dies here
    kept = DockerBackend(docker_client, worker_label=theirs).start(run_spec(image), paths)
    try:
        restarted = DockerBackend(docker_client, worker_label=mine)
        assert restarted.remove_orphans() == 1
        assert docker_client.containers.list(all=True, sparse=True, filters={"label": f"portal.worker={mine}"}) == []
        assert len(docker_client.containers.list(sparse=True, filters={"label": f"portal.worker={theirs}"})) == 1
        assert DockerBackend(docker_client).remove_orphans() == 0  # no label, nothing of anyone's
    finally:
        orphan.remove()
        kept.remove()


def test_written_bytes_counts_what_the_agent_writes_outside_its_folders(backend, make_agent_image, paths):
    handle = backend.start(run_spec(make_agent_image("head -c 50000000 /dev/urandom > /tmp/blob; sleep 600")), paths)
    deadline = time.monotonic() + 30
    while handle.written_bytes() < 50 * MB:
        assert time.monotonic() < deadline, f"written_bytes stayed at {handle.written_bytes()}"
        time.sleep(0.5)
    handle.kill()
    assert folder_bytes(paths.home) == 0


def test_an_output_cap_on_the_logs_folder_stops_an_agent_long_before_10_gb(backend, make_agent_image, paths):
    """The supervisor's output cap watches the host folders; 1 MiB at a time, this agent would write 10 GiB."""
    flood = "for i in $(seq 10240); do head -c 1048576 /dev/zero >> /home/logs/flood.bin; sleep 0.01; done"
    handle = backend.start(run_spec(make_agent_image(flood)), paths)
    cap = 20 * MB
    deadline = time.monotonic() + 60
    while folder_bytes(paths.logs) <= cap:
        assert handle.exit_code() is None, handle.output_tail()
        assert time.monotonic() < deadline, "the agent never reached the cap"
        time.sleep(0.05)
    handle.kill()
    assert handle.exit_code() == 137  # SIGKILL
    size = folder_bytes(paths.logs)
    time.sleep(0.5)
    assert folder_bytes(paths.logs) == size  # nothing more lands after the kill
    assert cap < size < 100 * MB


def test_the_agent_gets_the_team_variables_and_the_portals(backend, make_agent_image, paths):
    image = make_agent_image("env > /home/logs/env.txt")
    env = {"AGENT_TEAM_VARIABLE": "from the team"}
    _, code = run_agent(backend, image, paths, env=env, time_limit_seconds=5400.0)
    assert code == 0
    seen = dict(line.split("=", 1) for line in (paths.logs / "env.txt").read_text().splitlines() if "=" in line)
    assert seen["AGENT_TEAM_VARIABLE"] == "from the team"
    assert seen["COMPETITION_ID"] == "spooky-author-identification"
    assert seen["TIME_LIMIT_SECS"] == "5400"
    assert seen["DATA_DIR"] == "/home/data"
    assert seen["SUBMISSION_DIR"] == "/home/submission"
    assert seen["LOGS_DIR"] == "/home/logs"
    assert seen["CODE_DIR"] == "/home/code"
    assert seen["ORACLE_SOCKET"] == "/home/.oracle/oracle.sock"
    assert seen["VALIDATE_SUBMISSION"] == "/home/validate_submission.sh"
    assert seen["AGENT_DIR"] == "/home/agent"


def test_the_memory_limit_holds(backend, make_agent_image, paths):
    image = make_agent_image("python3 -c 'blocks = [bytearray(64 << 20) for _ in range(32)]'")
    handle, code = run_agent(backend, image, paths, memory_gb=0.25)
    assert code == 137, handle.output_tail()
    reason = handle.exit_reason(code)
    assert reason is not None and "killed it for using more than its memory of 0.25 GiB" in reason


def test_a_fork_bomb_stops_at_the_requested_process_limit(backend, make_agent_image, paths):
    image = make_agent_image("bomb() { bomb | bomb & }; bomb; sleep 600")
    handle = backend.start(run_spec(image, processes=64), paths)
    container = backend.client.containers.get(handle.container_id)
    assert container.attrs["HostConfig"]["PidsLimit"] == 64
    deadline = time.monotonic() + 30
    seen = 0
    while time.monotonic() < deadline:
        seen = max(seen, int(container.stats(stream=False).get("pids_stats", {}).get("current") or 0))
        if seen >= 60:
            break
    assert 60 <= seen <= 64  # measured: the bomb fills its limit and stays there
    assert handle.exit_code() is None and handle.over_limit() is None  # the engine holds it; the deadline ends it
    handle.kill()
    assert handle.exit_code() == 137


def test_shm_is_the_requested_size(backend, make_agent_image, paths):
    image = make_agent_image("df -B1 --output=size /dev/shm | tail -n 1 > /home/logs/shm")
    _, code = run_agent(backend, image, paths, shm_gb=1 / 16)
    assert code == 0 and int((paths.logs / "shm").read_text()) == 64 * 1024**2


def test_a_variable_a_team_may_not_give_is_refused_before_a_container_exists(backend, agent_image, paths):
    before = len(backend.client.containers.list(all=True))
    for name in ("GIT_SSH_COMMAND", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD"):
        with pytest.raises(BackendError, match=f"env.{name}: "):
            backend.start(run_spec(agent_image, env={name: "x"}), paths)
    assert len(backend.client.containers.list(all=True)) == before


def test_output_tail_and_save_output(backend, make_agent_image, paths, tmp_path):
    # The engine reads stdout and stderr apart; the pauses keep their order for the tail.
    script = (
        'for i in $(seq 500); do echo "line $i"; done; sleep 0.3; echo "to stderr" >&2; sleep 0.3; echo last; exit 3'
    )
    handle, code = run_agent(backend, make_agent_image(script), paths)
    assert code == 3
    tail = handle.output_tail(max_bytes=40)
    assert len(tail.encode()) <= 40
    assert tail.endswith("line 500\nto stderr\nlast\n")
    assert handle.output_tail(max_bytes=4000).startswith("line 53\nline 54\n")  # more lines than the first ask
    handle.save_output(tmp_path / "run.log")
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert lines == [f"line {i}" for i in range(1, 501)] + ["to stderr", "last"]


def test_files_an_agent_leaves_as_root_come_back_to_the_workers_user(backend, make_agent_image, paths):
    backend.owner = (12345, 12346)
    image = make_agent_image(
        """
mkdir -p /home/submission/deep && echo a > /home/submission/deep/x && chmod 700 /home/submission/deep
echo id,label > /home/submission/submission.csv
ln -s /etc/passwd /home/code/link
"""
    )
    _, code = run_agent(backend, image, paths)
    assert code == 0
    for path in (paths.submission / "deep", paths.submission / "deep" / "x", paths.submission / "submission.csv"):
        assert (path.stat().st_uid, path.stat().st_gid) == (12345, 12346)
    assert (paths.code / "link").lstat().st_uid == 12345
    assert Path("/etc/passwd").stat().st_uid == 0  # the link's target is the container's, and was not followed


def test_a_gpu_request_on_an_engine_without_gpus_says_what_is_missing(backend, make_agent_image, paths):
    with pytest.raises(BackendError, match="NVIDIA Container Toolkit"):
        backend.start(run_spec(make_agent_image("true"), gpus=1), paths)


def test_removing_a_running_agent_ends_it(backend, make_agent_image, paths, docker_client):
    spec = run_spec(make_agent_image("sleep 600"))
    handle = backend.start(spec, paths)
    handle.remove()
    assert handle.exit_code() == 137
    assert docker_client.containers.list(all=True, sparse=True, filters={"label": f"portal.task={spec.task_id}"}) == []


def test_a_missing_image_is_refused_with_a_message_that_says_what_to_do(backend, paths):
    with pytest.raises(BackendError, match=r"portal-no-such-image:never.*operator must load it"):
        backend.start(run_spec("portal-no-such-image:never"), paths)


def test_the_example_agent_writes_its_submission(backend, agent_image, paths):
    (paths.data / "sample_submission.csv").write_text("id,label\n10,0.5\n11,0.5\n12,0.5\n")
    (paths.data / "train.csv").write_text("id,feature,label\n1,a,1\n2,b,2\n3,c,3\n")
    checks: list[bytes] = []

    def forward(csv: bytes) -> dict:
        checks.append(csv)
        return {"valid": True, "reason": None}

    oracle = OracleServer(
        paths.oracle_dir / "oracle.sock", forward=forward, log_path=paths.logs / "format_checks.jsonl"
    ).start()
    try:
        handle, code = run_agent(backend, agent_image, paths)
    finally:
        oracle.stop()
    assert code == 0, handle.output_tail()
    submission = (paths.submission / "submission.csv").read_bytes()
    assert submission.decode().splitlines() == ["id,label", "10,2.0", "11,2.0", "12,2.0"]
    assert checks == [submission]
    assert json.loads((paths.logs / "format_checks.jsonl").read_text())["valid"] is True
    assert "format check: exit 0" in (paths.logs / "agent.log").read_text()
    assert (paths.code / "agent.py").is_file()


# What the options say, without an engine.


def task_paths(root: Path) -> RunPaths:
    return RunPaths(
        home=root,
        data=root / "data",
        submission=root / "submission",
        logs=root / "logs",
        code=root / "code",
        oracle_dir=root / ".oracle",
        validate_script=root / "validate_submission.sh",
    )


def test_the_docker_backend_is_a_backend(docker_client: docker.DockerClient) -> None:
    backend: Backend = DockerBackend(docker_client)  # mypy checks the protocol here
    assert backend.name == "docker"


def test_the_options_request_the_gpus_of_the_spec(tmp_path):
    options = container_options(run_spec("agent:1", gpus=2), task_paths(tmp_path))
    assert options["device_requests"] == [DeviceRequest(count=2, capabilities=[["gpu"]])]


def test_the_options_request_no_gpu_for_a_cpu_task(tmp_path):
    assert "device_requests" not in container_options(run_spec("agent:1", gpus=0), task_paths(tmp_path))


def test_the_options_confine_the_container(tmp_path):
    spec = run_spec("agent:1", task_id=7, attempt=2, cpus=4, memory_gb=16, shm_gb=2)
    options = container_options(spec, task_paths(tmp_path))
    assert options["image"] == "agent:1"
    assert options["name"].startswith("portal-task-7-2-")
    assert options["network_mode"] == "none"
    assert options["nano_cpus"] == 4_000_000_000
    assert options["mem_limit"] == options["memswap_limit"] == 16 * 1024**3
    assert options["shm_size"] == 2 * 1024**3
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["pids_limit"] == PIDS_LIMIT
    assert container_options(dataclasses.replace(spec, processes=100), task_paths(tmp_path))["pids_limit"] == 100
    assert options["labels"] == {"portal.task": "7", "portal.attempt": "2"}
    assert "command" not in options and "entrypoint" not in options  # the image's own command
    read_only = {mount["Target"]: mount["ReadOnly"] for mount in options["mounts"]}
    assert read_only == {
        "/home/data": True,
        "/home/submission": False,
        "/home/logs": False,
        "/home/code": False,
        "/home/.oracle": False,
        "/home/validate_submission.sh": True,
    }
    assert {mount["Type"] for mount in options["mounts"]} == {"bind"}
    assert container_options(run_spec("agent:1", network=True), task_paths(tmp_path)).get("network_mode") is None


def test_an_engine_that_does_not_answer_is_named_in_the_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    with pytest.raises(BackendError, match=rf"unix://{tmp_path}/docker.sock does not answer"):
        engine_check()
    with pytest.raises(BackendError, match="does not answer"):
        DockerBackend()


def test_what_a_container_isolates_and_what_it_does_not(backend, make_agent_image, paths, monkeypatch):
    """Measured for the README's comparison of the backends: the container's own namespaces (but the engine's
    default user namespace: root in it is root on the host), no_new_privs, Docker's default capabilities, none
    of the worker's environment, and no team variable that steers the shell or the loader."""
    monkeypatch.setenv("PORTAL_WORKER_TOKEN", "the-worker-token")
    image = make_agent_image(
        """
id -u > /home/logs/uid
grep -E "^(CapEff|NoNewPrivs)" /proc/self/status > /home/logs/status
for ns in user pid net ipc uts mnt; do echo "$ns $(readlink /proc/self/ns/$ns)"; done > /home/logs/ns
ls /proc | grep -cE "^[0-9]+$" > /home/logs/pids
env > /home/logs/env.txt
"""
    )
    steering = {"BASH_ENV": "/tmp/evil.sh", "LD_PRELOAD": "/tmp/evil.so", "PYTHONPATH": "/tmp", "AGENT_KEPT": "yes"}
    with pytest.raises(BackendError, match="env.BASH_ENV: steers"):
        run_agent(backend, image, paths, env=steering)
    _, code = run_agent(backend, image, paths, env={"AGENT_KEPT": "yes"})
    assert code == 0
    assert (paths.logs / "uid").read_text().strip() == "0"  # the image's user: root, as root on the host
    status = dict(line.split(":\t") for line in (paths.logs / "status").read_text().splitlines())
    assert status["NoNewPrivs"].strip() == "1" and int(status["CapEff"], 16) != 0  # Docker's default set
    inside = dict(line.split() for line in (paths.logs / "ns").read_text().splitlines())
    shared = {ns for ns, link in inside.items() if link == os.readlink(f"/proc/self/ns/{ns}")}
    assert shared == {"user"}  # no user namespace of its own unless the engine remaps users
    assert int((paths.logs / "pids").read_text()) <= 5
    seen = (paths.logs / "env.txt").read_text()
    assert "AGENT_KEPT=yes" in seen and "the-worker-token" not in seen
    assert not any(f"{name}=" in seen for name in ("BASH_ENV", "LD_PRELOAD", "PYTHONPATH"))


def test_an_engine_that_stops_answering_is_not_named_to_the_team(tmp_path, caplog, monkeypatch):
    import docker

    socket_path = f"unix://{tmp_path}/gone.sock"
    monkeypatch.setenv("DOCKER_HOST", socket_path)
    backend = DockerBackend(client=docker.DockerClient(base_url=socket_path, version="1.41"))  # no version call
    with pytest.raises(BackendError) as refused:
        backend.start(run_spec("team/agent:1"), task_paths(tmp_path))
    assert "'team/agent:1'" in str(refused.value) and "did not answer" in str(refused.value)
    assert str(tmp_path) not in str(refused.value)  # the operator's folders go to the worker's log only
    assert str(tmp_path) in caplog.text
