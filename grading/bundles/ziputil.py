"""What zipfile does not check for us before extraction.

zipfile reads the whole central directory into memory when it opens an archive, so the entry count and
directory size are read from the end records first. It also decompresses bzip2 and lzma members with no
bound on the output of one call, so only stored and deflated members (what every zip tool writes by
default) are accepted.
"""

from __future__ import annotations

import stat
import struct
import zipfile
from typing import Final, Protocol

from grading.bundles.errors import BundleError

# A file_size big enough that zipfile never stops early: we stop on our own limits instead.
UNBOUNDED: Final = 1 << 62

# A real central-directory entry is 46 bytes plus a name and a few extra fields.
_DIRECTORY_BYTES_PER_ENTRY: Final = 1024

_END = b"PK\x05\x06"
_END64_LOCATOR = b"PK\x06\x07"
_END64 = b"PK\x06\x06"
_END_SIZE = 22
_MAX_COMMENT = 0xFFFF

# Bits of the general-purpose flag that zipfile cannot honour safely.
_ENCRYPTED = 0x1
_PATCHED = 0x20
_STRONG_ENCRYPTION = 0x40


class SeekableReader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...


def check_directory(*, source: SeekableReader, max_files: int) -> None:
    """Refuse a zip whose central directory is too big to load, before zipfile loads it."""
    entries, directory_bytes = _directory_size(source)
    if entries > max_files:
        raise BundleError(
            "too_many_files",
            f"the archive has {entries} entries; the limit is {max_files}",
            {"limit": max_files, "entries": entries},
        )
    if directory_bytes > (max_files + 1) * _DIRECTORY_BYTES_PER_ENTRY:
        raise BundleError(
            "too_many_files",
            f"the zip's directory is {directory_bytes} bytes, more than {max_files} files could need",
            {"limit": max_files},
        )


def _directory_size(source: SeekableReader) -> tuple[int, int]:
    size = source.seek(0, 2)
    tail_size = min(size, _END_SIZE + _MAX_COMMENT)
    source.seek(size - tail_size)
    tail = source.read(tail_size)
    at = tail.rfind(_END)
    if at < 0 or len(tail) - at < _END_SIZE:
        raise BundleError("corrupt_archive", "the zip has no end record: it is truncated or damaged")
    entries, directory_bytes = struct.unpack_from("<HI", tail, at + 10)
    if entries != 0xFFFF and directory_bytes != 0xFFFFFFFF:
        return entries, directory_bytes
    # Zip64: the real counts sit in a record that a locator just before the end record points to.
    locator_at = size - tail_size + at - 20
    source.seek(max(locator_at, 0))
    locator = source.read(20)
    if locator_at < 0 or not locator.startswith(_END64_LOCATOR):
        return entries, directory_bytes
    (record_at,) = struct.unpack_from("<Q", locator, 8)
    source.seek(record_at)
    record = source.read(56)
    if len(record) < 56 or not record.startswith(_END64):
        raise BundleError("corrupt_archive", "the zip64 end record is missing: the zip is damaged")
    total_entries, total_bytes = struct.unpack_from("<QQ", record, 32)
    return int(total_entries), int(total_bytes)


def member_kind(info: zipfile.ZipInfo) -> str:
    """ "file", "folder", "symlink", or what else the Unix mode bits say it is."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        return "symlink"
    if info.is_dir() or stat.S_ISDIR(mode):
        return "folder"
    if kind == 0 or stat.S_ISREG(mode):
        return "file"  # zips made on Windows carry no Unix mode at all
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return f"member of unknown type (mode {mode:o})"


def unsupported(info: zipfile.ZipInfo) -> str | None:
    """Why a file member cannot be extracted safely, or None."""
    if info.flag_bits & (_ENCRYPTED | _STRONG_ENCRYPTION):
        return "is encrypted; zip it without a password"
    if info.flag_bits & _PATCHED:
        return "is stored as a patch, which is not supported"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return (
            f"uses compression method {info.compress_type}; only stored and deflate (the default of zip "
            "tools) are accepted"
        )
    return None
