"""Matching a submission's ids to the answers' ids: fast, and with the reference's semantics.

The reference aligns the two frames by sorting both on the id column and then either requires the
sorted id sequences to be equal element by element, or simply pairs rows by sorted position. When the
answers' ids are unique, "the sorted sequences are equal" is the same as "the submission's ids are a
permutation of the answers' ids", and the pairing is then by equal id whatever the sort algorithm. That
is what :func:`match_permutation` decides, without sorting text:

* If both id columns are equal row by row (a submission in the sample submission's order), the pairing
  is the identity: one vectorised comparison.
* Otherwise every id gets a 64-bit key (exact for integers, a hash of the UTF-8 bytes for text), keys
  packed with the row number are sorted with NumPy's integer sort, and the pairing found is verified
  exactly (hash collisions are resolved by comparing the actual values).

Text is read as bytes in bulk: from pandas' Arrow buffers when pyarrow is installed, otherwise from one
``'\\0'.join`` of the Python strings. Either way no per-row Python work is done on the usual path.

Only where the answers themselves repeat an id (detecting-insults uses the comment text as the id), or
where the reference pairs rows positionally without requiring equal ids (new-york-city-taxi's weak
check, jigsaw's index alignment with repeated ids), does the exact order of the reference's sort matter.
There :func:`reference_sort_order` reproduces pandas 2.2's ``sort_values``: NumPy's (introsort)
quicksort over the values as Python objects, missing values last. NumPy's object quicksort is unchanged
between 1.26 and 2.x, and for numbers it is also what NumPy 1.26 ran on CPUs without AVX-512.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import zip_longest

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._checks import MAX_EXAMPLES, plural, show, show_many

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


class AnswersHaveDuplicateIds(Exception):
    """The answers repeat an id, so only the reference's exact sort can say how rows pair up."""


@dataclass(frozen=True)
class Pairing:
    """Which submission row goes with which answers row: pair k is (sub_rows[k], ans_rows[k]).

    ``None`` stands for "all rows, in order".
    """

    sub_rows: np.ndarray | None
    ans_rows: np.ndarray | None

    @staticmethod
    def take(values, rows: np.ndarray | None):
        return values if rows is None else values[rows]


IDENTITY = Pairing(None, None)


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
    def from_arrow(array) -> _Bytes:
        if isinstance(array, pa.ChunkedArray):  # combined only here: comparisons work chunk-wise
            array = array.combine_chunks()
        offset_type = np.int32 if array.type == pa.string() else np.int64
        buffers = array.buffers()
        size = np.dtype(offset_type).itemsize
        offsets = np.frombuffer(
            buffers[1], dtype=offset_type, count=len(array) + 1, offset=array.offset * size
        )
        end = int(offsets[-1]) if len(offsets) else 0
        needed = end // 8 + _PAD_WORDS
        data = buffers[2]
        if data is not None and data.address % 8 == 0 and data.size >= needed * 8:
            words = np.frombuffer(
                data, dtype=np.uint64, count=needed
            )  # zero-copy; bytes past the end are masked
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

    def _block_words(self, starts: np.ndarray, lens: np.ndarray, count: int):
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


# ---------------------------------------------------------------------------------------------------
# Normalised id columns


@dataclass
class _Ids:
    kind: str  # "int", "float", "str" or "object" (mixed Python values)
    n: int
    num: np.ndarray | None = None  # int64 or float64 values
    arrow: object | None = None  # pyarrow string array (may hold nulls)
    obj: np.ndarray | None = None  # object values, missing as NaN
    missing: np.ndarray | None = None  # bool, computed lazily for text
    _bytes: _Bytes | None = field(default=None, repr=False)
    _bytes_tried: bool = field(default=False, repr=False)
    _joined: bytes | None = field(default=None, repr=False)
    _joined_tried: bool = field(default=False, repr=False)

    def joined(self) -> bytes | None:
        """Python-storage text joined into one byte string (None if not all values are str)."""
        if not self._joined_tried:
            self._joined_tried = True
            if self.kind == "str" and self.arrow is None:
                self._joined = _Bytes.join(self.obj)
        return self._joined

    def text_bytes(self) -> _Bytes | None:
        """The text as bytes, or None when that is not possible (missing values, non-str objects)."""
        if not self._bytes_tried:
            self._bytes_tried = True
            if self.kind == "str":
                if self.arrow is not None:
                    self._bytes = None if self.arrow.null_count else _Bytes.from_arrow(self.arrow)
                elif self.joined() is not None:
                    self._bytes = _Bytes.from_joined(self.joined(), self.n)
        return self._bytes

    def missing_mask(self) -> np.ndarray:
        if self.missing is None:
            if self.arrow is not None:
                self.missing = (
                    np.asarray(self.arrow.is_null().to_numpy(zero_copy_only=False), dtype=bool)
                    if self.arrow.null_count
                    else np.zeros(self.n, dtype=bool)
                )
            elif self.text_bytes() is not None:
                self.missing = np.zeros(self.n, dtype=bool)
            else:
                self.missing = np.asarray(pd.isna(self.obj), dtype=bool)
        return self.missing

    def objects(self) -> np.ndarray:
        if self.obj is None:
            if self.num is not None:
                self.obj = self.num.astype(object)
            else:
                self.obj = np.asarray(self.arrow.to_numpy(zero_copy_only=False), dtype=object)
                if self.arrow.null_count:
                    self.obj[self.missing_mask()] = np.nan
        return self.obj

    def values_at(self, rows: np.ndarray) -> list:
        """Python values of a few rows, without converting the whole column."""
        if self.num is not None:
            return self.num[rows].tolist()
        if self.arrow is not None:
            return self.arrow.take(pa.array(rows)).to_pylist()
        return self.obj[rows].tolist()


def _arrow_array(series: pd.Series):
    if pa is None:
        return None
    array = getattr(series.array, "_pa_array", None)
    if array is None:
        return None
    if isinstance(array, pa.ChunkedArray) and array.num_chunks == 1:
        array = array.chunk(0)
    if array.type not in (pa.string(), pa.large_string()):
        try:
            array = array.cast(pa.large_string())
        except Exception:  # noqa: BLE001
            return None
    return array


def _ids_of(series: pd.Series) -> _Ids:
    n = len(series)
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        if series.hasnans:
            return _float_ids(series.to_numpy(dtype=np.float64, na_value=np.nan))
        return _Ids("int", n, num=series.to_numpy(dtype=np.int64), missing=np.zeros(n, dtype=bool))
    if pd.api.types.is_float_dtype(dtype):
        return _float_ids(series.to_numpy(dtype=np.float64, na_value=np.nan))
    arrow = _arrow_array(series)
    if arrow is not None:
        return _Ids("str", n, arrow=arrow)
    if isinstance(dtype, pd.StringDtype):
        backing = getattr(series.array, "_ndarray", None)  # Python-storage strings: no conversion pass
        if isinstance(backing, np.ndarray) and backing.dtype == object:
            return _Ids("str", n, obj=backing)
        return _Ids("str", n, obj=series.to_numpy(dtype=object, na_value=np.nan))
    obj = series.to_numpy(dtype=object) if dtype == object else series.to_numpy(dtype=object, na_value=np.nan)
    inferred = pd.api.types.infer_dtype(obj, skipna=True)
    return _Ids("str" if inferred in ("string", "empty") else "object", n, obj=obj)


def _float_ids(values: np.ndarray) -> _Ids:
    n = len(values)
    missing = np.isnan(values)
    if (
        not missing.any()
        and np.isfinite(values).all()
        and (np.abs(values) < 2.0**63).all()
        and (np.floor(values) == values).all()
    ):
        return _Ids("int", n, num=values.astype(np.int64), missing=missing)
    return _Ids("float", n, num=values, missing=missing)


def _is_numeric(ids: _Ids) -> bool:
    return ids.kind in ("int", "float")


def _comparable(a: _Ids, b: _Ids) -> bool:
    return _is_numeric(a) == _is_numeric(b)


def _prepare_pair(s: _Ids, a: _Ids) -> tuple[_Ids, _Ids]:
    """Bring two comparable id columns to the same representation."""
    if _is_numeric(s) and _is_numeric(a) and s.kind != a.kind:
        if s.kind == "int":
            s = _Ids("float", s.n, num=s.num.astype(np.float64), missing=s.missing)
        else:
            a = _Ids("float", a.n, num=a.num.astype(np.float64), missing=a.missing)
    elif not _is_numeric(s) and (s.text_bytes() is None or a.text_bytes() is None):
        s = _Ids("object", s.n, obj=s.objects(), missing=s.missing_mask())
        a = _Ids("object", a.n, obj=a.objects(), missing=a.missing_mask())
    return s, a


# ---------------------------------------------------------------------------------------------------
# Keys, identity and exact pair checks


def _identical(s: _Ids, a: _Ids) -> bool:
    if s.n != a.n:
        return False
    if s.num is not None:
        return bool(np.array_equal(s.num, a.num))
    if s.arrow is not None and a.arrow is not None:
        if s.arrow.null_count or a.arrow.null_count:
            return False
        equal = pc.equal(s.arrow, a.arrow)
        return equal.null_count == 0 and bool(pc.all(equal).as_py() if len(equal) else True)
    if s.joined() is not None and a.joined() is not None and s.text_bytes() is not None:
        return s.joined() == a.joined()  # same strings in the same order (NUL-free, so unambiguous)
    sb, ab = s.text_bytes(), a.text_bytes()
    if sb is not None and ab is not None:
        return bool(sb.equal_rows(None, ab, np.arange(a.n)).all())
    if s.missing_mask().any():
        return False
    return bool(np.asarray(s.objects() == a.objects(), dtype=bool).all())


def _quick_identical(s: _Ids, a: _Ids) -> bool:
    """Row-by-row equality of two text columns, straight from their storage."""
    if s.kind != "str" or a.kind != "str":
        return False
    if s.arrow is not None and a.arrow is not None:
        return _identical(s, a)
    if s.arrow is None and a.arrow is None:
        joined = s.joined()
        return joined is not None and joined == a.joined() and joined.count(b"\0") == s.n - 1
    return False


def _hash(ids: _Ids) -> np.ndarray:
    if ids.kind == "int":
        return _mix(ids.num.view(np.uint64).copy())
    if ids.kind == "float":
        return _mix((ids.num + 0.0).view(np.uint64).copy())  # -0.0 and 0.0 are the same id
    if ids.text_bytes() is not None:
        return ids.text_bytes().hash()
    return pd.util.hash_array(ids.objects(), categorize=False)


def _equal_at(s: _Ids, a: _Ids, s_rows: np.ndarray | None, a_rows: np.ndarray) -> np.ndarray:
    """Exact equality, with the reference's ``==``, of s[s_rows[k]] and a[a_rows[k]]."""
    if s.num is not None:
        return np.asarray(Pairing.take(s.num, s_rows) == a.num[a_rows], dtype=bool)
    if s.text_bytes() is not None and a.text_bytes() is not None:
        return s.text_bytes().equal_rows(s_rows, a.text_bytes(), a_rows)
    return np.asarray(Pairing.take(s.objects(), s_rows) == a.objects()[a_rows], dtype=bool)


def _exact_key_range(s: _Ids, a: _Ids) -> int | None:
    """For integer ids, the smallest id when ``id - smallest`` fits in the key space, else None."""
    if s.kind != "int" or a.kind != "int" or s.n == 0:
        return None
    low = min(int(s.num.min()), int(a.num.min()))
    high = max(int(s.num.max()), int(a.num.max()))
    if high - low < (1 << (64 - _index_bits(max(s.n, a.n)))):
        return low
    return None


def _same_tops(x: np.ndarray, y: np.ndarray, bits: int) -> bool:
    """Whether two packed arrays agree on every key (their bits above the row number)."""
    step = _BLOCK * 8
    return all(
        not ((x[i : i + step] ^ y[i : i + step]) >> np.uint64(bits)).any() for i in range(0, len(x), step)
    )


def _adjacent_equal_tops(x: np.ndarray, bits: int) -> np.ndarray:
    """Positions i where packed x[i] and x[i + 1] carry the same key."""
    step = _BLOCK * 8
    found = []
    for i in range(0, len(x) - 1, step):
        j = min(len(x) - 1, i + step)
        same = ((x[i:j] ^ x[i + 1 : j + 1]) >> np.uint64(bits)) == 0
        found.append(np.flatnonzero(same) + i)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _index_bits(n: int) -> int:
    return max(1, (max(n, 2) - 1).bit_length())


def _packed_sort(keys: np.ndarray, bits: int) -> np.ndarray:
    """Sort (key's top 64-bits bits, row) pairs packed into one uint64 each."""
    packed = keys >> np.uint64(bits)
    packed <<= np.uint64(bits)
    packed |= np.arange(len(keys), dtype=np.uint64)
    packed.sort()
    return packed


# ---------------------------------------------------------------------------------------------------
# Public API


def match_permutation(sub_ids: pd.Series, ans_ids: pd.Series) -> np.ndarray | None | bool:
    """How the submission's ids map onto the answers' ids.

    Returns ``True`` when the two columns are equal row by row (identity pairing), an index array ``p``
    with submission row i ↔ answers row p[i] when the submission's ids are a permutation of the answers'
    ids, and ``None`` when they are not. Raises :class:`AnswersHaveDuplicateIds` when the submission's ids
    have the same multiset as answers that repeat an id.
    """
    s, a = _ids_of(sub_ids), _ids_of(ans_ids)
    if s.n != a.n or not _comparable(s, a):
        return None
    if s.n == 0:
        return True
    if _quick_identical(s, a):
        return True  # the usual case (the sample submission's order), checked before any other work
    s, a = _prepare_pair(s, a)
    if s.kind == "object" and (s.missing_mask().any() or a.missing_mask().any()):
        return None
    if _is_numeric(s) and (s.missing.any() or a.missing.any()):
        return None
    if _identical(s, a):
        return True
    n = s.n
    bits = _index_bits(n)
    row_mask = np.uint64((1 << bits) - 1)
    low = _exact_key_range(s, a)
    if low is not None:
        offset = np.uint64(low & _MASK64)
        # exact keys: (id - smallest) in the high bits, the row number in the low bits
        s_keys = _packed_sort((s.num.view(np.uint64) - offset) << np.uint64(bits), 0)
        a_keys = _packed_sort((a.num.view(np.uint64) - offset) << np.uint64(bits), 0)
        if not _same_tops(s_keys, a_keys, bits):
            return None
        if len(_adjacent_equal_tops(a_keys, bits)):
            raise AnswersHaveDuplicateIds
        perm = np.empty(n, dtype=np.intp)
        perm[(s_keys & row_mask).astype(np.intp)] = (a_keys & row_mask).astype(np.intp)
        return perm
    s_hash = _hash(s)
    s_sorted = _packed_sort(s_hash, bits)
    a_sorted = _packed_sort(_hash(a), bits)
    if not _same_tops(s_sorted, a_sorted, bits):
        return None
    # Equal hashes within the answers: a collision, or a repeated id.
    collided = _adjacent_equal_tops(a_sorted, bits)
    if len(collided):
        first_rows = (a_sorted[collided] & row_mask).astype(np.intp)
        next_rows = (a_sorted[collided + 1] & row_mask).astype(np.intp)
        if _equal_at(a, a, first_rows, next_rows).any():
            raise AnswersHaveDuplicateIds
    perm = np.empty(n, dtype=np.intp)
    for first in range(0, n, _BLOCK * 8):  # in slices, to keep temporaries small
        last = min(n, first + _BLOCK * 8)
        perm[(s_sorted[first:last] & row_mask).astype(np.intp)] = (a_sorted[first:last] & row_mask).astype(
            np.intp
        )
    same = _equal_at(s, a, None, perm)
    if not same.all():
        perm = _resolve_collisions(s, a, perm, same, s_hash, s_sorted, a_sorted, bits)
    return perm


def _resolve_collisions(s, a, perm, same, s_hash, s_sorted, a_sorted, bits) -> np.ndarray | None:
    """Re-pair rows whose (truncated) hashes collide by comparing the actual values."""
    row_mask = np.uint64((1 << bits) - 1)
    changed: list[int] = []
    done_groups: set[int] = set()
    for row in np.flatnonzero(~same):
        low_key = (s_hash[row] >> np.uint64(bits)) << np.uint64(bits)  # the group's smallest packed value
        lo = int(np.searchsorted(s_sorted, low_key, side="left"))
        if lo in done_groups:
            continue
        done_groups.add(lo)
        hi = int(np.searchsorted(s_sorted, low_key | row_mask, side="right"))
        sub_group = (s_sorted[lo:hi] & row_mask).astype(np.intp)
        ans_group = (a_sorted[lo:hi] & row_mask).astype(np.intp)
        unused: dict = {}
        for a_row, value in zip(ans_group.tolist(), a.values_at(ans_group)):
            unused.setdefault(value, []).append(a_row)
        for s_row, value in zip(sub_group.tolist(), s.values_at(sub_group)):
            bucket = unused.get(value)
            if not bucket:
                return None
            perm[s_row] = bucket.pop()
            changed.append(s_row)
    rows = np.asarray(changed, dtype=np.intp)
    if not _equal_at(s, a, rows, perm[rows]).all():
        return None
    return perm


def reference_sort_order(ids: pd.Series, *, skip_if_sorted: bool = False) -> np.ndarray:
    """Row order of pandas 2.2's ``sort_values`` on this column (or ``sort_index`` with skip_if_sorted).

    Raises InvalidSubmission when the values cannot be ordered (text mixed with numbers).
    """
    values = _ids_of(ids).objects()
    missing = np.asarray(pd.isna(values), dtype=bool)
    positions = np.arange(len(values))
    present = values[~missing]
    try:
        if skip_if_sorted and not missing.any() and _is_sorted(present):
            return positions
        order = np.argsort(present, kind="quicksort")
    except TypeError:
        raise InvalidSubmission(
            "the id column mixes text and numbers, so its rows cannot be ordered; "
            "write every id exactly as in the sample submission"
        ) from None
    return np.concatenate([positions[~missing][order], positions[missing]])


def _is_sorted(values: np.ndarray) -> bool:
    if len(values) < 2:
        return True
    try:
        return bool(np.all(values[:-1] <= values[1:]))
    except TypeError:
        return False


def id_objects(ids: pd.Series) -> np.ndarray:
    """The ids as Python objects (missing as NaN), as the reference's object arrays hold them."""
    return _ids_of(ids).objects()


def ids_equal_elementwise(sub_ids: np.ndarray, ans_ids: np.ndarray) -> bool:
    """The reference's ``(a.values != b.values).any()`` test, negated, on object arrays."""
    if len(sub_ids) != len(ans_ids):
        return False
    return bool(np.all(np.asarray(sub_ids == ans_ids, dtype=bool)))


def pair_by_sorted_ids(submission: pd.DataFrame, answers: pd.DataFrame, id_column: str) -> Pairing:
    """Rows paired as the reference pairs them after sorting both frames by id, requiring equal ids.

    Raises InvalidSubmission (with counts and examples of missing, unknown and repeated ids) when the
    sorted id sequences differ.
    """
    sub_ids, ans_ids = submission[id_column], answers[id_column]
    try:
        match = match_permutation(sub_ids, ans_ids)
    except AnswersHaveDuplicateIds:
        sub_order = reference_sort_order(sub_ids)
        ans_order = reference_sort_order(ans_ids)
        if not ids_equal_elementwise(id_objects(sub_ids)[sub_order], id_objects(ans_ids)[ans_order]):
            raise InvalidSubmission(describe_id_mismatch(sub_ids, ans_ids, id_column)) from None
        return Pairing(sub_order, ans_order)
    if match is None:
        raise InvalidSubmission(describe_id_mismatch(sub_ids, ans_ids, id_column))
    if match is True:
        return IDENTITY
    return Pairing(None, match)


def pair_by_sorted_position(submission: pd.DataFrame, answers: pd.DataFrame, id_column: str) -> Pairing:
    """Rows paired by position after sorting both frames by id, with no check that the ids agree."""
    sub_ids, ans_ids = submission[id_column], answers[id_column]
    try:
        match = match_permutation(sub_ids, ans_ids)
    except AnswersHaveDuplicateIds:
        match = None
    if match is True:
        return IDENTITY
    if match is not None:
        return Pairing(None, match)
    return Pairing(reference_sort_order(sub_ids), reference_sort_order(ans_ids))


def in_reference_order(
    pairing: Pairing, answers: pd.DataFrame, id_column: str, *, limit: int = 250_000
) -> Pairing:
    """The same pairs, listed in the order of the answers sorted by id (the reference's row order).

    Metrics that average floats (log loss, RMSE) then add them up in exactly the reference's order, so
    even the last bit agrees. Above ``limit`` rows the cost of sorting text ids is not worth it: the
    order changes a float sum only in its last bits, far below the 5 decimals a score is rounded to.
    """
    if pairing.sub_rows is not None and pairing.ans_rows is not None:
        return pairing  # already in the reference's sorted order
    n = len(answers)
    if n > limit:
        return pairing
    ans_order = reference_sort_order(answers[id_column])
    if pairing.ans_rows is None:  # identity
        return Pairing(ans_order, ans_order)
    sub_of_answer = np.empty(n, dtype=np.intp)
    sub_of_answer[pairing.ans_rows] = np.arange(n)
    return Pairing(sub_of_answer[ans_order], ans_order)


# ---------------------------------------------------------------------------------------------------
# Messages


def describe_id_mismatch(sub_ids: pd.Series, ans_ids: pd.Series, id_column: str) -> str:
    """Why the submission's ids are not the answers' ids: counts and examples."""
    s, a = _ids_of(sub_ids), _ids_of(ans_ids)
    head = f"the ids in column {show(id_column)} do not match the test set"
    hint = (
        "Submit exactly one row for each id of the sample submission, with the ids written exactly as there"
    )
    if s.n and a.n and not _comparable(s, a):
        s_missing = s.missing_mask()
        example_s = (
            show(s.values_at(np.flatnonzero(~s_missing)[:1])[0]) if (~s_missing).any() else "empty cells"
        )
        example_a = show(a.values_at(np.arange(1))[0])
        what_s = "numbers" if _is_numeric(s) else "text"
        what_a = "numbers" if _is_numeric(a) else "text"
        return (
            f"{head}: the submission's ids are {what_s} (e.g. {example_s}) but the test ids are "
            f"{what_a} (e.g. {example_a}). {hint}"
        )
    parts = []
    if s.n != a.n:
        parts.append(f"the submission has {plural(s.n, 'row')} but the test set has {plural(a.n, 'id')}")
    s_missing = s.missing_mask()
    if s_missing.any():
        empty = np.flatnonzero(s_missing)
        rows = ", ".join(f"row {int(p) + 1}" for p in empty[:MAX_EXAMPLES])
        parts.append(f"{plural(len(empty), 'row')} {'has' if len(empty) == 1 else 'have'} no id ({rows})")
    s_orig, a_orig = s, a
    s, a = _prepare_pair(s, a)
    s_hash, a_hash = _hash(s), _hash(a)
    present = ~s.missing_mask()
    a_keys, a_counts = np.unique(a_hash, return_counts=True)
    s_keys, s_counts = np.unique(s_hash[present], return_counts=True)
    # how often each answers id occurs in the submission, and each submission id in the answers
    where = np.searchsorted(s_keys, a_hash).clip(0, max(len(s_keys) - 1, 0))
    found_in_sub = np.zeros(len(a_hash), dtype=np.int64)
    if len(s_keys):
        hit = s_keys[where] == a_hash
        found_in_sub[hit] = s_counts[where[hit]]
    expected_in_ans = a_counts[np.searchsorted(a_keys, a_hash)]
    absent = np.flatnonzero(found_in_sub < expected_in_ans)
    where = np.searchsorted(a_keys, s_hash).clip(0, max(len(a_keys) - 1, 0))
    in_answers = (a_keys[where] == s_hash) & present if len(a_keys) else np.zeros(len(s_hash), dtype=bool)
    unknown = np.flatnonzero(present & ~in_answers)
    allowed = np.where(in_answers, a_counts[where] if len(a_keys) else 0, 0)
    sub_count = np.zeros(len(s_hash), dtype=np.int64)
    sub_count[present] = s_counts[np.searchsorted(s_keys, s_hash[present])]
    over = np.flatnonzero(in_answers & (sub_count > allowed))
    if len(absent):
        parts.append(
            f"{plural(len(absent), 'test id')} {'is' if len(absent) == 1 else 'are'} missing "
            f"(e.g. {show_many(a_orig.values_at(absent[:MAX_EXAMPLES]))})"
        )
    if len(unknown):
        shown = ", ".join(
            f"{show(v)} in row {int(r) + 1}"
            for v, r in zip(s_orig.values_at(unknown[:MAX_EXAMPLES]), unknown)
        )
        parts.append(
            f"{plural(len(unknown), 'id')} {'is' if len(unknown) == 1 else 'are'} not in the test set (e.g. {shown})"
        )
    if len(over):
        repeated_keys, first_rows = np.unique(s_hash[over], return_index=True)
        examples = []
        for key, row in list(zip(repeated_keys.tolist(), over[first_rows].tolist()))[:MAX_EXAMPLES]:
            examples.append(f"{show(s_orig.values_at(np.array([row]))[0])} {int(sub_count[row])} times")
        parts.append(
            f"{plural(len(repeated_keys), 'id')} {'appears' if len(repeated_keys) == 1 else 'appear'} more often "
            f"than in the test set (e.g. {', '.join(examples)})"
        )
    if not parts:
        parts.append("the sorted id sequences differ")
    if len(unknown) and len(absent):
        hint += _spelling_hint(s.values_at(unknown[:1])[0], a.values_at(absent[:50]))
    return f"{head}: " + "; ".join(parts) + f". {hint}"


def _spelling_hint(unknown, candidates) -> str:
    text = str(unknown)
    for candidate in candidates:
        c = str(candidate)
        if text.strip() == c:
            return f" (watch for spaces: {show(unknown)} should be {show(candidate)})"
        if text.lower() == c.lower():
            return f" (ids are case-sensitive: {show(unknown)} should be {show(candidate)})"
        if text.rsplit(".", 1)[0] == c or c.rsplit(".", 1)[0] == text:
            return f" (file extensions matter: {show(unknown)} vs {show(candidate)} in the sample submission)"
    return ""
