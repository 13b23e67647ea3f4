"""The scan of files: each file unwrapped into views (unwrap.py), each view read in chunks and its blocks of
complete lines matched (lines.py), with the views derived from each block (split words joined, glued strings
squeezed, base64 decoded) and the byte budget shared by every file."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from grading.checks.scan.lines import (
    BASE64_CANDIDATE,
    CHUNK,
    JOINS,
    BlockScan,
    Pattern,
    ScanResult,
    combined,
)
from grading.checks.scan.unwrap import (
    DEFAULT_LIMITS,
    Limits,
    Unreadable,
    View,
    base64_texts,
    mostly_text,
    printable_strings,
    views,
)


@dataclass(frozen=True, kw_only=True)
class _Options:
    patterns: Sequence[Pattern]
    result: ScanResult
    max_hits: int
    context_lines: int
    max_line_bytes: int
    prefilter: str | None
    limits: Limits


def scan_file(
    path: Path,
    *,
    label: str,
    patterns: Sequence[Pattern],
    result: ScanResult,
    max_hits: int = 5,
    context_lines: int = 2,
    max_line_bytes: int = 65536,
    budget: int | None = None,
    prefilter: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> int:
    """Scan one file, every view of it (unwrap.views: members, decoded text, a binary's strings); returns the
    bytes read, decoded. What cannot be decoded is listed in ``result.unreadable``, what the budget left unread
    in ``result.unread``."""
    if not patterns:
        return 0
    options = _Options(
        patterns=patterns,
        result=result,
        max_hits=max_hits,
        context_lines=context_lines,
        max_line_bytes=max_line_bytes,
        prefilter=prefilter,
        limits=limits,
    )
    read = 0
    with path.open("rb") as f:
        result.files_scanned += 1
        size = os.fstat(f.fileno()).st_size
        try:
            for view in views(label, f, name=path.name, size=size, limits=limits, seekable=f):
                left = None if budget is None else budget - read
                if left is not None and left <= 0:
                    result.truncated = True
                    result.unread.append(view.label)
                    break
                read += _scan_view(view, options=options, budget=left)
        except Unreadable as exc:
            result.unreadable.append((exc.where, exc.why))
    result.bytes_scanned += read
    return read


def _scan_view(view: View, *, options: _Options, budget: int | None, depth: int = 0) -> int:
    """Scan one view in chunks, line by line; returns the bytes read from it."""
    result, max_line_bytes = options.result, options.max_line_bytes
    state = BlockScan(
        label=view.label,
        patterns=options.patterns,
        result=result,
        max_hits=options.max_hits,
        context_lines=options.context_lines,
        prefilter=options.prefilter,
    )
    if view.kind == "strings":
        result.binary_strings.append(view.label)

    def block(data: bytes, first_line: int) -> None:
        state.buffer(data, first_line=first_line)
        if view.kind == "text":
            _derived(state, data, first_line=first_line, options=options, depth=depth)

    carry = b""
    line_no = 1
    read = 0
    stream = view.stream
    while True:
        want = CHUNK if budget is None else min(CHUNK, budget - read)
        data = stream.read(want) if want > 0 else b""
        if not data:
            if want <= 0 and stream.read(1):
                result.truncated = True
                result.unread.append(view.label)
            break
        read += len(data)
        data = printable_strings(data) if view.kind == "strings" else data.replace(b"\0", b"")
        buf = carry + data
        cut = buf.rfind(b"\n")
        if cut == -1:
            if len(buf) <= max_line_bytes:
                carry = buf
                continue
            # One very long line: scan it in pieces, none kept longer than max_line_bytes.
            block(buf, line_no)
            carry = b""
            continue
        complete, carry = buf[: cut + 1], buf[cut + 1 :]
        block(complete, line_no)
        line_no += complete.count(b"\n")
        if len(carry) > max_line_bytes:
            # After the complete lines before it, so that hits stay in line order.
            block(carry, line_no)
            carry = b""
    if carry:
        block(carry, line_no)
    return read


def _derived(state: BlockScan, data: bytes, *, first_line: int, options: _Options, depth: int) -> None:
    """The views derived from a block of text: split words joined and glued strings squeezed (only what the
    plain text does not hold as it is counts), and long base64 runs decoded and scanned as files of their own."""
    chunk = pa.array([data], pa.binary())
    squeezed = pc.replace_substring_regex(chunk, JOINS, r"\1\2")[0].as_py()
    if squeezed != data:
        state.buffer(squeezed, first_line=first_line, label=f"{state.label} (joined)", unless_in=data)
    if depth >= options.limits.max_depth:
        return
    if pc.find_substring_regex(chunk, BASE64_CANDIDATE)[0].as_py() == -1:
        return
    for blob in base64_texts(data):
        label = f"{state.label} (base64)"
        try:
            for view in views(label, io.BytesIO(blob), name="", size=len(blob), limits=options.limits, depth=1):
                if view.kind == "text" or mostly_text(blob):
                    _scan_view(view, options=options, budget=None, depth=depth + 1)
        except Unreadable:
            continue  # base64-looking text that decodes to no archive after all: nothing to read in it


def scan_files(
    files: Iterable[tuple[str, Path, str]],
    *,
    patterns: Sequence[Pattern],
    max_hits: int = 5,
    context_lines: int = 2,
    max_line_bytes: int = 65536,
    max_bytes: int | None = None,
    on_file: Callable[[str], None] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ScanResult:
    """Scan (label, path, kind) files, kind "logs" or "code", with the patterns meant for that kind."""
    result = ScanResult()
    by_kind = {kind: [p for p in patterns if p.where in (kind, "both")] for kind in ("logs", "code")}
    prefilters = {kind: combined(found) for kind, found in by_kind.items()}
    left = max_bytes
    for label, path, kind in files:
        if left is not None and left <= 0:
            result.truncated = True
            result.unread.append(label)
            continue
        try:
            read = scan_file(
                path,
                label=label,
                patterns=by_kind[kind],
                result=result,
                max_hits=max_hits,
                context_lines=context_lines,
                max_line_bytes=max_line_bytes,
                budget=left,
                prefilter=prefilters[kind],
                limits=limits,
            )
        except OSError:
            read = 0  # gone since it was listed: nothing of it to read
        if left is not None:
            left -= read
        if on_file:
            on_file(label)
    return result


def walk_files(folder: Path) -> list[Path]:
    """Every regular file below ``folder``, sorted, links not followed."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return found
