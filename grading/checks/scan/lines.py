"""Lines and what is found on them: the patterns, the hits and results, and the RE2-then-Python matching of a
block of complete lines (``BlockScan``), shared by every view of a file (see the package's docstring)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

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


class BlockScan:
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
