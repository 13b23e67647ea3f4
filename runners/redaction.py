"""Redaction of a hosted run's secret values: the one implementation the worker and the portal both import.

Secrets are the values of the spec's env variables named in secret_names. An agent may print them or write
them into its logs or code; they are replaced by "[secret NAME]" in every file the worker collects and in
every output tail it sends, and the portal applies the same redaction again to what it receives (the
worker's tails and reasons, the files it assembles into a bundle), so that nobody reading the run's pages
ever sees them; so are their cheap disguises (disguises()). Framework-free: the GPU worker imports it.
"""

import base64
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

_CHUNK = 1 << 20


def secret_values(env: Mapping[str, str], secret_names: Iterable[str]) -> dict[str, str]:
    """{name: value} of the secrets that have a value (an empty one would match everywhere)."""
    return {name: env[name] for name in secret_names if env.get(name)}


# A secret this long or longer is also found in its cheap disguises (below); a shorter one only as itself,
# since its encodings are short enough to turn up by chance in any text.
DISGUISE_MIN_CHARS = 8


def disguises(value: str) -> list[str]:
    """The value and the disguises an agent reaches for without trying hard: upper and lower case, reversed,
    hex, base64 (standard and url-safe, at each of the three byte alignments it can take inside a longer
    text) and percent-encoding. Whatever else an agent does to a secret (split it, xor it, encrypt it) is
    out of reach of any redaction."""
    found = [value]
    if len(value) >= DISGUISE_MIN_CHARS:
        data = value.encode()
        found += [value.upper(), value.lower(), value[::-1], data.hex(), data.hex().upper(), quote(value, safe="")]
        for skip in range(3):
            part = data[skip:]
            part = part[: len(part) // 3 * 3]  # whole 3-byte groups only: the rest depends on what follows
            if len(part) >= 6:
                found += [base64.b64encode(part).decode(), base64.urlsafe_b64encode(part).decode()]
    return list(dict.fromkeys(item for item in found if item))


def redaction_table(secrets: Mapping[str, str]) -> dict[str, str]:
    """{text to blank: the secret's name} for every secret value and its disguises."""
    table: dict[str, str] = {}
    for name, value in secrets.items():
        if value:
            for disguise in disguises(value):
                table.setdefault(disguise, name)
    return table


def _pattern(secrets: Mapping[str, str]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One regular expression matching any secret value or disguise, longest first so a value that contains
    another wins."""
    by_value = redaction_table(secrets)
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
    start = max(len(value) for value in redaction_table(secrets)) - 1
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
    by_value = {value.encode(): name for value, name in redaction_table(secrets).items()}
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
