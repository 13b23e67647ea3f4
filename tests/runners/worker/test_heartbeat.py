"""The heartbeat thread against the stand-in portal (portal_stand_in.py stands in for the portal's worker API,
whose own tests live elsewhere): register, beats with the running tasks, cancels, and a portal that is down."""

import time
from collections.abc import Callable

from runners.worker.client import PortalClient
from runners.worker.execute import Registry
from runners.worker.heartbeat import Heartbeat


def wait_for(condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


class Output:
    """A handle's output_tail, the only part of a handle the heartbeat reads."""

    def __init__(self, text: str) -> None:
        self.text = text

    def output_tail(self, max_bytes: int = 4096) -> str:
        return self.text[-max_bytes:]


def test_it_registers_its_capacity_then_beats_with_the_running_tasks(portal, client, config) -> None:
    registry = Registry()
    task = registry.add(4, 2, {"TOKEN": "s3cr3t-value"})
    task.handle = Output("epoch 1 with s3cr3t-value\n")  # type: ignore[assignment]
    task.started = time.monotonic() - 12

    heartbeat = Heartbeat(client, config, registry=registry).start()
    try:
        wait_for(lambda: len(portal.heartbeats) >= 2)
    finally:
        heartbeat.stop()

    (sent,) = portal.registers
    assert {key: value for key, value in sent.items() if key != "measured"} == config.capacity()
    assert sent["measured"]["cpus"] >= 1 and "gpu_source" in sent["measured"]  # what it measured of itself
    assert heartbeat.interval == 0.2
    [running] = portal.heartbeats[0]["running"]
    assert (running["task_id"], running["attempt"]) == (4, 2)
    assert 12 <= running["elapsed_seconds"] < 30
    assert running["output_tail"] == "epoch 1 with [secret TOKEN]\n"


def test_it_cancels_the_tasks_the_portal_lists(portal, client, config) -> None:
    registry = Registry()
    task = registry.add(4, 2, {})
    other = registry.add(5, 1, {})
    portal.cancels = [{"task_id": 4, "attempt": 2}, {"task_id": 99, "attempt": 1}]
    heartbeat = Heartbeat(client, config, registry=registry)

    assert heartbeat.beat() == [{"task_id": 4, "attempt": 2}, {"task_id": 99, "attempt": 1}]
    assert task.cancel.is_set()
    assert not other.cancel.is_set()


def test_it_keeps_beating_after_the_portal_was_down(portal, config) -> None:
    client = PortalClient(portal.url, config.token, tries=1)
    portal.fail_next = 4  # the first register and the next beats fail
    heartbeat = Heartbeat(client, config, registry=Registry())
    heartbeat.interval = 0.05

    heartbeat.start()
    try:
        wait_for(lambda: len(portal.heartbeats) >= 2)
    finally:
        heartbeat.stop()
    assert len(portal.registers) == 1


def test_it_registers_again_when_the_portal_forgot_it(portal, client, config) -> None:
    heartbeat = Heartbeat(client, config, registry=Registry())
    assert heartbeat.register()
    other = PortalClient(portal.url, "revoked", tries=1)
    heartbeat.client = other

    assert heartbeat.beat() == []
    assert not heartbeat.registered


def test_an_unreachable_portal_never_raises_out_of_a_beat(config) -> None:
    client = PortalClient("http://127.0.0.1:9", config.token, timeout=(0.5, 0.5), tries=1)
    heartbeat = Heartbeat(client, config, registry=Registry())

    assert not heartbeat.register()
    assert heartbeat.beat() == []
