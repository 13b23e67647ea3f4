"""PortalClient against the stand-in portal: a real HTTP server in a thread that answers as the portal's worker
API does (see portal_stand_in.py); the portal's own implementation of that API is tested elsewhere."""

import io
import json
import socket
import tarfile
from pathlib import Path

import pytest

from runners.worker.client import PortalClient, PortalRefused, PortalUnavailable
from tests.runners.worker.portal_stand_in import TOKEN, StandInServer, capability_of


def test_it_registers_and_beats_with_its_token(portal, client) -> None:
    assert client.register({"gpus": 1, "slots": 2}) == {"worker": "gpu-test", "heartbeat_seconds": 0.2}
    portal.cancels.append({"task_id": 3, "attempt": 1})

    assert client.heartbeat([{"task_id": 3, "attempt": 1}]) == {"cancel": [{"task_id": 3, "attempt": 1}]}
    assert portal.registers == [{"gpus": 1, "slots": 2}]
    assert portal.heartbeats == [{"running": [{"task_id": 3, "attempt": 1}]}]


def test_a_wrong_token_is_refused_with_the_portals_error_code(portal) -> None:
    wrong = PortalClient(portal.url, "not-the-token", tries=1)

    with pytest.raises(PortalRefused) as refused:
        wrong.register({})

    assert (refused.value.status, refused.value.code) == (401, "not_authenticated")
    assert refused.value.message == "worker token missing or wrong"


def test_a_409_claim_is_raised_at_once_with_its_code(portal, client) -> None:
    portal.add_task(5)
    portal.refusals[5] = [(409, "does_not_fit")]

    with pytest.raises(PortalRefused) as refused:
        client.claim(5, 1, capability_of(5))

    assert (refused.value.status, refused.value.code) == (409, "does_not_fit")
    assert portal.claims == [(5, 1)]
    assert client.claim(5, 1, capability_of(5))["task_id"] == 5
    assert portal.claim_capabilities == [capability_of(5)] * 2


def test_it_retries_a_5xx_answer_a_bounded_number_of_times(portal, client) -> None:
    portal.fail_next = 2
    assert client.register({})["worker"] == "gpu-test"

    portal.fail_next = 3
    with pytest.raises(PortalUnavailable, match="failed 3 times; last: HTTP 503"):
        client.register({})


def test_an_unreachable_portal_raises_portal_unavailable_after_its_tries() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
    client = PortalClient(f"http://127.0.0.1:{port}", TOKEN, timeout=(1, 1), tries=2, backoff_seconds=0.01)

    with pytest.raises(PortalUnavailable, match="failed 2 times; last: ConnectionError"):
        client.heartbeat([])


def test_it_downloads_the_public_data(portal, client, tmp_path: Path) -> None:
    spec = portal.add_task(6, files={"sample_submission.csv": b"id,target\n"})

    client.download(spec["public_data"]["url"], tmp_path / "public.tar.gz")

    with tarfile.open(tmp_path / "public.tar.gz") as tar:
        assert tar.getnames() == ["sample_submission.csv"]


def test_it_never_sends_its_token_to_another_host(portal, client, tmp_path: Path) -> None:
    with StandInServer() as elsewhere:
        spec = elsewhere.add_task(6)

        with pytest.raises(PortalRefused) as refused:
            client.download(spec["public_data"]["url"], tmp_path / "public.tar.gz")

    assert refused.value.status == 401  # the other host saw no token


def test_it_sends_a_csv_to_validate_with_its_attempt(portal, client) -> None:
    assert client.validate(7, 2, b"id,target\n1,0\n") == {"valid": True, "reason": None}
    assert portal.validations == [(7, "2", b"id,target\n1,0\n")]


def test_it_finishes_with_the_outcome_and_the_archive_as_multipart(portal, client, tmp_path: Path) -> None:
    archive = tmp_path / "task.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz"):
        pass
    archive.write_bytes(buffer.getvalue())
    outcome = {"attempt": 1, "status": "exited", "exit_code": 0, "reason": "ok", "elapsed_seconds": 1.5}

    client.finish(8, outcome, archive)
    client.finish(9, {**outcome, "status": "over_cap"}, None)

    first, second = portal.finishes
    assert (first.task_id, first.outcome, first.archive) == (8, outcome, buffer.getvalue())
    assert (second.task_id, second.outcome["status"], second.archive) == (9, "over_cap", None)
    assert json.dumps(second.outcome)


def test_a_retried_finish_sends_the_whole_archive_again(portal, client, tmp_path: Path) -> None:
    archive = tmp_path / "task.tar.gz"
    archive.write_bytes(b"\x1f\x8b" + b"x" * 100_000)
    portal.fail_next = 1

    client.finish(10, {"attempt": 1, "status": "exited"}, archive)

    assert portal.finishes[0].archive == archive.read_bytes()
