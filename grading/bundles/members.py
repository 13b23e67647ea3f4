"""Member names and the folder tree they are written to.

A member name is refused before anything is written for it when it could land outside the bundle
folder, when it is not a plain relative path (backslashes, drive letters, control characters), or when
it collides with an earlier member. Files are opened with O_EXCL and O_NOFOLLOW so that, whatever slips
past the name checks, nothing is overwritten and nothing is written through a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from grading.bundles.errors import BundleError
from grading.bundles.limits import Limits

# A member's whole name, in UTF-8 bytes: deep enough for any run folder, and far below the 4096 bytes a
# path may have on Linux once the portal's own folders are put in front of it.
MAX_NAME_BYTES = 1024
_MAX_SEGMENT_BYTES = 255  # what ext4 and most file systems allow for one name
_DRIVE_LETTER = re.compile(r"^[A-Za-z]:")


def safe_path(name: str) -> str:
    """The member's relative path with '.' and empty segments dropped ('' for the top folder itself)."""

    def refuse(why: str, shown: str = name) -> BundleError:
        quoted = shown if len(shown) <= 120 else f"{shown[:60]}...{shown[-40:]}"
        return BundleError("unsafe_path", f"unsafe member name {quoted!r}: {why}", {"member": shown})

    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # tarfile keeps undecodable bytes as surrogates, which nothing downstream (JSON, the database)
        # can store; show them escaped instead.
        raise refuse("it is not valid UTF-8", name.encode("utf-8", "backslashreplace").decode()) from None
    if not name:
        raise refuse("the name is empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise refuse("it contains a control character")
    if "\\" in name:
        raise refuse("it contains a backslash; archives use '/' between folders")
    if name.startswith("/"):
        raise refuse("it is an absolute path")
    if _DRIVE_LETTER.match(name):
        raise refuse("it starts with a drive letter")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise refuse("it contains '..', which would write outside the bundle folder")
    if len(name.encode()) > MAX_NAME_BYTES:
        raise refuse(f"the name is {len(name.encode())} bytes long; at most {MAX_NAME_BYTES} are accepted")
    if any(len(part.encode()) > _MAX_SEGMENT_BYTES for part in parts):
        raise refuse(f"one folder or file name in it is longer than {_MAX_SEGMENT_BYTES} bytes")
    return "/".join(parts)


class MemberTree:
    """The files and folders written so far under ``root``."""

    def __init__(self, *, root: Path, limits: Limits) -> None:
        self.root = root
        self.limits = limits
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.entries = 0

    def count(self, name: str) -> None:
        """Count one more member of any kind (folders use inodes too)."""
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise BundleError(
                "too_many_files",
                f"the archive has more than {self.limits.max_files} entries (stopped at {name!r})",
                {"member": name, "limit": self.limits.max_files},
            )

    def add_folder(self, path: str, *, name: str) -> None:
        if path in self.files:
            raise _duplicate(name, f"{name!r} is a folder, but an earlier member of that name is a file")
        self._ensure_folders(path, name=name)

    @contextlib.contextmanager
    def create(self, path: str, *, name: str) -> Iterator[BinaryIO]:
        if not path:
            raise BundleError("unsafe_path", f"unsafe member name {name!r}: a file with no name", {"member": name})
        if path in self.files:
            raise _duplicate(name, f"{name!r} appears twice in the archive")
        if path in self.folders:
            raise _duplicate(name, f"{name!r} is a file, but an earlier member made it a folder")
        self._ensure_folders(path.rpartition("/")[0], name=name)
        self.files.add(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with _naming(name):
            descriptor = os.open(self.root / path, flags, 0o600)  # bundles are private: the portal's user only
        with os.fdopen(descriptor, "wb") as out:
            yield out

    def _ensure_folders(self, path: str, *, name: str) -> None:
        parts = path.split("/") if path else []
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in self.folders:
                continue
            if folder in self.files:
                raise _duplicate(name, f"{name!r} needs {folder!r} to be a folder, but it is a file")
            with _naming(name):
                (self.root / folder).mkdir(mode=0o700)
            self.folders.add(folder)


@contextlib.contextmanager
def _naming(name: str) -> Iterator[None]:
    """A name the file system refuses is the bundle's problem, not a server error."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENAMETOOLONG, errno.EILSEQ, errno.EINVAL):
            raise
        raise BundleError(
            "unsafe_path",
            f"unsafe member name {name!r}: the file system refuses it ({exc.strerror})",
            {"member": name},
        ) from None


def _duplicate(name: str, message: str) -> BundleError:
    return BundleError("duplicate_member", message, {"member": name})
