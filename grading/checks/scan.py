"""The streaming scanner of logs and code: many patterns, one pass per file, bounded memory.

Real bundles hold hundreds of MB of logs, binary junk, 10 MB lines (progress bars redrawn with ``\\r``,
base64 blobs), bytes that are not UTF-8 and thousands of files. A file is read in chunks of ``CHUNK``
bytes; a line longer than ``max_line_bytes`` is cut into pieces of that size (a match across a cut can be
missed, which no honest or hostile log needs). Every pattern's expression runs at once through RE2 (Arrow's
compute kernels: linear time, no backtracking) over each chunk; only a chunk with a candidate is split
into lines, and only candidate lines meet Python's own expressions (and the patterns' exclusions).
Lines are decoded leniently (UTF-8, undecodable bytes replaced) only for the excerpts shown.
Patterns must therefore be written in the syntax both engines share (no look-arounds, no back-references).

Each file is first unwrapped (``unwrap.views``: archives, encodings, notebooks, JSON, a binary's strings), and
each block of text also yields derived views (split words joined, glued string literals squeezed, base64
decoded). What cannot be decoded goes to ``ScanResult.unreadable``, what the budget left to ``unread``.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from grading.checks.unwrap import (
    DEFAULT_LIMITS,
    Limits,
    Unreadable,
    View,
    base64_texts,
    mostly_text,
    printable_strings,
    views,
)

CHUNK = 1 << 20
# The views derived from each block of text lines: words split across lines joined again, and string literals
# glued with "+" squeezed into one ('"priv" + "ate"' reads "private"); long base64 runs decoded.
SPLIT_WORD = r"(\w)\r?\n(\w)"
GLUED_STRINGS = r"""["'][ \t]*\+[ \t]*["']"""
JOINS = f"{SPLIT_WORD}|{GLUED_STRINGS}"  # one pass: a glued pair matches no group and becomes ""
BASE64_CANDIDATE = r"[A-Za-z0-9+/]{32,}"
EXCERPT_CHARS = 240  # of a shown line: a 10 MB line is shown as the part around the hit


@dataclass(frozen=True)
class Pattern:
    """One thing to look for: ``regex`` (case-insensitive, over bytes) finds the line, ``exclude`` drops
    lines that are honest after all; ``where`` says whether it applies to logs, code or both."""

    name: str
    regex: re.Pattern[bytes]
    exclude: re.Pattern[bytes] | None = None
    where: str = "both"  # "logs", "code" or "both"


def pattern(name: str, regex: str, *, exclude: str | None = None, where: str = "both") -> Pattern:
    return Pattern(
        name=name,
        regex=re.compile(regex.encode(), re.I),
        exclude=re.compile(exclude.encode(), re.I) if exclude else None,
        where=where,
    )


@dataclass
class Hit:
    file: str
    line: int
    excerpt: list[str]  # the hit's line and a few around it, each "NNN: text"
    # Where the match is in the hit line's shown text (after its "NNN: "): [start, end), for the highlight.
    match: tuple[int, int] | None = None

    def as_dict(self) -> dict:
        found = {"file": self.file, "line": self.line, "excerpt": self.excerpt}
        if self.match is not None:
            found["match"] = list(self.match)
        return found


@dataclass
class PatternResult:
    total: int = 0
    files: set[str] = field(default_factory=set)
    hits: list[Hit] = field(default_factory=list)

    def as_evidence(self) -> dict:
        return {"total": self.total, "files": len(self.files), "hits": [h.as_dict() for h in self.hits]}


@dataclass
class ScanResult:
    by_pattern: dict[str, PatternResult] = field(default_factory=dict)
    files_scanned: int = 0
    bytes_scanned: int = 0
    binary_strings: list[str] = field(default_factory=list)  # binary files read for their printable strings
    truncated: bool = False  # the byte budget ran out before every file was read
    unread: list[str] = field(default_factory=list)  # the files (or members) the budget left unread, in order
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file or member, why) it could not decode

    def get(self, name: str) -> PatternResult:
        return self.by_pattern.get(name) or PatternResult()


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").replace("\r", " ").replace("\t", " ")
    return "".join(ch if ch.isprintable() else "\N{REPLACEMENT CHARACTER}" for ch in text)


def _shown(raw: bytes, *, span: tuple[int, int] | None = None) -> tuple[str, tuple[int, int] | None]:
    """A line as shown, and where the match ``span`` (byte offsets) is in it. A line longer than
    EXCERPT_CHARS bytes is cut to that many around the match, which is kept whole when it fits (centred,
    the rest of the line on either side marked "…")."""
    start, end = 0, len(raw)
    if len(raw) > EXCERPT_CHARS:
        at, until = span or (0, 0)
        room = EXCERPT_CHARS - min(until - at, EXCERPT_CHARS)
        start = max(0, min(at - room // 2, len(raw) - EXCERPT_CHARS))
        end = start + EXCERPT_CHARS
    head, tail = ("…" if start else ""), ("…" if end < len(raw) else "")
    text = head + _decode(raw[start:end]) + tail
    if span is None:
        return text, None
    first = len(head) + len(_decode(raw[start : max(start, span[0])]))
    return text, (first, first + len(_decode(raw[max(start, span[0]) : min(end, span[1])])))


def combined(patterns: Sequence[Pattern]) -> str:
    """One RE2 expression that matches wherever any of the patterns may (a superset: a prefilter)."""
    return "|".join(f"(?:{p.regex.pattern.decode('latin-1')})" for p in patterns)


class _FileScan:
    """One file's scan: its label, the patterns for its kind, where the hits go."""

    def __init__(
        self,
        *,
        label: str,
        patterns: Sequence[Pattern],
        result: ScanResult,
        max_hits: int,
        context_lines: int,
        prefilter: str | None = None,
    ):
        self.label, self.patterns, self.result = label, patterns, result
        self.max_hits, self.context_lines = max_hits, context_lines
        self.combined = prefilter or combined(patterns)

    def buffer(self, data: bytes, *, first_line: int, label: str | None = None, unless_in: bytes | None = None) -> None:
        """Scan complete lines ``data`` (ending with a newline, or a cut piece) starting at ``first_line``.

        RE2 (through Arrow, linear time) runs every pattern at once over the chunk; only a chunk with a
        candidate is split into lines, and only candidate lines meet Python's regular expressions. A derived
        view (``label``) passes the text it was derived from as ``unless_in``: a match found there as it is
        was the plain view's to find (or to exclude)."""
        chunk = pa.array([data], pa.binary())
        if pc.find_substring_regex(chunk, self.combined, ignore_case=True)[0].as_py() == -1:
            return
        lines = pc.list_flatten(pc.split_pattern(chunk, b"\n"))
        candidates = pc.indices_nonzero(pc.match_substring_regex(lines, self.combined, ignore_case=True))
        numbers: list[int] | None = None
        for index in candidates.to_pylist():
            line = lines[index].as_py()
            for p in self.patterns:
                match = p.regex.search(line)
                if not match or (p.exclude and p.exclude.search(line)):
                    continue
                if unless_in is not None:
                    if match.group() in unless_in:
                        continue
                    numbers = numbers or [first_line + start for start in joined_starts(unless_in)]
                self._record(p, lines, index, first_line, match.span(), label or self.label, numbers)

    def _record(
        self,
        p: Pattern,
        lines: pa.Array,
        index: int,
        first_line: int,
        span: tuple[int, int],
        label: str,
        numbers: list[int] | None = None,  # each line's number in the file (a joined line: its first's)
    ) -> None:
        def number(i: int) -> int:
            return numbers[i] if numbers is not None and i < len(numbers) else first_line + i

        found = self.result.by_pattern.setdefault(p.name, PatternResult())
        found.total += 1
        found.files.add(label)
        if len(found.hits) >= self.max_hits:
            return
        last = len(lines) - 1
        if last > index and lines[last].as_py() == b"":
            last -= 1  # the empty piece after a final newline is no line
        low, high = max(0, index - self.context_lines), min(last, index + self.context_lines)
        excerpt, where = [], None
        for i in range(low, high + 1):
            text, at = _shown(lines[i].as_py(), span=span if i == index else None)
            excerpt.append(f"{number(i)}: {text}")
            where = at if i == index else where
        found.hits.append(Hit(file=label, line=number(index), excerpt=excerpt, match=where))


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
    state = _FileScan(
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


_ENDS_IN_WORD = re.compile(rb"\w\r?$")
_STARTS_WITH_WORD = re.compile(rb"\w")


def joined_starts(data: bytes) -> list[int]:
    """For each line of the joined view of ``data`` (SPLIT_WORD), the offset of its first line in ``data``."""
    lines = data.split(b"\n")
    starts = [0]
    joined = False
    for i in range(1, len(lines)):
        # RE2 replaces without overlap: a one-character line joined to the line before is not joined to the next.
        joined = bool(_ENDS_IN_WORD.search(lines[i - 1]) and _STARTS_WITH_WORD.match(lines[i])) and not (
            joined and len(lines[i - 1]) == 1
        )
        if not joined:
            starts.append(i)
    return starts


def _derived(state: _FileScan, data: bytes, *, first_line: int, options: _Options, depth: int) -> None:
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
