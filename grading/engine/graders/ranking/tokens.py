"""Cells holding space-separated labels, split in bulk with pyarrow into flat token arrays.

Used by the MAP@k and micro-F1 families. A column is first turned into text the way pandas'
``astype(str)`` does it (``448`` stays ``'448'``, a float ``448.0`` becomes ``'448.0'``), except that an
empty cell (NaN) becomes ``''``: it holds no label. Then every cell is split in one pyarrow call:

* ``"space"``: Python's ``str.split(" ")``: every single space separates, so two spaces in a row give an
  empty token that still takes a place in a ranked list; ``limit`` keeps only the first tokens of a cell.
* ``"whitespace"``: Python's ``str.split()``: runs of any whitespace separate, no empty tokens.

Tokens are then coded against a vocabulary (the answers' distinct tokens) with ``pyarrow.compute.index_in``,
so the metrics work on integer keys ``row * V + code`` with NumPy: no Python work per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SPLITS = ("space", "whitespace")


@dataclass(frozen=True)
class Tokens:
    """The tokens of a column, flattened: token i is ``values[i]``, at ``position[i]`` in row ``rows[i]``."""

    rows: np.ndarray  # int64, non-decreasing
    position: np.ndarray  # int64, 0-based place in its cell's list
    values: pa.Array  # large_string


def text_cells(series: pd.Series) -> pa.Array:
    """The column as a large_string array without nulls (empty cells become '')."""
    array = getattr(series.array, "_pa_array", None)
    if array is not None and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        return pc.fill_null(array.cast(pa.large_string()), "")
    if pd.api.types.is_integer_dtype(series.dtype) and not series.hasnans:
        return pa.array(series.to_numpy(dtype=np.int64).astype(str), type=pa.large_string())
    objects = series.to_numpy(dtype=object, na_value=None)
    text = [v if isinstance(v, str) else ("" if v is None else str(v)) for v in objects.tolist()]
    return pa.array(text, type=pa.large_string())


def split_cells(cells: pa.Array, *, split: str, limit: int | None = None) -> Tokens:
    """Split every cell; with ``limit``, keep only each cell's first ``limit`` tokens."""
    if split == "space":
        lists = pc.split_pattern(cells, pattern=" ", max_splits=limit)
    elif split == "whitespace":
        # Where no byte is outside ASCII or one of \x1c..\x1f (whitespace to the Unicode splitter only), the
        # ASCII splitter cuts at the same places, in a third of the time.
        lists = pc.ascii_split_whitespace(cells) if _plain_ascii(cells) else pc.utf8_split_whitespace(cells)
    else:
        raise TypeError(f"split must be one of {SPLITS}, not {split!r}")
    offsets = lists.offsets.to_numpy().astype(np.int64)
    values = lists.flatten()
    rows = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    position = np.arange(len(values), dtype=np.int64) - (offsets[rows] - offsets[0])
    keep = None
    if split == "whitespace":  # pyarrow keeps empty pieces at the ends; str.split() drops them
        keep = pc.greater(pc.binary_length(values), 0).to_numpy(zero_copy_only=False)
    if limit is not None:
        within = position < limit
        keep = within if keep is None else keep & within
    if keep is not None and not keep.all():
        values = values.filter(pa.array(keep))
        rows, position = rows[keep], position[keep]
        if split == "whitespace":  # renumber places after dropping empty pieces
            position = _renumber(rows)
    return Tokens(rows=rows, position=position, values=values)


def _plain_ascii(cells: pa.Array) -> bool:
    """No byte of the cells' text is beyond ASCII or among \x1c..\x1f."""
    if cells.type != pa.large_string():
        return False
    if len(cells) == 0:
        return True
    offsets = np.frombuffer(cells.buffers()[1], dtype=np.int64, count=len(cells) + 1, offset=cells.offset * 8)
    first, last = int(offsets[0]), int(offsets[-1])
    if last == first:
        return True
    text = np.frombuffer(cells.buffers()[2], dtype=np.uint8, count=last)[first:].tobytes()
    return text.isascii() and not any(byte in text for byte in (b"\x1c", b"\x1d", b"\x1e", b"\x1f"))


def _renumber(rows: np.ndarray) -> np.ndarray:
    index = np.arange(len(rows), dtype=np.int64)
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = rows[1:] != rows[:-1]
    return index - np.maximum.accumulate(np.where(starts, index, 0))


def column_tokens(series: pd.Series, *, split: str, limit: int | None = None) -> Tokens:
    return split_cells(text_cells(series), split=split, limit=limit)


def codes(tokens: Tokens, vocabulary: pa.Array) -> np.ndarray:
    """Each token's index in ``vocabulary``, -1 where it is not there."""
    found = pc.index_in(tokens.values, value_set=vocabulary)
    return pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype(np.int64)


def vocabulary_of(tokens: Tokens) -> pa.Array:
    return pc.unique(tokens.values)


def row_sets(tokens: Tokens, vocabulary: pa.Array, rows: np.ndarray | None = None) -> np.ndarray:
    """Sorted distinct keys ``row * V + code`` of the tokens found in the vocabulary (a set per row).

    ``rows`` renumbers the tokens' rows (e.g. submission row -> answers row); -1 drops a row.
    """
    code = codes(tokens, vocabulary)
    row = tokens.rows if rows is None else rows[tokens.rows]
    kept = (code >= 0) & (row >= 0)
    return sorted_unique(row[kept] * max(len(vocabulary), 1) + code[kept])


def sorted_unique(keys: np.ndarray) -> np.ndarray:
    """``np.unique`` for int64 keys by sorting (NumPy 2's hash-based unique is several times slower here)."""
    ordered = np.sort(keys)
    distinct = np.ones(len(ordered), dtype=bool)
    distinct[1:] = ordered[1:] != ordered[:-1]
    return ordered[distinct]


def first_occurrences(keys: np.ndarray) -> np.ndarray:
    """True where a key appears for the first time in the array."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    new = np.ones(len(ordered), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    first = np.zeros(len(keys), dtype=bool)
    first[order[new]] = True
    return first


def pyarrow_isin(values: pd.Series, pool: pd.Series) -> np.ndarray:
    """``values.isin(pool)`` as a bool array; text against text goes through pyarrow (pandas' is slow)."""
    left, right = _arrow_text(values), _arrow_text(pool)
    if left is not None and right is not None:
        return pc.fill_null(pc.is_in(left, value_set=right), False).to_numpy(zero_copy_only=False)
    return np.asarray(values.isin(pool), dtype=bool)


def _arrow_text(series: pd.Series) -> pa.Array | None:
    array = getattr(series.array, "_pa_array", None)
    if array is None or not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array.cast(pa.large_string())
