"""What leaves the worker after a task: a tar.gz of its outputs, with the team's secret values blanked.

Secrets are the values of the spec's env variables named in secret_names. An agent may print them or write
them into its logs or code; they are replaced by "[secret NAME]" in every file collected and in every output
tail sent to the portal, so that neither the portal nor anyone reading the run's pages ever sees them.
"""

import logging
import os
import re
import stat
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

log = logging.getLogger(__name__)

COLLECTED = ("submission", "logs", "code", "run.log")
_CHUNK = 1 << 20


class OverCap(Exception):
    """The task's outputs are bigger than its max_output_bytes."""


def secret_values(env: Mapping[str, str], secret_names: Iterable[str]) -> dict[str, str]:
    """{name: value} of the secrets that have a value (an empty one would match everywhere)."""
    return {name: env[name] for name in secret_names if env.get(name)}


def _pattern(secrets: Mapping[str, str]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One regular expression matching any secret value, longest first so a value that contains another wins."""
    by_value = {value: name for name, value in secrets.items() if value}
    if not by_value:
        return None, {}
    alternatives = sorted(by_value, key=len, reverse=True)
    return re.compile("|".join(re.escape(value) for value in alternatives)), by_value


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """text with each secret value replaced by "[secret NAME]"."""
    pattern, names = _pattern(secrets)
    if pattern is None:
        return text
    return pattern.sub(lambda match: f"[secret {names[match.group(0)]}]", text)


def redact_tail(tail: str, secrets: Mapping[str, str], *, truncated: bool) -> str:
    """An output tail, redacted; when it was cut from a longer output, its first characters may hold the end
    of a secret that redact() cannot recognise, so those are dropped (up to one secret's length)."""
    pattern, _ = _pattern(secrets)
    if pattern is None or not truncated:
        return redact(tail, secrets)
    start = max(len(value) for value in secrets.values()) - 1
    for match in pattern.finditer(tail):
        if match.start() < start < match.end():
            start = match.start()
            break
        if match.start() >= start:
            break
    return redact(tail[start:], secrets)


def _redact_bytes(data: bytes, pattern: re.Pattern[bytes], names: Mapping[bytes, str]) -> bytes:
    return pattern.sub(lambda match: f"[secret {names[match.group(0)]}]".encode(), data)


def _redacted_chunks(path: Path, pattern: re.Pattern[bytes], names: Mapping[bytes, str]) -> Iterator[bytes]:
    """The file's bytes, redacted, read a chunk at a time; a match across two chunks is still found because
    the last (longest secret - 1) bytes of each chunk wait for the next one unless a match covers them."""
    keep = max(len(value) for value in names) - 1
    pending = b""
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            buffer = pending + chunk
            cut = max(len(buffer) - keep, 0)
            for match in pattern.finditer(buffer):
                if match.start() < cut < match.end():
                    cut = match.end()
                if match.start() >= cut:
                    break
            yield _redact_bytes(buffer[:cut], pattern, names)
            pending = buffer[cut:]
    yield _redact_bytes(pending, pattern, names)


def _contains(path: Path, pattern: re.Pattern[bytes], longest: int) -> bool:
    tail = b""
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            if pattern.search(tail + chunk):
                return True
            tail = chunk[-(longest - 1) :] if longest > 1 else b""
    return False


def redact_file(path: Path, secrets: Mapping[str, str]) -> bool:
    """Blank the secrets in one file, in place (atomically); True when it held one. Binary files are treated
    the same way: a secret must not leave the worker even inside a pickled model."""
    by_value = {value.encode(): name for name, value in secrets.items() if value}
    if not by_value:
        return False
    pattern = re.compile(b"|".join(re.escape(value) for value in sorted(by_value, key=len, reverse=True)))
    if not _contains(path, pattern, max(len(value) for value in by_value)):
        return False
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".redact-")
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in _redacted_chunks(path, pattern, by_value):
                out.write(chunk)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def _regular_files(root: Path) -> Iterator[Path]:
    """Regular files under root (or root itself), never following links."""
    if root.is_symlink() or not root.exists():
        return
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if not os.path.islink(os.path.join(folder, name))]
        for name in files:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                yield path


def redact_tree(roots: Iterable[Path], secrets: Mapping[str, str]) -> int:
    """Blank the secrets in every regular file under roots; the number of files changed."""
    if not any(secrets.values()):
        return 0
    return sum(redact_file(path, secrets) for root in roots for path in _regular_files(root))


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
