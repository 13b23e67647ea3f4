"""Run-length encoded masks: whole columns parsed at once, validated with actionable messages, and
compared pixel by pixel without drawing them.

A cell holds ``start length`` pairs of integers separated by whitespace, with 1-based starts into the
image's pixels numbered one after the other (down each column, or along each row: that decides where a
pixel lies in 2-D, which only the Hausdorff distance needs, not how many pixels two masks share). Like
MLE-bench's ``rle_decode``, a cell is refused when it is not text, when a start or a length is not
positive, when the starts are out of order or when two runs overlap (touching runs are fine); text that
is empty or only whitespace is an empty mask. The reference fills a flat array of height x width pixels
by slice assignment, so a run reaching past the last pixel is cut off there and a run starting beyond it
draws nothing: :meth:`Runs.clip` does the same.

Speed: the cells of a column are joined into one byte string and split into numbers with a handful of
numpy passes (digits, token bounds, a Horner loop over at most 18 digit positions), so tens of
megabytes of RLE cost well under a second. A cell holding any other character (a sign, a decimal point,
a non-ASCII digit, an underscore) is parsed on its own with Python's ``str.split`` and ``int``, which is
what the reference runs, so exactly the same cells are accepted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import MAX_EXAMPLES, RowIds, plural, row_label, show

RLE_HINT = (
    "Write each mask as 'start length' pairs separated by spaces, with 1-based starts in increasing "
    "order and runs that do not overlap"
)
_MAX_DIGITS = 18  # any such number fits in int64, and so does the sum of two
_MAX_VALUE = 10**_MAX_DIGITS
_EMPTY = np.zeros(0, dtype=np.int64)
_SEPARATOR, _DIGIT, _OTHER = 0, 1, 2
_BYTE_KIND = np.full(256, _OTHER, dtype=np.uint8)  # what str.split and int make of each ASCII byte
_BYTE_KIND[[9, 10, 11, 12, 13, 32]] = _SEPARATOR  # the whitespace str.split splits on, in ASCII
_BYTE_KIND[48:58] = _DIGIT


# ---------------------------------------------------------------------------------------------------
# Runs of many masks


@dataclass(frozen=True)
class Runs:
    """The runs of n masks: mask i's runs are ``starts[offsets[i]:offsets[i + 1]]`` (0-based first
    pixel) and ``ends[...]`` (one past the last pixel), sorted and disjoint within each mask."""

    offsets: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @staticmethod
    def empty(n: int) -> Runs:
        return Runs(np.zeros(n + 1, dtype=np.int64), _EMPTY, _EMPTY)

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def mask_of_run(self) -> np.ndarray:
        return np.repeat(np.arange(self.n), self.counts)

    def areas(self) -> np.ndarray:
        """Pixels per mask (int64)."""
        return _sum_per_mask(self.ends - self.starts, self.offsets)

    def take(self, rows: np.ndarray | None) -> Runs:
        """Masks in a new order: mask k of the result is mask ``rows[k]`` of this one."""
        if rows is None:
            return self
        rows = np.asarray(rows, dtype=np.intp)
        counts = self.counts[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        gather = np.repeat(self.offsets[:-1][rows] - offsets[:-1], counts) + np.arange(offsets[-1])
        return Runs(offsets, self.starts[gather], self.ends[gather])

    def clip(self, sizes: np.ndarray) -> Runs:
        """Runs cut off at each mask's last pixel (``sizes`` = height x width per mask)."""
        size_of_run = np.repeat(np.asarray(sizes, dtype=np.int64), self.counts)
        if not (self.ends > size_of_run).any():
            return self
        keep = self.starts < size_of_run
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.mask_of_run()[keep], minlength=self.n), out=offsets[1:])
        return Runs(offsets, self.starts[keep], np.minimum(self.ends, size_of_run)[keep])

    def in_one_line(self, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Starts and ends of every run with the masks laid end to end (mask i from sum(sizes[:i]))."""
        base = np.zeros(self.n, dtype=np.int64)
        np.cumsum(np.asarray(sizes, dtype=np.int64)[:-1], out=base[1:])
        shift = np.repeat(base, self.counts)
        return self.starts + shift, self.ends + shift


def _sum_per_mask(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    total = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=total[1:])
    return total[offsets[1:]] - total[offsets[:-1]]


def intersections(a: Runs, b: Runs, sizes: np.ndarray) -> np.ndarray:
    """Pixels shared by mask i of ``a`` and mask i of ``b``, for every i (both clipped to ``sizes``).

    With the masks laid end to end, ``covered(x)`` (pixels of ``b`` before x) is found for both ends of
    every run of ``a`` by a binary search over ``b``'s starts: no mask is ever drawn.
    """
    a_starts, a_ends = a.in_one_line(sizes)
    b_starts, b_ends = b.in_one_line(sizes)
    before = np.zeros(len(b_starts) + 1, dtype=np.int64)
    np.cumsum(b_ends - b_starts, out=before[1:])

    def covered(x: np.ndarray) -> np.ndarray:
        k = np.searchsorted(b_starts, x, side="right")  # runs of b starting at or before x
        last = np.maximum(k - 1, 0)
        if not len(b_starts):
            return np.zeros(len(x), dtype=np.int64)
        inside = np.minimum(x, b_ends[last]) - b_starts[last]
        return np.where(k > 0, before[last] + inside, 0)

    return _sum_per_mask(covered(a_ends) - covered(a_starts), a.offsets)


def merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of possibly overlapping runs, as sorted runs that neither overlap nor touch."""
    if not len(starts):
        return starts, ends
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    first = np.ones(len(starts), dtype=bool)
    first[1:] = starts[1:] > reach[:-1]
    heads = np.flatnonzero(first)
    return starts[heads], np.maximum.reduceat(ends, heads)


# ---------------------------------------------------------------------------------------------------
# Parsing a column


def is_missing(value: object) -> bool:
    """An empty cell as pandas reads it (NaN, None or NA)."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def parse_column(
    series: pd.Series,
    *,
    column: str,
    ids: RowIds | None = None,
    missing: str = "empty",
    empty_token: str | None = None,
    missing_hint: str = "",
    error: type[Exception] = InvalidSubmission,
    whose: str = "",
) -> Runs:
    """The masks of a column of RLE cells, or ``error`` naming the first bad row and pair.

    ``missing``: what an empty cell (NaN) is: ``"empty"`` (an empty mask) or ``"invalid"``.
    ``empty_token``: a cell exactly equal to it is an empty mask (contrails' ``'-'``).
    ``whose``: prefix for messages about the answers (``"the answers' "``).
    """
    values = series.to_numpy(dtype=object, na_value=np.nan)
    n = len(values)
    texts: list[str] = []
    text_rows: list[int] = []
    missing_rows: list[int] = []
    other_rows: list[int] = []
    for row, value in enumerate(values.tolist()):
        if isinstance(value, str):
            if value != empty_token:
                texts.append(value)
                text_rows.append(row)
        elif is_missing(value):
            missing_rows.append(row)
        else:
            other_rows.append(row)
    where = f"{whose}column {show(column)}"
    if other_rows:
        first = other_rows[0]
        raise error(
            f"{where} holds {plural(len(other_rows), 'number')} instead of run-length encodings, e.g. "
            f"{show(values[first])} in {row_label(first, ids)}. {RLE_HINT}"
        )
    if missing_rows and missing == "invalid":
        shown = ", ".join(row_label(r, ids) for r in missing_rows[:MAX_EXAMPLES])
        raise error(
            f"{where} has {plural(len(missing_rows), 'empty cell')} (e.g. {shown}); "
            f"every row needs a run-length encoding{missing_hint}"
        )
    rows = np.asarray(text_rows, dtype=np.int64)
    token_rows, tokens = _tokens(texts, rows, where=where, ids=ids, error=error)
    counts = np.bincount(token_rows, minlength=n)
    odd = np.flatnonzero(counts % 2)
    if len(odd):
        first = int(odd[0])
        raise error(
            f"{where} has {plural(len(odd), 'row')} with an odd count of numbers, e.g. {row_label(first, ids)} "
            f"has {int(counts[first])}: the last start has no length. {RLE_HINT}"
        )
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts // 2, out=offsets[1:])
    starts, lengths = tokens[0::2], tokens[1::2]
    _validate_pairs(starts, lengths, token_rows[0::2], offsets, where=where, ids=ids, error=error)
    return Runs(offsets, starts - 1, starts - 1 + lengths)


def _tokens(
    texts: list[str], rows: np.ndarray, *, where: str, ids: RowIds | None, error: type[Exception]
) -> tuple[np.ndarray, np.ndarray]:
    """(row, value) of every number in the text cells, in file order."""
    if not texts:
        return _EMPTY, _EMPTY
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    joined = "\n".join(texts)
    slow = np.zeros(len(texts), dtype=bool)
    if not joined.isascii():
        slow = np.fromiter((not t.isascii() for t in texts), dtype=bool, count=len(texts))
        joined = "\n".join("" if s else t for s, t in zip(slow.tolist(), texts))
        lengths = np.where(slow, 0, lengths)
    data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    line_starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=line_starts[1:])

    kind = _BYTE_KIND[data]
    if len(kind) and kind.max() == _OTHER:
        slow[np.searchsorted(line_starts, np.flatnonzero(kind == _OTHER), side="right") - 1] = True
    # A number starts where a digit follows a non-digit and ends where a non-digit follows a digit: the
    # changes alternate, so one pass finds both.
    digit = np.zeros(len(data) + 2, dtype=np.int8)
    digit[1:-1] = kind == _DIGIT
    change = np.flatnonzero(digit[1:] != digit[:-1])
    first, last = change[0::2], change[1::2]
    del kind, digit, change
    size = last - first
    # the numbers of each line (in file order) come after its start
    per_line = np.diff(np.searchsorted(first, line_starts), append=len(first))
    line = np.repeat(np.arange(len(texts)), per_line)
    if len(size) and size.max() > _MAX_DIGITS:
        slow[line[size > _MAX_DIGITS]] = True
    values = data - np.uint8(48)  # each digit's value (other bytes are never read)
    number = np.zeros(len(first), dtype=np.int64)
    for digits in range(1, min(int(size.max()), _MAX_DIGITS) + 1 if len(size) else 1):
        group = np.flatnonzero(size == digits)  # Horner's rule on the numbers of this many digits at once
        start = first[group]
        value = values[start].astype(np.int64)
        for k in range(1, digits):
            value = value * 10 + values[start + k]
        number[group] = value
    if not slow.any():
        return rows[line], number
    keep = ~slow[line]
    extra_lines, extra_numbers = [], []
    for position in np.flatnonzero(slow).tolist():
        parsed = _python_ints(texts[position], int(rows[position]), where=where, ids=ids, error=error)
        extra_lines.append(np.full(len(parsed), position, dtype=np.int64))
        extra_numbers.append(parsed)
    line = np.concatenate([line[keep], *extra_lines])
    number = np.concatenate([number[keep], *extra_numbers])
    order = np.argsort(line, kind="stable")
    return rows[line[order]], number[order]


def _python_ints(text: str, row: int, *, where: str, ids: RowIds | None, error: type[Exception]) -> np.ndarray:
    """One cell parsed the way the reference parses it: ``[int(t) for t in text.split()]``."""
    numbers = []
    for token in text.split():
        try:
            value = int(token)
        except ValueError:
            raise error(
                f"{where} has a value that is not a whole number in {row_label(row, ids)}: {show(token)}. {RLE_HINT}"
            ) from None
        if abs(value) >= _MAX_VALUE:
            raise error(
                f"{where} has a number far beyond any image size in {row_label(row, ids)}: {show(token)}. {RLE_HINT}"
            )
        numbers.append(value)
    return np.asarray(numbers, dtype=np.int64)


def _validate_pairs(
    starts: np.ndarray,
    lengths: np.ndarray,
    run_rows: np.ndarray,
    offsets: np.ndarray,
    *,
    where: str,
    ids: RowIds | None,
    error: type[Exception],
) -> None:
    same_row = run_rows[1:] == run_rows[:-1]
    unsorted = np.zeros(len(starts), dtype=bool)
    unsorted[1:] = same_row & (starts[1:] < starts[:-1])
    overlap = np.zeros(len(starts), dtype=bool)
    overlap[1:] = same_row & (starts[:-1] + lengths[:-1] > starts[1:]) & ~unsorted[1:]
    problems = (
        (starts < 1, "starts at {s}, but starts count pixels from 1"),
        (lengths < 1, "has length {l}, but every run covers at least 1 pixel"),
        (unsorted, "starts before the pair in front of it ({ps} {pl}): starts must increase"),
        (overlap, "overlaps the pair in front of it ({ps} {pl}, pixels {ps} to {pe}): runs must not overlap"),
    )
    bad_rows = np.unique(run_rows[np.logical_or.reduce([flags for flags, _ in problems])])
    if not len(bad_rows):
        return
    row = int(bad_rows[0])
    in_row = slice(int(offsets[row]), int(offsets[row + 1]))
    for flags, text in problems:
        hits = np.flatnonzero(flags[in_row])
        if len(hits):
            k = int(hits[0]) + in_row.start
            previous = max(k - 1, 0)
            ps, pl = int(starts[previous]), int(lengths[previous])
            detail = text.format(s=int(starts[k]), l=int(lengths[k]), ps=ps, pl=pl, pe=ps + pl - 1)
            raise error(
                f"{where} has {plural(len(bad_rows), 'row')} with an invalid run-length encoding, e.g. "
                f"{row_label(row, ids)}: pair {k - in_row.start + 1} ({int(starts[k])} {int(lengths[k])}) "
                f"{detail}. {RLE_HINT}"
            )
