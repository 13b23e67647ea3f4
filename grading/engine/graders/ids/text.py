"""Id columns as bytes and 64-bit keys: text read in bulk from Arrow buffers or one joined string."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import zip_longest

import numpy as np

try:  # pandas keeps text in Arrow buffers when pyarrow is installed; we read those buffers directly
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError:  # pragma: no cover - exercised only where pyarrow is absent
    pa = None
    pc = None

_MASK64 = (1 << 64) - 1
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)
_BYTE_MASKS = np.array([0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [_MASK64], dtype=np.uint64)
_SHORT_TEXT = 64  # bytes hashed with whole-column passes; longer tails are folded in row by row
_BLOCK = 1 << 15  # rows per vectorised pass: small enough for the temporaries to stay in cache
_PAD_WORDS = _SHORT_TEXT // 8 + 3  # zero words after the data, so reads past a short last string stay inside


# ---------------------------------------------------------------------------------------------------
# Text as bytes


class _Bytes:
    """UTF-8 bytes of n strings, read 8 bytes at a time with vectorised, cache-sized passes.

    The bytes sit in aligned 64-bit words; the 8 bytes at any offset are two neighbouring words shifted
    together, and bytes past a string's end are masked off, so each string's words depend on that
    string alone.
    """

    def __init__(self, words: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> None:
        self.words = words
        self.starts = starts
        self.lens = lens
        self.maxlen = int(lens.max()) if len(lens) else 0

    @staticmethod
    def from_arrow(array: pa.Array | pa.ChunkedArray) -> _Bytes:
        if isinstance(array, pa.ChunkedArray):  # combined only here: comparisons work chunk-wise
            array = array.combine_chunks()
        offset_type: type[np.signedinteger] = np.int32 if array.type == pa.string() else np.int64
        buffers = array.buffers()
        size = np.dtype(offset_type).itemsize
        offsets = np.frombuffer(buffers[1], dtype=offset_type, count=len(array) + 1, offset=array.offset * size)
        end = int(offsets[-1]) if len(offsets) else 0
        needed = end // 8 + _PAD_WORDS
        data = buffers[2]
        if data is not None and data.address % 8 == 0 and data.size >= needed * 8:
            words = np.frombuffer(data, dtype=np.uint64, count=needed)  # zero-copy; bytes past the end are masked
        else:
            words = np.zeros(needed, dtype=np.uint64)
            if end:
                words.view(np.uint8)[:end] = np.frombuffer(data, dtype=np.uint8, count=end)
        return _Bytes(words, offsets[:-1], offsets[1:] - offsets[:-1])

    @staticmethod
    def join(values: np.ndarray) -> bytes | None:
        """All strings joined by NUL and UTF-8 encoded (None if a value is not a str)."""
        try:
            return "\0".join(values).encode("utf-8", "surrogatepass")
        except TypeError:
            return None

    @staticmethod
    def from_joined(joined: bytes, n: int) -> _Bytes | None:
        """From :meth:`join`'s output for n strings (None if a string itself contains a NUL)."""
        if n == 0:
            return _Bytes(np.zeros(_PAD_WORDS, dtype=np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        data = np.frombuffer(joined, dtype=np.uint8)
        separators = np.flatnonzero(data == 0)
        if len(separators) != n - 1:
            return None
        starts = np.empty(n, dtype=np.int64)
        starts[0] = 0
        starts[1:] = separators + 1
        ends = np.empty(n, dtype=np.int64)
        ends[:-1] = separators
        ends[-1] = len(data)
        words = np.zeros(len(data) // 8 + _PAD_WORDS, dtype=np.uint64)
        words.view(np.uint8)[: len(data)] = data
        return _Bytes(words, starts, ends - starts)

    def raw(self, row: int) -> bytes:
        start = int(self.starts[row])
        return self.words.view(np.uint8)[start : start + int(self.lens[row])].tobytes()

    def _block_words(self, starts: np.ndarray, lens: np.ndarray, count: int) -> Iterator[np.ndarray]:
        """Words 0..count-1 (bytes 8k..8k+7, zero past the end) of the strings at ``starts``/``lens``."""
        q = (starts >> 3).astype(np.intp)
        lo = ((starts & 7) << 3).astype(np.uint64)
        hi = np.uint64(64) - lo  # a shift by 64 gives 0 in NumPy
        current = self.words[q]
        for k in range(count):
            word = current >> lo
            q += 1
            current = self.words[q]
            word |= current << hi
            remaining = lens - 8 * k
            np.clip(remaining, 0, 8, out=remaining)
            word &= _BYTE_MASKS[remaining]
            yield word

    def hash(self) -> np.ndarray:
        n = len(self.lens)
        count = (min(self.maxlen, _SHORT_TEXT) + 7) // 8
        out = np.empty(n, dtype=np.uint64)
        for first in range(0, n, _BLOCK):
            last = min(n, first + _BLOCK)
            lens = self.lens[first:last]
            h = lens.astype(np.uint64) * _K1
            for k, word in enumerate(self._block_words(self.starts[first:last], lens, count)):
                # only words inside a string enter its hash, so the hash never depends on the column
                mixed = h ^ word
                mixed *= _K2
                mixed ^= mixed >> np.uint64(29)
                if k == 0:
                    h = mixed
                else:
                    np.copyto(h, mixed, where=lens > 8 * k)
            if self.maxlen > _SHORT_TEXT:  # rare: fold in the tails of long strings row by row
                for row in np.flatnonzero(lens > _SHORT_TEXT):
                    tail = hash(self.raw(first + int(row))[_SHORT_TEXT:]) & _MASK64
                    h[row] ^= np.uint64(tail)
            out[first:last] = _mix(h)
        return out

    def equal_rows(self, rows: np.ndarray | None, other: _Bytes, other_rows: np.ndarray) -> np.ndarray:
        """Exact byte equality of self[rows[k]] and other[other_rows[k]] (rows None: every row in order)."""
        n = len(other_rows)
        same = np.empty(n, dtype=bool)
        mine_count = (min(self.maxlen, _SHORT_TEXT) + 7) // 8
        their_count = (min(other.maxlen, _SHORT_TEXT) + 7) // 8
        for first in range(0, n, _BLOCK):
            last = min(n, first + _BLOCK)
            if rows is None:
                mine_starts, mine_lens = self.starts[first:last], self.lens[first:last]
            else:
                block = rows[first:last]
                mine_starts, mine_lens = self.starts[block], self.lens[block]
            block = other_rows[first:last]
            their_starts, their_lens = other.starts[block], other.lens[block]
            equal = mine_lens == their_lens
            pairs = zip_longest(  # past a side's longest string its words are all zero
                self._block_words(mine_starts, mine_lens, mine_count),
                other._block_words(their_starts, their_lens, their_count),
                fillvalue=np.uint64(0),
            )
            for a, b in pairs:
                equal &= a == b
            same[first:last] = equal
        if max(self.maxlen, other.maxlen) > _SHORT_TEXT:
            mine_lens = self.lens if rows is None else self.lens[rows]
            for k in np.flatnonzero(same & (mine_lens > _SHORT_TEXT)):
                mine_row = int(k) if rows is None else int(rows[k])
                same[k] = self.raw(mine_row) == other.raw(int(other_rows[k]))
        return same


def _mix(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint64(30)
    h *= _K2
    h ^= h >> np.uint64(27)
    h *= _K3
    h ^= h >> np.uint64(31)
    return h
