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
    row_starts = np.cumsum(truth_lengths) - truth_lengths  # ranks become positions in the concatenation
    inversions = count_inversions(ranks + row_starts[row])
    return 1 - 4 * inversions / pairs


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
