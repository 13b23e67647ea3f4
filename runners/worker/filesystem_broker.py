"""kombu's filesystem transport with atomic writes and claims: the one-machine broker (no server to run).

kombu's own transport creates a message file and writes it afterwards, so a consumer listing the folder in
between moves an empty file and fails on it (`JSONDecodeError` in `_get`, which Celery treats as an
unrecoverable error: the worker dies), and it rewrites exchange tables in place while others read them. Here:

* a message is written under a hidden name in the queue folder and renamed to its final name once complete,
  so a consumer only ever sees whole messages;
* a consumer claims a message by renaming it to a hidden name of its own: of two consumers that saw the
  same file, one rename succeeds and the other gets FileNotFoundError and moves on, so a message is
  delivered once;
* an exchange table is replaced whole (written aside, then renamed), its read-modify-write serialised by a
  lock file beside it;
* a file that still cannot be read as a message (kombu's own writer, used by another program) is put back
  while young and set aside with a warning after that, never raised: one bad file must not stop the worker.

Framework-free: the portal (portal/settings.py) and the GPU worker (runners/worker/config.py) both name it
as their broker transport when no Redis is configured. The portal's watchdogs still re-send what a consumer
killed between its claim and its ack took along.
"""

import fcntl
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem, virtual
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

# Names starting with a dot are never a queue's ("<time>_<uuid>.<queue>.msg"): writes in progress, claims.
_WRITING, _CLAIMED, _BAD = ".writing-", ".claimed-", ".unreadable-"
# A file that is not a whole message yet this young is left for its writer to finish.
PARTIAL_WRITE_SECONDS = 10.0


def _write_whole(path: Path | str, data: bytes) -> None:
    """path holds data or what it held before, never a part: written aside in the same folder, then renamed."""
    path = Path(path)
    aside = path.with_name(f"{_WRITING}{uuid.uuid4().hex}")
    try:
        with open(aside, "wb") as f:
            f.write(data)
        os.replace(aside, path)
    except BaseException:
        aside.unlink(missing_ok=True)
        raise


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path.with_name(path.name + ".lock"), "a") as lock_file:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)


class Channel(filesystem.Channel):
    def get_table(self, exchange: str) -> list[Any]:
        try:
            text = self._exchange_file(exchange).read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot open {self._exchange_file(exchange)}") from exc
        return [filesystem.exchange_queue_t(*q) for q in loads(bytes_to_str(text))]

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str, queue: str) -> None:
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(parents=True, exist_ok=True)
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with _locked(file):
            queues = self.get_table(exchange)
            if binding not in queues:
                _write_whole(file, str_to_bytes(dumps([binding, *queues])))

    def _delete(self, queue: str, exchange: str, routing_key: str, pattern: str, *args: Any, **kwargs: Any) -> None:
        virtual.Channel._delete(self, queue, exchange, routing_key, pattern, *args, **kwargs)
        file = self._exchange_file(exchange)
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with _locked(file):
            queues = self.get_table(exchange)
            if binding in queues:
                _write_whole(file, str_to_bytes(dumps([q for q in queues if q != binding])))

    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        try:
            _write_whole(Path(self.data_folder_out) / name, str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to {self.data_folder_out!r}") from exc

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        wanted = f"{queue}.msg"
        folder = Path(self.data_folder_in)
        for name in sorted(os.listdir(folder)):
            if name.startswith(".") or name.partition(".")[2] != wanted:
                continue
            claimed = folder / f"{_CLAIMED}{uuid.uuid4().hex}-{name}"
            try:
                os.rename(folder / name, claimed)
            except FileNotFoundError:
                continue  # another consumer took it
            try:
                payload = claimed.read_bytes()
            except OSError as exc:
                raise ChannelError(f"Cannot read file {str(claimed)!r} from queue.") from exc
            try:
                message = loads(bytes_to_str(payload))
            except ValueError:
                self._not_a_message(claimed, folder / name, len(payload))
                continue
            if self.store_processed:
                shutil.move(claimed, Path(self.processed_folder) / name)
            else:
                claimed.unlink()
            return message
        raise Empty()

    @staticmethod
    def _not_a_message(claimed: Path, original: Path, size: int) -> None:
        """A young file goes back (kombu's own writer, in another program, may still be writing it: it writes
        into the file whatever its name); an older one is set aside for a person to read."""
        try:
            young = time.time() - claimed.stat().st_mtime < PARTIAL_WRITE_SECONDS
        except FileNotFoundError:
            return
        if young:
            os.rename(claimed, original)
            return
        bad = original.with_name(f"{_BAD}{original.name}")
        os.replace(claimed, bad)
        log.warning("broker: %s is not a whole message (%d bytes); set aside as %s", original.name, size, bad)

    def _size(self, queue: str) -> int:
        wanted = f"{queue}.msg"
        return sum(1 for name in os.listdir(self.data_folder_in) if name.partition(".")[2] == wanted)

    def _purge(self, queue: str) -> int:
        wanted, count = f"{queue}.msg", 0
        for name in os.listdir(self.data_folder_in):
            if name.partition(".")[2] == wanted:
                try:
                    os.remove(os.path.join(self.data_folder_in, name))
                    count += 1
                except FileNotFoundError:
                    pass
        return count


class Transport(filesystem.Transport):
    Channel = Channel
    # How long a consumer with a free slot waits before it looks at the folder again (a listing of one folder).
    # kombu's default, 1 s, capped grading at two runs a second on two pool processes: a run takes a few
    # hundredths of a second, and its slot then sat idle for the rest of the second.
    polling_interval = 0.1
    # How long it waits while every consumer is at its prefetch limit (all its pool processes busy): such a
    # wait lists no folder, it only looks at a count again, so it can be short; a slot that frees takes its
    # next message within a hundredth of a second instead of up to polling_interval later (225 runs on two
    # processes sat ~0.05 s each between runs: a tenth of the grading phase).
    busy_polling_interval = 0.01

    def drain_events(self, connection: Any, timeout: Any = None, **kwargs: Any) -> Any:
        """kombu's loop (one message delivered, or socket.timeout after timeout), waiting _interval() between
        empty looks instead of always polling_interval."""
        cycle: Any = self.cycle  # kombu's stubs leave it None until the first channel opens
        start = time.monotonic()
        while True:
            try:
                cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                if timeout is not None and time.monotonic() - start >= timeout:
                    raise TimeoutError() from None  # what kombu raises (socket.timeout)
                interval = self._interval()
                if interval is not None:
                    time.sleep(min(interval, timeout) if timeout else interval)

    def _interval(self) -> float | None:
        """busy_polling_interval while every consuming channel is at its prefetch limit, else polling_interval."""
        channels: list[Any] = list(self.channels or ())
        consuming = [channel for channel in channels if channel._consumers]
        if self.polling_interval is not None and consuming and not any(c.qos.can_consume() for c in consuming):
            return min(self.busy_polling_interval, self.polling_interval)
        return self.polling_interval
