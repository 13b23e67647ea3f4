"""Text columns as the text metrics need them: code points in bulk, Python strings, gesture lists.

Every helper reads the column only; messages name rows from 1 and say what to write instead.
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np
import pandas as pd

from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    InvalidSubmission,
    RowIds,
    plural,
    row_label,
    show,
)
from grading.engine.graders.text_match.levenshtein import Sequences

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError:  # pragma: no cover - pandas keeps text as Python objects then
    pa = None
    pc = None


def _arrow_text(series: pd.Series) -> pa.ChunkedArray | None:
    array = getattr(series.array, "_pa_array", None)
    if pa is None or array is None:
        return None
    return array if pa.types.is_string(array.type) or pa.types.is_large_string(array.type) else None


def _is_text_dtype(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.StringDtype) or series.dtype == object


def as_text_like_pandas(series: pd.Series) -> np.ndarray:
    """``series.astype(str)`` as pandas 2.2 gives it, as an object array: an empty cell becomes 'nan',
    12.0 stays '12.0'."""
    if pd.api.types.is_float_dtype(series.dtype):
        return np.array([str(v) for v in series.to_numpy(dtype=np.float64, na_value=np.nan).tolist()], dtype=object)
    if pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_integer_dtype(series.dtype):
        if series.hasnans:  # nullable integers: pandas 2.2 would have read them as floats
            return as_text_like_pandas(series.astype(np.float64))
        return np.array([str(v) for v in series.tolist()], dtype=object)
    values = series.to_numpy(dtype=object, na_value=np.nan)
    return np.array(["nan" if _missing(v) else v if isinstance(v, str) else str(v) for v in values], dtype=object)


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def text_sequences(series: pd.Series, column: str, ids: RowIds | None, *, missing: str, answers: bool) -> Sequences:
    """The column's text as code-point sequences.

    ``missing="as_text"``: every cell is converted with pandas' ``astype(str)`` (an empty cell is 'nan').
    ``missing="invalid"``: every cell must be text; an empty cell or a number is refused, because
    python-Levenshtein raises on anything but a string.
    """
    arrow = _arrow_text(series)
    if arrow is not None:
        if arrow.null_count == 0:
            return Sequences.from_arrow(arrow)
        if missing == "as_text":
            return Sequences.from_arrow(pc.fill_null(arrow, "nan"))
    if missing == "as_text":
        return Sequences.from_strings(as_text_like_pandas(series))
    values = series.to_numpy(dtype=object, na_value=np.nan)
    not_text = np.flatnonzero([not isinstance(v, str) for v in values])
    if len(not_text):
        _refuse_non_text(values, not_text, column, ids, answers=answers)
    return Sequences.from_strings(values)


def _refuse_non_text(
    values: np.ndarray, rows: np.ndarray, column: str, ids: RowIds | None, *, answers: bool
) -> NoReturn:
    examples = "; ".join(f"{row_label(int(r), ids)} has {show(values[int(r)])}" for r in rows[:MAX_EXAMPLES])
    problem = f"column {show(column)} has {plural(len(rows), 'cell')} that {'is' if len(rows) == 1 else 'are'} not text"
    if answers:
        raise AnswersProblem(f"the answers' {problem}: {examples}")
    raise InvalidSubmission(
        f"{problem} (empty, or read as a number): {examples}; every row needs a non-empty string, "
        "as the edit distance is only defined between strings"
    )


def python_strings(series: pd.Series) -> list[str]:
    """Cells as Python str for word-level metrics: an empty cell is '' and a number its text."""
    if pd.api.types.is_float_dtype(series.dtype) or not _is_text_dtype(series):
        text = as_text_like_pandas(series)
        missing = np.asarray(series.isna().to_numpy(), dtype=bool)
        text[missing] = ""
        return text.tolist()
    values = series.to_numpy(dtype=object, na_value="")
    return [v if isinstance(v, str) else str(v) for v in values.tolist()]


def integer_lists(series: pd.Series, column: str, ids: RowIds | None, *, answers: bool) -> list[list[int]]:
    """Whitespace-separated integers per cell ('3 12 7'), parsed with Python's int like the reference."""
    if pd.api.types.is_integer_dtype(series.dtype) and not series.hasnans:
        return [[int(v)] for v in series.tolist()]
    values = series.to_numpy(dtype=object, na_value=np.nan)
    parsed: list[list[int]] = []
    bad: list[int] = []
    for position, value in enumerate(values.tolist()):
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            parsed.append([int(value)])
            continue
        try:
            parsed.append([int(token) for token in value.split()])
        except (AttributeError, ValueError):  # not text (an empty cell, a fraction), or not integers
            parsed.append([])
            bad.append(position)
    if bad:
        examples = "; ".join(f"{show(values[r])} in {row_label(r, ids)}" for r in bad[:MAX_EXAMPLES])
        problem = (
            f"column {show(column)} has {plural(len(bad), 'cell')} that {'is' if len(bad) == 1 else 'are'} "
            f"not whitespace-separated integers, e.g. {examples}"
        )
        if answers:
            raise AnswersProblem(f"the answers' {problem}")
        raise InvalidSubmission(f"{problem}; write the gesture numbers separated by spaces, e.g. '3 12 7'")
    return parsed
