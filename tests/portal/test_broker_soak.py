"""The short version of benchmarks/broker_soak.py: the one-machine portal of scripts/run (both workers on the
filesystem broker) under a minute of mixed load, uploads, hosted runs, cancels and tasks that fit no worker
re-queued every 5 s, ends with no crash, each message delivered once and everything finished."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import broker_soak  # noqa: E402


@pytest.mark.worker
def test_a_minute_of_mixed_load_on_the_embedded_broker_ends_with_no_crash_and_nothing_lost() -> None:
    figures = broker_soak.soak(minutes=1)

    assert not broker_soak.failed(figures), figures
    assert figures["unrecoverable errors"] == figures["worker restarts"] == 0
    assert figures["re-deliveries"] == figures["lost"] == 0
    assert figures["not ended"] == [] and figures["load errors"] == []
    # The load did happen: graded uploads, agents that ran, and the re-queues that crashed kombu's transport.
    assert figures["uploads"] >= 4 and figures["graded runs"] >= figures["uploads"]
    assert figures["hosted tasks that ran"] >= 1
    assert figures["of them re-queues of tasks that fit no worker"] >= 40
