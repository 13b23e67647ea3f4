"""The competitions' public data on a worker: fetched once per sha256, extracted safely, kept read-only.

Every task of a competition reads the same folder, RUNNER_WORK_DIR/data/<slug>-<sha12>/. It is written once,
into a temporary folder renamed into place, so a reader never sees half of it and two worker processes on
one machine can race for it harmlessly; threads of one process wait for each other instead of downloading twice.
The archive comes from the portal, but it is still refused whole at the first link, absolute path or '..'.
"""

import hashlib
import logging
import os
import re
import shutil
import stat
import tarfile
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from runners.worker.client import PortalClient

log = logging.getLogger(__name__)

_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class UnsafeArchive(Exception):
    """The public data's tar.gz holds a link, an absolute path, a '..' or something not a file or folder."""


def _checked_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    members = tar.getmembers()
    for member in members:
        parts = PurePosixPath(member.name).parts
        if member.name.startswith(("/", "\\")) or ".." in parts:
            raise UnsafeArchive(f"the public data holds the path {member.name!r}, outside its folder")
        if not (member.isfile() or member.isdir()):
            raise UnsafeArchive(f"the public data holds {member.name!r}, which is a link or a special file")
    return members


def safe_extract(archive: Path, destination: Path) -> None:
    """Extract a tar.gz of plain files and folders; refuse the whole archive at the first unsafe member."""
    with tarfile.open(archive, "r:*") as tar:
        tar.extractall(destination, members=_checked_members(tar), filter="data")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def make_read_only(root: Path) -> None:
    """Files 0444 and folders 0555: the process backend has no read-only mount, so the bits stand in."""
    for folder, dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o555)
    os.chmod(root, 0o555)


def remove_tree(root: Path) -> None:
    """rmtree that also removes what make_read_only() or an agent made read-only."""

    def make_writable_and_retry(function: Any, path: str, _exc: BaseException) -> None:
        parent = os.path.dirname(path)
        for target in (parent, path):
            try:
                os.chmod(target, os.lstat(target).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
            except OSError:
                pass
        try:
            function(path)
        except FileNotFoundError:
            pass

    if os.path.lexists(root):
        shutil.rmtree(root, onexc=make_writable_and_retry)


class DataCache:
    """RUNNER_WORK_DIR/data/<slug>-<sha12>/: written once (temp folder + rename), shared by every task."""

    _locks: dict[str, threading.Lock] = {}
    _locks_lock = threading.Lock()

    def __init__(self, root: Path, client: PortalClient) -> None:
        self.root = root
        self.client = client

    @classmethod
    def _lock(cls, key: str) -> threading.Lock:
        with cls._locks_lock:
            return cls._locks.setdefault(key, threading.Lock())

    def ensure(self, competition_id: str, public_data: dict[str, Any]) -> Path:
        """The folder holding the competition's public data, downloaded and extracted when missing."""
        sha256 = str(public_data.get("sha256", "")).lower()
        if not _SLUG.fullmatch(competition_id) or not _SHA256.fullmatch(sha256):
            raise ValueError(f"the spec's competition {competition_id!r} or public data sha256 {sha256!r} is malformed")
        key = f"{competition_id}-{sha256[:12]}"
        final = self.root / key
        with self._lock(key):
            if not final.is_dir():
                self._fetch(public_data, sha256, final)
        return final

    def _fetch(self, public_data: dict[str, Any], sha256: str, final: Path) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=self.root, prefix=".fetch-"))
        try:
            archive = scratch / "public.tar.gz"
            self.client.download(str(public_data["url"]), archive)
            got = _sha256(archive)
            if got != sha256:
                raise ValueError(f"the public data's sha256 is {got}, the spec says {sha256}")
            extracted = scratch / "data"
            safe_extract(archive, extracted)
            entries = list(extracted.iterdir())
            if len(entries) == 1 and entries[0].name == "public" and entries[0].is_dir():
                extracted = entries[0]
            make_read_only(extracted)
            try:
                os.rename(extracted, final)
            except OSError:
                if not final.is_dir():  # another worker process on this machine won the race otherwise
                    raise
            log.info("public data %s cached (%s bytes)", final.name, public_data.get("bytes"))
        finally:
            remove_tree(scratch)
