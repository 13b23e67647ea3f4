"""Kendall tau between predicted and true orders of items (AI4Code's notebook cells), pooled over all rows.

Each row holds an order as text: item ids separated by whitespace. The reference turns both cells into text
(``str``, so an empty cell is ``'nan'``), splits them with Python's ``str.split()``, and for each predicted
item takes ``truth.index(item)``, its position in the true order (the first one, should an id repeat). The
inversions of that rank sequence, summed over rows, give ``1 - 4 * inversions / sum(n * (n - 1))``.

Ranks are looked up with one dictionary per row (built and queried by C-level builtins, no per-item Python
code), and the inversions of all rows are counted at once: ranks are offset by where each row starts, so
items of different rows never form an inversion and one merge-sort count over the whole concatenation is
the sum over rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from itertools import chain, repeat

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import MAX_EXAMPLES, RowIds, plural, row_label, show

_BRUTE_BLOCK = 32


def text_cells(series: pd.Series) -> list[str]:
    """The column's cells as pandas 2.2's ``astype(str)`` writes them (an empty cell becomes ``'nan'``)."""
    if pd.api.types.is_float_dtype(series.dtype):
        return [str(v) for v in series.to_numpy(dtype=np.float64, na_value=np.nan).tolist()]
    values = series.to_numpy(dtype=object, na_value=np.nan).tolist()
    return [v if isinstance(v, str) else ("nan" if _is_missing(v) else str(v)) for v in values]


def _is_missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def count_inversions(values: np.ndarray) -> int:
    """The number of pairs ``i < j`` with ``values[i] > values[j]`` (equal values are not an inversion).

    A bottom-up merge sort, vectorised over all blocks of a level: blocks of 32 are counted by brute force
    and sorted, then each level merges every pair of neighbouring sorted blocks with one stable sort (runs
    that are already sorted make it cheap) and counts, for each element of a right block, the elements of
    its left block that are greater. About 15 NumPy passes for a million values.
    """
    a = np.asarray(values, dtype=np.int64)
    n = len(a)
    if n < 2:
        return 0
    if a.min() < 0 or a.max() >= n:
        a = np.unique(a, return_inverse=True)[1].astype(np.int64).reshape(-1)
    size = min(_BRUTE_BLOCK, 1 << (n - 1).bit_length())
    blocks: np.ndarray = np.full(-(-n // size) * size, n, dtype=np.int64)  # padded with a value above every other
    blocks[:n] = a
    blocks = blocks.reshape(-1, size)
    upper = np.triu(np.ones((size, size), dtype=bool), 1)
    total = int(((blocks[:, :, None] > blocks[:, None, :]) & upper).sum())
    a = np.sort(blocks, axis=1).reshape(-1)[:n]  # the padding sorts last, so cutting it keeps every value

    position = np.arange(n, dtype=np.int64)
    merged_position = np.empty(n, dtype=np.int64)
    width = size
    while width < n:
        pair_start = position - position % (2 * width)
        # Sorting by (pair, value), left block before right block on ties, merges every pair at once.
        order = np.argsort(pair_start * n + a, kind="stable")
        merged_position[order] = position
        right = (position // width) % 2 == 1
        # A right element's merged position counts the left elements not greater than it, plus its own
        # index within the right block: what is left are the left elements greater than it.
        not_greater = merged_position[right] - position[right] + width
        total += int((width - not_greater).sum())
        a = a[order]
        width *= 2
    return total


def kendall_tau_of_orders(
    predicted: Sequence[str],
    truth: Sequence[str],
    *,
    column: str,
    submission_rows: np.ndarray,
    ids: RowIds | None,
) -> float:
    """Pooled Kendall tau of paired order strings; row k of ``predicted`` is submission row
    ``submission_rows[k]`` (for messages)."""
    truth_lists = [text.split() for text in truth]
    n = len(truth_lists)
    truth_lengths = np.fromiter(map(len, truth_lists), dtype=np.int64, count=n)
    # At most one piece more than the notebook has cells: a huge cell cannot blow up into millions of ids,
    # and a row with an extra piece has too many ids.
    predicted_lists = [text.split(None, k) for text, k in zip(predicted, truth_lengths.tolist())]
    predicted_lengths = np.fromiter(map(len, predicted_lists), dtype=np.int64, count=n)
    _require_same_lengths(predicted_lengths, truth_lengths, column, submission_rows, ids)

    ranks = np.fromiter(
        chain.from_iterable(map(_ranks_in, truth_lists, predicted_lists)),
        dtype=np.int64,
        count=int(truth_lengths.sum()),
    )
    row = np.repeat(np.arange(n, dtype=np.int64), truth_lengths)
    if (ranks < 0).any():
        predicted_items = list(chain.from_iterable(predicted_lists))
        _raise_unknown_items(ranks < 0, predicted_items, row, column, submission_rows, ids)
    pairs = int((truth_lengths * (truth_lengths - 1)).sum())
    if pairs == 0:
        raise InvalidSubmission(
            "Kendall tau is undefined here: no scored row has two or more items, and MLE-bench scores this "
            "as invalid. This is a property of the answers, not of your file"
        )
    return 1 - 4 * count_row_inversions(ranks, truth_lengths) / pairs


def count_row_inversions(ranks: np.ndarray, lengths: np.ndarray) -> int:
    """The inversions within rows of ``ranks``, rows of ``lengths`` items end to end, each rank of a row of
    length L in 0..L-1: :func:`count_inversions` of the ranks offset by where each row starts, counted row
    by row. Each row is padded to whole blocks of 32 (with L, above its ranks: padding inverts nothing),
    the blocks are counted by brute force and sorted, and each level of the merge sort only sorts the rows
    still longer than its blocks: a few levels over a shrinking part instead of ~15 over everything."""
    n = len(ranks)
    if n < 2:
        return 0
    longest = int(lengths.max())
    padded_lengths = -(-lengths // _BRUTE_BLOCK) * _BRUTE_BLOCK
    padded_starts = np.cumsum(padded_lengths) - padded_lengths
    at = np.arange(n, dtype=np.int64) + np.repeat(padded_starts - (np.cumsum(lengths) - lengths), lengths)
    values = np.full(int(padded_lengths.sum()), longest, dtype=np.int64)
    values[at] = ranks
    del at
    blocks = values.reshape(-1, _BRUTE_BLOCK)
    upper = np.triu(np.ones((_BRUTE_BLOCK, _BRUTE_BLOCK), dtype=bool), 1)
    total = 0
    for first in range(0, len(blocks), 1 << 12):  # in slices, to keep the comparison cubes small
        part = blocks[first : first + (1 << 12)]
        total += int(((part[:, :, None] > part[:, None, :]) & upper).sum())
    blocks.sort(axis=1)
    width = _BRUTE_BLOCK
    while width < longest:
        live = np.flatnonzero(padded_lengths > width)  # rows of one block of this width are sorted already
        live_lengths = padded_lengths[live]
        starts = np.repeat(padded_starts[live] - (np.cumsum(live_lengths) - live_lengths), live_lengths)
        index = np.arange(int(live_lengths.sum()), dtype=np.int64)
        index += starts  # the live rows' cells in values
        offset = index - np.repeat(padded_starts[live], live_lengths)  # position within the row
        part = values[index]
        position = np.arange(len(index), dtype=np.int64)
        pair_start = position - offset % (2 * width)
        # Sorting by (pair, value), left block before right block on ties, merges every pair at once.
        order = np.argsort(pair_start * (longest + 1) + part, kind="stable")
        merged_position = np.empty(len(index), dtype=np.int64)
        merged_position[order] = position
        right = (offset // width) % 2 == 1
        # A right element's merged position counts the left elements not greater than it, plus its own
        # index within the right block: what is left are the left elements greater than it.
        not_greater = merged_position[right] - position[right] + width
        total += int((width - not_greater).sum())
        values[index] = part[order]
        width *= 2
    return total


def arrow_kendall_tau(
    predicted: pd.Series, truth: pd.Series, sub_rows: np.ndarray, ans_rows: np.ndarray
) -> float | None:
    """:func:`kendall_tau_of_orders` of ``predicted[sub_rows]`` and ``truth[ans_rows]`` from their Arrow
    buffers, for the files it usually sees: text without empty cells, printable ASCII ids of at most 8
    characters separated by ASCII whitespace, every row a valid order. None otherwise (also for any file
    that would be refused, whose reason the Python path words), so that the Python path decides."""
    predicted_ids = _arrow_tokens(predicted, sub_rows)
    truth_ids = _arrow_tokens(truth, ans_rows) if predicted_ids is not None else None
    if predicted_ids is None or truth_ids is None:
        return None
    (p_row, p_token, p_lengths), (t_row, t_token, t_lengths) = predicted_ids, truth_ids
    if not np.array_equal(p_lengths, t_lengths):
        return None
    n_pairs = int((t_lengths * (t_lengths - 1)).sum())
    if n_pairs == 0:
        return None
    # (row, id) as one integer: ids numbered densely over both sides first.
    codes, uniques = pd.factorize(np.concatenate([t_token, p_token]))
    t_key = t_row * len(uniques) + codes[: len(t_token)]
    p_key = p_row * len(uniques) + codes[len(t_token) :]
    order = np.argsort(t_key, kind="stable")  # equal keys keep their order: the first is truth.index's
    sorted_keys = t_key[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    keys = sorted_keys[first]
    t_starts = np.cumsum(t_lengths) - t_lengths
    positions = order[first] - t_starts[t_row[order[first]]]  # an id's first position within its row
    at = np.minimum(np.searchsorted(keys, p_key), len(keys) - 1)
    if not np.array_equal(keys[at], p_key):  # an id that is not in its row's notebook
        return None
    return 1 - 4 * count_row_inversions(positions[at], t_lengths) / n_pairs


# Python's str.split() separates at these ASCII bytes; ids are made of the other printable ones.
_BYTE_CLASS = np.full(256, 2, dtype=np.uint8)  # 2: anything else (non-ASCII, control bytes)
_BYTE_CLASS[0x21:0x7F] = 1  # 1: part of an id
_BYTE_CLASS[[0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20]] = 0  # 0: whitespace
_ID_BYTES = 8


def _arrow_tokens(series: pd.Series, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Row (in ``rows`` order), id packed into a uint64 (its bytes, little-endian, zero above: injective as
    ids hold no zero byte) and ids per row, of the whitespace-separated ids of ``series[rows]``."""
    array = getattr(series.array, "_pa_array", None)
    if array is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)) or array.null_count:
        return None
    array = pc.take(array, pa.array(rows, type=pa.int64())).combine_chunks()
    offset_type = np.int32 if array.type == pa.string() else np.int64
    buffers = array.buffers()
    size = np.dtype(offset_type).itemsize
    offsets = np.frombuffer(buffers[1], dtype=offset_type, count=len(array) + 1, offset=array.offset * size)
    offsets = offsets.astype(np.int64) - int(offsets[0])
    total = int(offsets[-1])
    data = np.zeros(total + _ID_BYTES, dtype=np.uint8)  # zeros after the last byte, for the last id's word
    if total:
        data[:total] = np.frombuffer(buffers[2], dtype=np.uint8, count=int(offsets[0]) + total)[-total:]
    kind = _BYTE_CLASS[data[:total]]
    if (kind == 2).any():
        return None
    in_id = kind == 1
    row_start = np.zeros(total + 1, dtype=bool)
    row_start[offsets] = True  # also at the end
    before = np.zeros(total, dtype=bool)  # the previous byte is part of the same id
    before[1:] = in_id[:-1] & ~row_start[1:total]
    after = np.zeros(total, dtype=bool)  # the next byte is part of the same id
    after[:-1] = in_id[1:] & ~row_start[1:total]
    starts = np.flatnonzero(in_id & ~before)
    lengths = np.flatnonzero(in_id & ~after) + 1 - starts
    if len(lengths) and int(lengths.max()) > _ID_BYTES:
        return None
    words = np.ndarray(shape=(total + 1,), dtype="<u8", buffer=data, strides=(1,))
    masks = np.where(
        lengths == _ID_BYTES, np.uint64((1 << 64) - 1), (np.uint64(1) << (8 * lengths).astype(np.uint64)) - np.uint64(1)
    )
    tokens = words[starts] & masks
    row = np.searchsorted(offsets, starts, side="right") - 1
    return row, tokens, np.bincount(row, minlength=len(array)).astype(np.int64)


def _ranks_in(truth: list[str], predicted: list[str]) -> Iterator[int]:
    """``truth.index(item)`` for each predicted item, -1 where the item is not in ``truth``."""
    first = dict(zip(reversed(truth), range(len(truth) - 1, -1, -1)))
    return map(first.get, predicted, repeat(-1))


def _require_same_lengths(
    predicted: np.ndarray, truth: np.ndarray, column: str, submission_rows: np.ndarray, ids: RowIds | None
) -> None:
    wrong = np.flatnonzero(predicted != truth)
    if len(wrong) == 0:
        return
    examples = "; ".join(
        f"{row_label(int(submission_rows[k]), ids)} lists "
        + (f"more than {int(truth[k])} ids" if predicted[k] > truth[k] else plural(int(predicted[k]), "id"))
        + f" for {plural(int(truth[k]), 'cell')}"
        for k in wrong[:MAX_EXAMPLES]
    )
    raise InvalidSubmission(
        f"column {show(column)} must list every cell of the notebook exactly once, separated by spaces; "
        f"{plural(len(wrong), 'row')} {'has' if len(wrong) == 1 else 'have'} the wrong number of cell ids, "
        f"e.g. {examples}"
    )


def _raise_unknown_items(
    unknown: np.ndarray,
    predicted_items: list[str],
    row: np.ndarray,
    column: str,
    submission_rows: np.ndarray,
    ids: RowIds | None,
) -> None:
    positions = np.flatnonzero(unknown)
    rows_hit = np.unique(row[positions])
    examples = "; ".join(
        f"{show(predicted_items[int(p)])} in {row_label(int(submission_rows[row[p]]), ids)}"
        for p in positions[:MAX_EXAMPLES]
    )
    raise InvalidSubmission(
        f"column {show(column)} names {plural(len(positions), 'cell id')} that "
        f"{'is' if len(positions) == 1 else 'are'} "
        f"not a cell of that row's notebook ({plural(len(rows_hit), 'row')} affected), e.g. {examples}; "
        "use exactly the cell ids of each notebook"
    )
