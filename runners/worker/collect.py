"""What leaves the worker after a task: a tar.gz of its outputs, with the team's secret values blanked first
(runners/redaction.py, the redaction the portal applies again to what it receives)."""

import logging
import os
import stat
import tarfile
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

COLLECTED = ("submission", "logs", "code", "run.log")


class OverCap(Exception):
    """The task's outputs are bigger than its max_output_bytes."""


def tree_bytes(roots: Iterable[Path]) -> int:
    """Bytes of everything under roots (links counted as themselves, not followed); cheap enough to poll."""
    total = 0
    stack: list[str] = [os.fspath(root) for root in roots if os.path.lexists(root)]
    while stack:
        path = stack.pop()
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(info.st_mode):
            try:
                stack.extend(entry.path for entry in os.scandir(path))
            except OSError:
                continue
        else:
            total += info.st_size
    return total


def collect(home: Path, archive: Path, *, max_bytes: int) -> list[str]:
    """Write archive, a tar.gz of home's submission/, logs/, code/ and run.log; the skipped paths come back.

    Links and anything not a regular file or folder are skipped (a link could carry a file from outside the
    task). Raises OverCap, writing nothing, when the files add up to more than max_bytes.
    """
    parts = [home / name for name in COLLECTED if os.path.lexists(home / name)]
    total = tree_bytes(parts)
    if total > max_bytes:
        raise OverCap(f"the outputs add up to {total} bytes, over the cap of {max_bytes} bytes")
    skipped: list[str] = []

    def keep_plain(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if member.isfile() or member.isdir():
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            return member
        skipped.append(member.name)
        return None

    with tarfile.open(archive, "w:gz") as tar:
        for part in parts:
            tar.add(part, arcname=part.name, recursive=True, filter=keep_plain)
    if skipped:
        log.warning("collect %s: skipped %d links or special files: %s", home, len(skipped), skipped[:10])
    return skipped
