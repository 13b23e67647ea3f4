"""run_task from claim to finish: real agents as real processes (the process backend), a real oracle socket,
real tar files, against the stand-in portal (see portal_stand_in.py: the portal's own API is tested elsewhere)."""

import base64
import io
import stat
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runners.worker.backends.process import ProcessBackend
from runners.worker.client import PortalClient
from runners.worker.config import WorkerConfig
from runners.worker.execute import DoesNotFit, Registry, run_task
from runners.worker.public_data import UnsafeArchive, safe_extract
from tests.runners.worker.portal_stand_in import StandInPortal, capability_of, public_tar

SAMPLE = b"id,target,kind\n1,0,a\n2,0,a\n3,0,a\n"
TRAIN = b"id,target,kind\n10,1.0,x\n11,2.0,y\n12,3.0,y\n"


def run(task_id: int, config: WorkerConfig, client: PortalClient, *, registry: Registry | None = None):
    return run_task(
        task_id,
        1,
        capability=capability_of(task_id),
        config=config,
        client=client,
        backend=ProcessBackend(agents_dir=config.agents_dir),
        registry=registry or Registry(),
    )


def archive_files(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}  # type: ignore[union-attr]


def test_it_runs_the_example_agent_and_posts_its_archive(portal: StandInPortal, config, client) -> None:
    portal.add_task(1, files={"sample_submission.csv": SAMPLE, "train.csv": TRAIN})

    outcome = run(1, config, client)

    assert outcome is not None
    assert (outcome["status"], outcome["exit_code"], outcome["attempt"]) == ("exited", 0, 1)
    assert outcome["reason"] == "the agent exited with code 0"
    [finish] = portal.finishes
    assert finish.outcome == outcome
    files = archive_files(finish.archive or b"")
    assert files["submission/submission.csv"].decode().splitlines() == [
        "id,target,kind",
        "1,2.0,y",
        "2,2.0,y",
        "3,2.0,y",
    ]
    assert b"format check: exit 0" in files["logs/agent.log"]
    assert b'"valid": true' in files["logs/format_checks.jsonl"]
    assert "code/agent.py" in files
    assert b"done" in files["run.log"]
    [(task_id, attempt, csv)] = portal.validations
    assert (task_id, attempt, csv) == (1, "1", files["submission/submission.csv"])


def test_it_removes_the_task_folder_and_archive_at_the_end(portal, config, client, add_agent) -> None:
    add_agent("writer", 'echo hello > "$SUBMISSION_DIR/submission.csv"\n')
    portal.add_task(2, image="writer:1")

    run(2, config, client)

    assert list((config.work_dir / "tasks").iterdir()) == []


def test_it_keeps_the_public_data_read_only_in_its_cache(portal, config, client, add_agent) -> None:
    add_agent("lister", 'ls -la "$DATA_DIR"\n')
    portal.add_task(3, image="lister:1")

    run(3, config, client)

    [cached] = (config.work_dir / "data").iterdir()
    assert cached.name.startswith("demo-comp-")
    assert stat.S_IMODE(cached.stat().st_mode) == 0o555
    assert stat.S_IMODE((cached / "sample_submission.csv").stat().st_mode) == 0o444


def test_it_kills_an_agent_past_its_deadline(portal, config, client, add_agent) -> None:
    add_agent("sleeper", "echo started\nsleep 30\n")
    portal.add_task(4, image="sleeper:1", time_limit_seconds=0.5)

    started = time.monotonic()
    outcome = run(4, config, client)

    assert outcome is not None
    assert outcome["status"] == "timed_out"
    assert outcome["reason"] == "stopped after the time limit of 0.5 s"
    assert time.monotonic() - started < 10
    assert 0.5 <= outcome["elapsed_seconds"] < 5
    assert b"started" in archive_files(portal.finishes[0].archive or b"")["run.log"]


def test_it_stops_an_agent_whose_outputs_pass_the_cap_and_sends_no_archive(portal, config, client, add_agent) -> None:
    add_agent("filler", 'head -c 2000000 /dev/zero > "$CODE_DIR/weights.bin"\nsleep 30\n')
    portal.add_task(5, image="filler:1", max_output_bytes=1_000_000)

    outcome = run(5, config, client)

    assert outcome is not None
    assert outcome["status"] == "over_cap"
    assert "over the cap of 1000000 bytes" in outcome["reason"]
    assert portal.finishes[0].archive is None


def test_it_sends_no_archive_when_an_exited_agent_left_too_much(portal, config, client, add_agent) -> None:
    add_agent("burst", 'head -c 2000000 /dev/zero > "$LOGS_DIR/huge.log"\n')
    portal.add_task(6, image="burst:1", max_output_bytes=1_000_000)

    outcome = run(6, config, client)

    assert outcome is not None
    assert outcome["status"] == "over_cap"
    assert "1000000 bytes" in outcome["reason"]
    assert portal.finishes[0].archive is None


def test_it_counts_what_an_agent_writes_in_its_home_against_the_cap(portal, config, client, add_agent) -> None:
    add_agent("hoarder", 'head -c 2000000 /dev/zero > "$HOME/cache.bin"\nsleep 30\n')
    portal.add_task(7, image="hoarder:1", max_output_bytes=1_000_000)

    outcome = run(7, config, client)

    assert outcome is not None and outcome["status"] == "over_cap"


def wait_for(condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_it_kills_a_task_cancelled_on_the_portal(portal, config, client, add_agent) -> None:
    add_agent("sleeper", "echo waiting\nsleep 30\n")
    portal.add_task(8, image="sleeper:1")
    registry = Registry()
    outcomes: list = []
    thread = threading.Thread(target=lambda: outcomes.append(run(8, config, client, registry=registry)))
    thread.start()
    wait_for(lambda: any("waiting" in task["output_tail"] for task in registry.running()))

    assert registry.cancel(8, 1)
    thread.join(timeout=20)

    [outcome] = outcomes
    assert outcome["status"] == "cancelled"
    assert registry.running() == []


def test_an_agent_that_ends_between_heartbeats_still_reports_its_output_tail(portal, config, client, add_agent) -> None:
    """An agent that exits 1 in its first second never shows in a heartbeat: the finish carries its tail."""
    add_agent("quitter", 'echo "no sample_submission.csv in $DATA_DIR"; exit 1\n')
    portal.add_task(13, image="quitter:1")

    outcome = run(13, config, client)

    assert outcome is not None and (outcome["status"], outcome["exit_code"]) == ("exited", 1)
    assert "no sample_submission.csv in " in outcome["output_tail"]
    assert portal.finishes[0].outcome["output_tail"] == outcome["output_tail"]


def test_it_reports_a_backend_start_error_as_failed(portal, config, client) -> None:
    portal.add_task(9, image="no-such-agent:1")

    outcome = run(9, config, client)

    assert outcome is not None
    assert outcome["status"] == "failed"
    assert "image 'no-such-agent:1'" in outcome["reason"]  # the team's image, never the operator's folders
    assert str(config.agents_dir) not in outcome["reason"] and "RUNNER_" not in outcome["reason"]
    assert portal.finishes[0].outcome == outcome


def test_it_skips_a_message_whose_capability_the_portal_refuses(portal, config, client) -> None:
    portal.add_task(12)

    assert run_task(12, 1, capability="forged", config=config, client=client, backend=ProcessBackend(
        agents_dir=config.agents_dir), registry=Registry()) is None  # fmt: skip
    assert portal.claim_capabilities == ["forged"]
    assert portal.finishes == [] and portal.downloads == []


def test_it_skips_a_task_that_is_not_queued_any_more(portal, config, client) -> None:
    portal.add_task(10)
    portal.refusals[10] = [(409, "not_queued")]

    assert run(10, config, client) is None
    assert portal.finishes == []
    assert portal.downloads == []


def test_it_raises_does_not_fit_when_the_worker_is_too_small_now(portal, config, client) -> None:
    portal.add_task(11)
    portal.refusals[11] = [(409, "does_not_fit")]

    with pytest.raises(DoesNotFit):
        run(11, config, client)
    assert portal.finishes == []


def test_it_fetches_the_public_data_once_per_sha256_even_for_concurrent_tasks(
    portal, config, client, add_agent
) -> None:
    add_agent("quick", "true\n")
    for task_id in (12, 13, 14):
        portal.add_task(task_id, image="quick:1")
    threads = [threading.Thread(target=run, args=(task_id, config, client)) for task_id in (12, 13)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    run(14, config, client)

    assert [finish.outcome["status"] for finish in portal.finishes] == ["exited"] * 3
    assert portal.downloads == ["demo-comp"]
    assert [path.name for path in (config.work_dir / "data").iterdir()] == [
        f"demo-comp-{portal.specs[12]['public_data']['sha256'][:12]}"
    ]


def test_it_fails_a_task_whose_public_data_does_not_match_its_sha256(portal, config, client) -> None:
    portal.add_task(15)
    portal.public_data["demo-comp"] = public_tar({"sample_submission.csv": b"id,other\n"})

    outcome = run(15, config, client)

    assert outcome is not None and outcome["status"] == "failed"
    assert "sha256" in outcome["reason"]
    assert not (config.work_dir / "data").exists() or list((config.work_dir / "data").iterdir()) == []


def tar_with(member: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return buffer.getvalue()


def symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def hardlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.LNKTYPE, target
    return info


def plain(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


@pytest.mark.parametrize(
    "member",
    [
        symlink("train.csv", "/etc/passwd"),
        hardlink("train.csv", "/etc/passwd"),
        plain("../escape.csv"),
        plain("/tmp/absolute.csv"),
        plain("a/../../escape.csv"),
    ],
    ids=["symlink", "hardlink", "dot-dot", "absolute", "nested-dot-dot"],
)
def test_it_refuses_public_data_with_a_link_or_a_path_outside_its_folder(tmp_path: Path, member) -> None:
    archive = tmp_path / "public.tar.gz"
    archive.write_bytes(tar_with(member, b"x"))

    with pytest.raises(UnsafeArchive):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.csv").exists()


def test_it_fails_a_task_whose_public_data_holds_a_link(portal, config, client) -> None:
    portal.add_task(16)
    data = tar_with(symlink("train.csv", "/etc/passwd"))
    portal.public_data["demo-comp"] = data
    import hashlib

    portal.specs[16]["public_data"]["sha256"] = hashlib.sha256(data).hexdigest()

    outcome = run(16, config, client)

    assert outcome is not None and outcome["status"] == "failed"
    assert "link" in outcome["reason"]


def test_it_unwraps_a_public_data_archive_made_of_one_public_folder(portal, config, client, add_agent) -> None:
    add_agent("reader", 'cp "$DATA_DIR/sample_submission.csv" "$SUBMISSION_DIR/submission.csv"\n')
    portal.add_task(17, image="reader:1", files={"public/sample_submission.csv": SAMPLE})

    run(17, config, client)

    assert archive_files(portal.finishes[0].archive or b"")["submission/submission.csv"] == SAMPLE


SECRET = "sk-live-0123456789abcdef"


def test_it_blanks_secret_values_in_everything_it_sends(portal, config, client, add_agent) -> None:
    add_agent(
        "leaky",
        'echo "key=$OPENAI_API_KEY"\n'
        'echo "id,target" > "$SUBMISSION_DIR/submission.csv"\n'
        'echo "1,$OPENAI_API_KEY" >> "$SUBMISSION_DIR/submission.csv"\n'
        'echo "logged $OPENAI_API_KEY" > "$LOGS_DIR/debug.txt"\n'
        'printf "KEY = \\"%s\\"\\n" "$OPENAI_API_KEY" > "$CODE_DIR/train.py"\n'
        'printf "\\0\\1%s\\2" "$OPENAI_API_KEY" > "$CODE_DIR/model.bin"\n'
        'echo "visible=$AGENT_PLAIN"\n'
        'printf "%s" "$OPENAI_API_KEY" | base64 > "$LOGS_DIR/encoded.txt"\n'
        'printf "%s" "$OPENAI_API_KEY" | rev >> "$LOGS_DIR/encoded.txt"\n',
    )
    portal.add_task(
        18,
        image="leaky:1",
        env={"OPENAI_API_KEY": SECRET, "AGENT_PLAIN": "not-a-secret"},
        secret_names=["OPENAI_API_KEY"],
    )

    outcome = run(18, config, client)

    assert outcome is not None and outcome["status"] == "exited"
    files = archive_files(portal.finishes[0].archive or b"")
    for name in ("run.log", "submission/submission.csv", "logs/debug.txt", "code/train.py", "code/model.bin"):
        assert SECRET.encode() not in files[name], name
        assert b"[secret OPENAI_API_KEY]" in files[name], name
    assert b"visible=not-a-secret" in files["run.log"]
    # Its cheap disguises too: base64 and reversed.
    encoded = files["logs/encoded.txt"]
    assert base64.b64encode(SECRET.encode()) not in encoded and SECRET[::-1].encode() not in encoded
    assert encoded.count(b"[secret OPENAI_API_KEY]") == 2


def test_it_blanks_secret_values_in_the_output_tails_it_reports(portal, config, client, add_agent) -> None:
    add_agent("leaky", 'for i in $(seq 300); do echo "line $i key=$OPENAI_API_KEY"; done\nsleep 30\n')
    portal.add_task(19, image="leaky:1", env={"OPENAI_API_KEY": SECRET}, secret_names=["OPENAI_API_KEY"])
    registry = Registry()
    thread = threading.Thread(target=run, args=(19, config, client), kwargs={"registry": registry})
    thread.start()
    wait_for(lambda: any("line 300" in task["output_tail"] for task in registry.running()))

    [task] = registry.running()
    registry.cancel(19, 1)
    thread.join(timeout=20)

    assert "[secret OPENAI_API_KEY]" in task["output_tail"]
    # Not even a piece of it where the tail's window cut the secret in two.
    for size in range(6, len(SECRET) + 1):
        assert SECRET[-size:] not in task["output_tail"]
    assert len(task["output_tail"].encode()) <= 4096


def test_the_agent_does_not_see_the_worker_token(portal, config, client, add_agent, monkeypatch) -> None:
    monkeypatch.setenv("PORTAL_WORKER_TOKEN", "the-worker-token")
    add_agent("snoop", 'env > "$LOGS_DIR/env.txt"\n')
    portal.add_task(20, image="snoop:1")

    run(20, config, client)

    env = archive_files(portal.finishes[0].archive or b"")["logs/env.txt"].decode()
    assert "the-worker-token" not in env
    assert "PORTAL_WORKER_TOKEN" not in env
    assert "COMPETITION_ID=demo-comp" in env
