"""64-bit keys for ids, and exact checks that two id columns are the same."""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.graders.ids.columns import Pairing, _Ids
from grading.engine.graders.ids.text import _BLOCK, _mix, pc

# ---------------------------------------------------------------------------------------------------
# Keys, identity and exact pair checks


def _identical(s: _Ids, a: _Ids) -> bool:
    if s.n != a.n:
        return False
    if s.num is not None:
        return a.num is not None and bool(np.array_equal(s.num, a.num))
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
    if ids.kind in ("int", "float"):
        assert ids.num is not None  # numeric columns always hold num
        if ids.kind == "int":
            return _mix(ids.num.view(np.uint64).copy())
        return _mix((ids.num + 0.0).view(np.uint64).copy())  # -0.0 and 0.0 are the same id
    text = ids.text_bytes()
    if text is not None:
        return text.hash()
    return pd.util.hash_array(ids.objects(), categorize=False)


def _equal_at(s: _Ids, a: _Ids, s_rows: np.ndarray | None, a_rows: np.ndarray) -> np.ndarray:
    """Exact equality, with the reference's ``==``, of s[s_rows[k]] and a[a_rows[k]]."""
    if s.num is not None:
        assert a.num is not None  # a pair is prepared to the same representation
        return np.asarray(Pairing.take(s.num, s_rows) == a.num[a_rows], dtype=bool)
    s_text = s.text_bytes()
    a_text = a.text_bytes() if s_text is not None else None
    if s_text is not None and a_text is not None:
        return s_text.equal_rows(s_rows, a_text, a_rows)
    return np.asarray(Pairing.take(s.objects(), s_rows) == a.objects()[a_rows], dtype=bool)


def _exact_key_range(s: _Ids, a: _Ids) -> int | None:
    """For integer ids, the smallest id when ``id - smallest`` fits in the key space, else None."""
    if s.kind != "int" or a.kind != "int" or s.n == 0:
        return None
    assert s.num is not None and a.num is not None  # "int" columns always hold num
    low = min(int(s.num.min()), int(a.num.min()))
    high = max(int(s.num.max()), int(a.num.max()))
    if high - low < (1 << (64 - _index_bits(max(s.n, a.n)))):
        return low
    return None


def _same_tops(x: np.ndarray, y: np.ndarray, bits: int) -> bool:
    """Whether two packed arrays agree on every key (their bits above the row number)."""
    step = _BLOCK * 8
    return all(not ((x[i : i + step] ^ y[i : i + step]) >> np.uint64(bits)).any() for i in range(0, len(x), step))


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
