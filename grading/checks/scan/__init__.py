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

from grading.checks.scan.files import scan_file, scan_files, walk_files
from grading.checks.scan.lines import (
    CHUNK,
    EXCERPT_CHARS,
    Hit,
    Pattern,
    PatternResult,
    ScanResult,
    combined,
    joined_starts,
    pattern,
)

__all__ = [
    "CHUNK",
    "EXCERPT_CHARS",
    "Hit",
    "Pattern",
    "PatternResult",
    "ScanResult",
    "combined",
    "joined_starts",
    "pattern",
    "scan_file",
    "scan_files",
    "walk_files",
]
