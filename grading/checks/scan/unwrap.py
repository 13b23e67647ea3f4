"""What a file of a run comes wrapped in, taken off so that the scanner reads the text inside.

A hostile team can hide the lines the scan looks for: compressed (gzip, bz2, xz), archived (zip, tar, nested),
as UTF-16 or UTF-32, inside a Jupyter notebook's or a JSON file's strings, as base64, split across lines, in
a pickle. ``views`` turns one file into the text views the scanner reads, each a stream of bytes:

- ``text``: the file's own lines (NUL bytes dropped by the scanner), or a member's, decoded;
- ``strings``: a binary file's printable runs, as ``strings`` prints them (pickles, checkpoints, images).

Archives are read as streams under ``Limits`` against bombs: decoded bytes (past ``max_bytes`` and
``max_ratio`` times the file's own size), nesting depth and member count. A file that claims an archive
format and cannot be read, or passes a limit, raises ``Unreadable``: the scanner lists it, and the
unscanned_evidence check holds the entry. Framework-free, standard library only.
"""

from __future__ import annotations

import binascii
import bz2
import codecs
import gzip
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

from grading.checks.scan.structured import json_text, notebook_text

HEAD = 8192
READ = 1 << 20
STRINGS_MIN = 6  # a printable run this long or longer is kept from a binary file, as ``strings`` does
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".tar.gz", ".gz", ".bz2", ".tbz2", ".xz", ".txz")
BINARY_SUFFIXES = frozenset(
    ".pt .pth .ckpt .bin .pkl .pickle .joblib .npy .npz .h5 .hdf5 .onnx .parquet .feather .arrow .safetensors "
    ".png .jpg .jpeg .gif .bmp .tif .tiff .zst .7z .whl .so .o .pyc .mat .dcm .wav .mp3 .mp4 .avi .pdf".split()
)
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_PRINTABLE_RUN = re.compile(rb"[\x20-\x7e\t]{%d,}" % STRINGS_MIN)
# A run of 32 base64 characters or more, continued on the lines after it that are wholly base64 (as ``base64``
# and MIME wrap it, at 76 characters).
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{32,}(?:\r?\n[A-Za-z0-9+/]+(?==*\r?$))*={0,2}", re.M)
_SPACE = re.compile(rb"\s+")
_CONTROL = bytes(range(0, 9)) + bytes(range(14, 27)) + bytes(range(28, 32))


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds on what one file of a run may unwrap to (against archive bombs)."""

    max_bytes: int = 2 * 1024**3  # decoded from one file, every member together ...
    max_ratio: int = 200  # ... and this many times the file's size: both passed is a bomb
    max_depth: int = 4  # archives inside archives
    max_members: int = 10_000  # members of one file's archives together
    max_structured: int = 64 * 1024**2  # a notebook or JSON file parsed whole up to this size, larger read as text
    max_in_memory: int = 256 * 1024**2  # a zip inside another archive, read whole to be opened


DEFAULT_LIMITS = Limits()


class Unreadable(Exception):
    """A file (or a member: ``where``) the scanner could not decode, and why."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why}")
        self.where, self.why = where, why


@dataclass(frozen=True)
class View:
    label: str  # the file's label, "!member" for each archive level down
    stream: Readable
    kind: str  # "text" or "strings"


class _Tally:
    """Decoded bytes and members of one file's archives, against the limits."""

    def __init__(self, *, label: str, size: int, limits: Limits):
        self.label, self.size, self.limits = label, size, limits
        self.decoded = 0
        self.members = 0

    def add_bytes(self, count: int, where: str) -> None:
        self.decoded += count
        limits = self.limits
        if self.decoded > limits.max_bytes and self.decoded > limits.max_ratio * max(self.size, 1):
            raise Unreadable(where, f"it unpacks to more than {limits.max_bytes} bytes ({limits.max_ratio}x its size)")

    def add_member(self, where: str) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise Unreadable(where, f"its archives hold more than {self.limits.max_members} members")


class _Counted(io.RawIOBase):
    """A decompressing stream whose output counts against the tally; decoding errors become Unreadable."""

    def __init__(self, inner: Readable, *, tally: _Tally, where: str):
        self.inner, self.tally, self.where = inner, tally, where

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1, /) -> bytes:
        try:
            data = self.inner.read(size)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError, ValueError) as e:
            raise Unreadable(self.where, f"it is damaged or truncated ({e or type(e).__name__})") from e
        self.tally.add_bytes(len(data), self.where)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Peeked:
    """A stream whose first bytes were read to sniff it, read again from the start."""

    def __init__(self, stream: Readable, head: bytes):
        self.stream, self.head = stream, head

    def read(self, size: int = -1, /) -> bytes:
        if self.head:
            if size < 0 or size >= len(self.head):
                head, self.head = self.head, b""
                rest = self.stream.read(-1 if size < 0 else size - len(head))
                return head + rest
            head, self.head = self.head[:size], self.head[size:]
            return head
        return self.stream.read(size)


class _Encoded:
    """Text in UTF-16 or UTF-32, read back as UTF-8."""

    def __init__(self, stream: Readable, encoding: str):
        self.decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self.stream = stream
        self.done = False

    def read(self, size: int = -1, /) -> bytes:
        out = b""
        while not out and not self.done:
            data = self.stream.read(READ if size < 0 else max(size, 4))
            self.done = not data
            out = self.decoder.decode(data, final=self.done).lstrip("\ufeff").encode("utf-8", errors="replace")
        return out


def sniff(head: bytes, name: str) -> str:
    """What a file is from its first bytes and name: an archive format, an encoding, or text/binary/json."""
    lower = name.lower()
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and lower.endswith((".bz2", ".tbz2")) or head.startswith(b"BZh91AY&SY"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    for bom, encoding in BOMS:
        if head.startswith(bom):
            return encoding
    interleaved = _nul_interleaved(head)
    if interleaved:
        return interleaved
    stripped = head.lstrip()
    if lower.endswith(".ipynb") and stripped.startswith(b"{"):
        return "notebook"
    if lower.endswith((".json", ".jsonl")) and stripped[:1] in (b"{", b"["):
        return "json"
    if any(lower.endswith(suffix) for suffix in BINARY_SUFFIXES) or _looks_binary(head):
        return "binary"
    return "text"


def _nul_interleaved(head: bytes) -> str:
    """UTF-16 or UTF-32 without a byte order mark: ASCII text with NUL bytes in fixed places."""
    sample = head[: len(head) - len(head) % 4]
    if len(sample) < 16:
        return ""
    quarter = len(sample) // 4
    nul = [sample[i::4].count(0) / quarter for i in range(4)]
    if min(nul[1], nul[2], nul[3]) > 0.9 and nul[0] < 0.1:
        return "utf-32-le"
    if min(nul[0], nul[1], nul[2]) > 0.9 and nul[3] < 0.1:
        return "utf-32-be"
    odd, even = (nul[1] + nul[3]) / 2, (nul[0] + nul[2]) / 2
    if odd > 0.8 and even < 0.1:
        return "utf-16-le"
    if even > 0.8 and odd < 0.1:
        return "utf-16-be"
    return ""


def _looks_binary(head: bytes) -> bool:
    """Binary when many bytes are controls; a stray NUL (a log with a NUL written into it) is still text."""
    if not head:
        return False
    control = sum(head.count(byte) for byte in _CONTROL)
    return control / len(head) > 0.1


def printable_strings(data: bytes) -> bytes:
    """The printable runs of binary ``data``, one a line (what ``strings`` prints)."""
    found = _PRINTABLE_RUN.findall(data)
    return b"\n".join(found) + b"\n" if found else b""


def base64_texts(data: bytes) -> list[bytes]:
    """The long base64 runs of ``data``, decoded (what is text or binary is for the caller to tell)."""
    found = []
    for match in _BASE64_RUN.finditer(data):
        run = _SPACE.sub(b"", match.group())
        body = run.rstrip(b"=")
        body = body[: len(body) - len(body) % 4] if not run.endswith(b"=") else run
        try:
            found.append(binascii.a2b_base64(body))
        except (binascii.Error, ValueError):
            continue
    return found


def mostly_text(data: bytes) -> bool:
    return bool(data) and not _looks_binary(data[:HEAD]) and data[:HEAD].count(0) == 0


def views(
    label: str,
    stream: Readable,
    *,
    name: str,
    size: int,
    limits: Limits = DEFAULT_LIMITS,
    seekable: IO[bytes] | None = None,
    depth: int = 0,
    tally: _Tally | None = None,
) -> Iterator[View]:
    """The text views of one file (``stream``, named ``name``, ``size`` bytes on disk), in reading order.

    ``seekable``: the same file opened for seeking (a zip's directory is at its end); without it a zip is read
    into memory within the limits. Raises Unreadable when the file claims a format it does not hold or passes
    a limit; the views yielded before stay scanned."""
    tally = tally or _Tally(label=label, size=size, limits=limits)
    if depth > limits.max_depth:
        raise Unreadable(label, f"archives nested more than {limits.max_depth} deep")
    head = stream.read(HEAD)
    kind = sniff(head, name)
    whole = _Peeked(stream, head)
    if kind in ("gzip", "bz2", "xz"):
        decompressed: Readable
        if kind == "gzip":
            decompressed = gzip.GzipFile(fileobj=whole)  # type: ignore[call-overload]
        else:
            decompressed = (bz2.BZ2File if kind == "bz2" else lzma.LZMAFile)(whole)  # type: ignore[call-overload, arg-type]
        inner = _Counted(decompressed, tally=tally, where=label)
        yield from views(label, inner, name=_unsuffixed(name), size=size, limits=limits, depth=depth + 1, tally=tally)
    elif kind == "tar":
        yield from _tar_views(label, whole, size=size, limits=limits, depth=depth, tally=tally)
    elif kind == "zip":
        zip_views = _zip_views(label, whole, name=name, size=size, limits=limits, seekable=seekable, depth=depth)
        yield from zip_views(tally)
    elif kind.startswith("utf-"):
        yield View(label, _Encoded(whole, kind), "text")
    elif kind in ("notebook", "json"):
        body = whole.read(limits.max_structured + 1)
        text = None
        if len(body) <= limits.max_structured:
            text = notebook_text(body) if kind == "notebook" else json_text(body)
        if text is None:  # not valid JSON after all (or too large): read as it is
            yield View(label, _Peeked(whole, body), "text")
        else:
            yield View(label, io.BytesIO(text), "text")
    elif kind == "binary":
        yield View(label, whole, "strings")
    else:
        yield View(label, whole, "text")


def _unsuffixed(name: str) -> str:
    lower = name.lower()
    for suffix, replacement in ((".tgz", ".tar"), (".tbz2", ".tar"), (".txz", ".tar")):
        if lower.endswith(suffix):
            return name[: -len(suffix)] + replacement
    for suffix in (".gz", ".bz2", ".xz"):
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _tar_views(label: str, stream: Readable, *, size: int, limits: Limits, depth: int, tally: _Tally) -> Iterator[View]:
    try:
        archive = tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload]
        for member in archive:
            where = f"{label}!{member.name}"
            tally.add_member(where)
            if not member.isfile():
                continue
            data = archive.extractfile(member)
            if data is None:
                continue
            counted = _Counted(data, tally=tally, where=where)
            yield from views(where, counted, name=member.name, size=size, limits=limits, depth=depth + 1, tally=tally)
    except tarfile.TarError as exc:
        raise Unreadable(label, f"the tar archive is damaged or truncated ({exc})") from exc


def _zip_views(
    label: str,
    stream: Readable,
    *,
    name: str,
    size: int,
    limits: Limits,
    seekable: IO[bytes] | None,
    depth: int,
) -> Callable[[_Tally], Iterator[View]]:
    """The zip's views, or (a file that only starts like a zip, e.g. a checkpoint) its printable strings."""

    def read(tally: _Tally) -> Iterator[View]:
        if seekable is not None and depth == 0:
            seekable.seek(0)
            source: IO[bytes] = seekable
        else:
            body = stream.read(limits.max_in_memory + 1)  # a zip's directory is at its end: read it whole
            if len(body) > limits.max_in_memory:
                raise Unreadable(label, f"a zip inside an archive larger than {limits.max_in_memory} bytes")
            source = io.BytesIO(body)
        try:
            archive = zipfile.ZipFile(source)
            members = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            if name.lower().endswith(".zip"):
                raise Unreadable(label, f"the zip archive is damaged or truncated ({exc})") from exc
            source.seek(0)
            yield View(label, source, "strings")
            return
        for info in members:
            where = f"{label}!{info.filename}"
            tally.add_member(where)
            if info.is_dir():
                continue
            try:
                member = archive.open(info)
            except (RuntimeError, NotImplementedError, zipfile.BadZipFile) as exc:  # encrypted, unknown method
                raise Unreadable(where, f"the member cannot be opened ({exc})") from exc
            counted = _Counted(member, tally=tally, where=where)
            yield from views(where, counted, name=info.filename, size=size, limits=limits, depth=depth + 1, tally=tally)

    return read
