"""The one-machine broker (runners/worker/filesystem_broker.py): whole messages only, each delivered once,
under producers and consumers racing in separate processes on one folder, as the two workers and the web
server do."""

import logging
import multiprocessing
import os
import time
from pathlib import Path

import pytest
from kombu import Connection

from runners.worker.config import FILESYSTEM_TRANSPORT, broker_settings

# kombu keeps bindings per process, not per folder: each test gets queues of its own names.
QUEUE = f"soak-{os.getpid()}"


def _connection(folder: Path) -> Connection:
    options = broker_settings({"RUNNER_BROKER_DIR": str(folder)})["broker_transport_options"]
    return Connection("filesystem://", transport=FILESYSTEM_TRANSPORT, transport_options=options)


def _produce(folder: str, start: int, count: int) -> None:
    with _connection(Path(folder)) as conn:
        queue = conn.SimpleQueue(QUEUE)
        for number in range(start, start + count):
            queue.put({"n": number, "pad": "x" * (number % 5000)})


def _consume(folder: str, expected: int, out: "multiprocessing.Queue[object]") -> None:
    got: list[int] = []
    with _connection(Path(folder)) as conn:
        queue = conn.SimpleQueue(QUEUE)
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 3:
            try:
                message = queue.get(block=True, timeout=0.05)
            except queue.Empty:
                continue
            except Exception as exc:  # noqa: BLE001 - the parent asserts there were none
                out.put(f"{type(exc).__name__}: {exc}")
                return
            got.append(message.payload["n"])
            message.ack()
            idle_since = time.monotonic()
    out.put(got)


def test_racing_producers_and_consumers_get_every_message_exactly_once(tmp_path: Path) -> None:
    producers, per_producer, consumers = 3, 400, 4
    context = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[object] = context.Queue()
    readers = [context.Process(target=_consume, args=(str(tmp_path), 0, out)) for _ in range(consumers)]
    writers = [
        context.Process(target=_produce, args=(str(tmp_path), index * per_producer, per_producer))
        for index in range(producers)
    ]
    for process in readers + writers:
        process.start()
    results = [out.get(timeout=120) for _ in readers]
    for process in readers + writers:
        process.join(timeout=30)

    errors = [r for r in results if isinstance(r, str)]
    assert errors == []
    delivered = sorted(n for r in results if isinstance(r, list) for n in r)
    assert delivered == list(range(producers * per_producer))  # none lost, none twice
    assert sum(1 for r in results if r) >= 2  # the consumers did race for them
    assert [name for name in os.listdir(tmp_path / "queue") if not name.endswith(".lock")] == []


def test_a_file_still_being_written_by_kombus_own_writer_is_left_for_it_then_delivered(tmp_path: Path) -> None:
    with _connection(tmp_path) as conn:
        queue = conn.SimpleQueue(f"{QUEUE}-partial")
        queue.put({"n": 1})
        [name] = os.listdir(tmp_path / "queue")
        whole = (tmp_path / "queue" / name).read_bytes()
        # What kombu's transport does: create the file, then write it; a reader in between sees it empty.
        partial = tmp_path / "queue" / name
        partial.write_bytes(b"")

        with pytest.raises(queue.Empty):
            queue.get(block=False)
        assert partial.exists()  # put back for its writer, not lost and not raised
        partial.write_bytes(whole)
        assert queue.get(block=False).payload == {"n": 1}


def test_an_old_file_that_is_no_message_is_set_aside_with_a_warning_not_raised(tmp_path: Path, caplog) -> None:
    with _connection(tmp_path) as conn:
        queue = conn.SimpleQueue(f"{QUEUE}-old")
        queue.put({"n": 1})
        [name] = os.listdir(tmp_path / "queue")
        broken = tmp_path / "queue" / f"0_{name.split('_', 1)[1]}"  # sorted first
        broken.write_bytes(b'{"body": "trunc')
        os.utime(broken, (time.time() - 60, time.time() - 60))

        with caplog.at_level(logging.WARNING):
            assert queue.get(block=False).payload == {"n": 1}
    assert "is not a whole message (15 bytes)" in caplog.text
    assert (tmp_path / "queue" / f".unreadable-{broken.name}").exists()


def test_exchange_tables_are_replaced_whole_while_read(tmp_path: Path) -> None:
    with _connection(tmp_path) as conn:
        channel = conn.default_channel
        for index in range(50):
            channel._queue_bind("fan", "", "", f"q{index}")
            assert len(channel.get_table("fan")) == index + 1
        channel._queue_bind("fan", "", "", "q0")  # twice: bound once
        assert len(channel.get_table("fan")) == 50


def test_a_consumer_at_its_prefetch_limit_looks_again_soon_and_an_idle_one_at_the_polling_interval(
    tmp_path: Path,
) -> None:
    """The short wait lists no folder (a full consumer takes nothing); once its slot frees, the next
    message comes within hundredths of a second, and every message still arrives once."""
    queue_name = f"{QUEUE}-busy"
    with _connection(tmp_path) as conn:
        transport = conn.transport
        assert transport._interval() == transport.polling_interval  # no consumer yet
        channel = conn.default_channel
        channel.basic_qos(prefetch_count=1)
        got: list = []
        consumer = conn.Consumer(conn.SimpleQueue(queue_name).queue, callbacks=[lambda body, m: got.append(m)])
        consumer.consume()
        producer = conn.SimpleQueue(queue_name)
        producer.put({"n": 1})
        producer.put({"n": 2})
        assert transport._interval() == transport.polling_interval  # a free slot: the folder is listed each time
        conn.drain_events(timeout=2)
        assert len(got) == 1
        assert transport._interval() == transport.busy_polling_interval  # full: only a count is looked at
        with pytest.raises(TimeoutError):
            conn.drain_events(timeout=0.2)  # full: the second message stays where it is
        got[0].ack()
        started = time.monotonic()
        conn.drain_events(timeout=2)
        assert sorted(m.payload["n"] for m in got) == [1, 2]
        assert time.monotonic() - started < transport.polling_interval
        got[1].ack()
