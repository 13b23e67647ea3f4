"""Byte counting between the archive file, the decompressor and tarfile.

The limits are judged on what actually comes out of the decompressor, never on the sizes that headers
declare: gzip's length field, zip's file_size and a tar header can all lie.
"""

from __future__ import annotations

import io
import os
from collections.abc import Buffer
from typing import BinaryIO

from grading.bundles.errors import BundleError
from grading.bundles.limits import KiB, Limits, MiB, human

CHUNK = MiB
# Between members tarfile reads headers: the 512-byte block, and a pax or GNU long-name header in one call.
# Real ones are a few hundred bytes (a name is at most 1 KiB here). A larger one is refused before it is
# read: it can only be an attack on memory, or on tarfile's pax parser, whose time grows with the square
# of a header's length on Python before 3.12.6 (CVE-2024-6232: 200,000 digits held a process 91 s).
MAX_HEADER_READ = 8 * KiB


class CountingFile:
    """The archive file, counting the compressed bytes read from it (the ratio's denominator)."""

    def __init__(self, raw: io.BufferedIOBase) -> None:
        self._raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        return data

    def readinto(self, buffer: Buffer) -> int:  # ISA-L's gzip reader fills its own buffer
        size = self._raw.readinto(buffer) or 0
        self.count += size
        return size

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET and offset < 0:
            # A damaged zip offset; EOFError is one of the "damaged archive" errors the caller reports.
            raise EOFError(f"an offset in the archive points before its start ({offset})")
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def seekable(self) -> bool:
        return True


class Budget:
    """Counts unpacked bytes as they leave the decompressor and enforces the total and ratio limits."""

    def __init__(self, *, limits: Limits, source: CountingFile) -> None:
        self.limits = limits
        self.source = source
        self.unpacked = 0

    def charge(self, size: int, *, where: str, member: str | None) -> None:
        """Count ``size`` more bytes. ``where`` says where for the message ("'runs/x.csv'", "the end of
        the archive"); ``member`` is the member's name for the details, when there is one."""
        self.unpacked += size
        limits = self.limits
        if self.unpacked > limits.max_total_bytes:
            raise BundleError(
                "bundle_too_large",
                f"the archive unpacks to more than {human(limits.max_total_bytes)} (reached at {where})",
                {"member": member, "limit": limits.max_total_bytes},
            )
        read = max(self.source.count, 1)
        if self.unpacked > limits.ratio_floor_bytes and self.unpacked > read * limits.max_ratio:
            raise BundleError(
                "compression_ratio_too_high",
                f"the archive expands more than {limits.max_ratio:g} times ({human(self.unpacked)} from "
                f"{human(read)}, reached at {where}); run files never compress that well, so it is "
                "refused as an archive bomb",
                {"member": member, "unpacked_bytes": self.unpacked, "compressed_bytes": read},
            )


class InflatedTar:
    """The decompressed tar stream as tarfile sees it: every read is charged to the budget, and a header
    read bigger than MAX_HEADER_READ (a giant pax header) or a data read bigger than a chunk is refused
    before it is made."""

    def __init__(self, *, stream: BinaryIO, budget: Budget) -> None:
        self._stream = stream
        self._budget = budget
        self.member: str | None = None  # the member whose data is being read, None between members
        self.where = "the start of the archive"

    def at_member(self, name: str) -> None:
        self.member, self.where = name, repr(name)

    def between(self, where: str) -> None:
        self.member, self.where = None, where

    def read(self, size: int = -1) -> bytes:
        largest = MAX_HEADER_READ if self.member is None else CHUNK
        if size is None or size < 0 or size > largest:
            raise BundleError(
                "corrupt_archive",
                f"a tar header of more than {human(MAX_HEADER_READ)} at {self.where}; real ones are a few "
                "hundred bytes (archive without extended attributes, e.g. tar --no-xattrs czf)",
                {"member": self.member, "where": self.where},
            )
        data = self._stream.read(size)
        self._budget.charge(len(data), where=self.where, member=self.member)
        return data

    def drain(self) -> None:
        """Read the rest of the stream (behind the end-of-archive marker), counting it like any other."""
        while data := self._stream.read(CHUNK):
            self._budget.charge(len(data), where=self.where, member=self.member)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        # tarfile only moves forward, over padding; the stream cannot go back (gzip would have to inflate
        # it all again), so moving forward is reading on, and those bytes count like any others.
        current = self._stream.tell()
        target = offset if whence == os.SEEK_SET else current + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR) or target < current:
            raise BundleError("corrupt_archive", f"the tar structure points backwards at {self.where}")
        while current < target:
            data = self._stream.read(min(CHUNK, target - current))
            if not data:
                break
            self._budget.charge(len(data), where=self.where, member=self.member)
            current += len(data)
        return current

    def tell(self) -> int:
        return self._stream.tell()
