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

from typing import Literal

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders.ids.columns import (
    IDENTITY,
    AnswersHaveDuplicateIds,
    Pairing,
    _comparable,
    _Ids,
    _ids_of,
    _is_numeric,
    _prepare_pair,
)
from grading.engine.graders.ids.keys import (
    _adjacent_equal_tops,
    _equal_at,
    _exact_key_range,
    _hash,
    _identical,
    _index_bits,
    _packed_sort,
    _quick_identical,
    _same_tops,
)
from grading.engine.graders.ids.messages import describe_id_mismatch
from grading.engine.graders.ids.text import _BLOCK, _MASK64, _Bytes

__all__ = [
    "IDENTITY",
    "AnswersHaveDuplicateIds",
    "Pairing",
    "_Bytes",
    "describe_id_mismatch",
    "id_objects",
    "ids_equal_elementwise",
    "in_reference_order",
    "match_permutation",
    "pair_by_sorted_ids",
    "pair_by_sorted_position",
    "reference_sort_order",
]


# ---------------------------------------------------------------------------------------------------
# Public API


def match_permutation(sub_ids: pd.Series, ans_ids: pd.Series) -> np.ndarray | Literal[True] | None:
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
    if _is_numeric(s) and (s.missing_mask().any() or a.missing_mask().any()):  # numeric: missing is always set
        return None
    if _identical(s, a):
        return True
    n = s.n
    bits = _index_bits(n)
    row_mask = np.uint64((1 << bits) - 1)
    low = _exact_key_range(s, a)
    if low is not None:
        assert s.num is not None and a.num is not None  # exact keys are for "int" columns, which hold num
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
        perm[(s_sorted[first:last] & row_mask).astype(np.intp)] = (a_sorted[first:last] & row_mask).astype(np.intp)
    same = _equal_at(s, a, None, perm)
    if not same.all():
        return _resolve_collisions(s, a, perm, same, s_hash, s_sorted, a_sorted, bits)
    return perm


def _resolve_collisions(
    s: _Ids,
    a: _Ids,
    perm: np.ndarray,
    same: np.ndarray,
    s_hash: np.ndarray,
    s_sorted: np.ndarray,
    a_sorted: np.ndarray,
    bits: int,
) -> np.ndarray | None:
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


def in_reference_order(pairing: Pairing, answers: pd.DataFrame, id_column: str, *, limit: int = 250_000) -> Pairing:
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
