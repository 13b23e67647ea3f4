"""Validation helpers shared by every grader family.

Each helper raises :class:`InvalidSubmission` with a message a person can act on: what is wrong,
where (column, row, id) and what to do. Row numbers in messages count data rows from 1, the header
line not included, so "row 1" is the first line after the header.

The helpers only read the frames; they never modify them.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission

MAX_EXAMPLES = 3
_MAX_SHOWN_CHARS = 60


__all__ = ["AnswersProblem", "InvalidSubmission"]  # re-exported for the grader modules


# ---------------------------------------------------------------------------------------------------
# Formatting


def show(value: Any) -> str:
    """A short, unambiguous rendering of one cell for a message."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "an empty cell"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    text = str(value)
    if len(text) > _MAX_SHOWN_CHARS:
        text = text[: _MAX_SHOWN_CHARS - 3] + "..."
    return repr(text)


def show_many(values: Sequence[Any]) -> str:
    return ", ".join(show(v) for v in values)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def row_label(position: int, ids: RowIds | None = None) -> str:
    """``row 5`` or ``row 5 (id 'abc')`` for a 0-based position in the submission."""
    label = f"row {position + 1}"
    if ids is not None and 0 <= position < len(ids):
        label += f" (id {show(ids[position])})"
    return label


class RowIds:
    """A submission's ids, read one at a time and only when a message names a row."""

    def __init__(self, series: pd.Series) -> None:
        self._series = series

    def __len__(self) -> int:
        return len(self._series)

    def __getitem__(self, position: int) -> Any:
        return self._series.iloc[int(position)]


def submission_ids(submission: pd.DataFrame, id_column: str | None) -> RowIds | None:
    """The submission's ids for naming rows in messages (None when there is no usable id column)."""
    if id_column is None or not _has_single_column(submission, id_column):
        return None
    return RowIds(submission[id_column])


# ---------------------------------------------------------------------------------------------------
# Grader wrapper


@overload
def grader_function(fn: Callable[..., float], *, answer_records: bool = False) -> Callable[..., float]: ...


@overload
def grader_function(
    fn: None = None, *, answer_records: bool = False
) -> Callable[[Callable[..., float]], Callable[..., float]]: ...


def grader_function(
    fn: Callable[..., float] | None = None, *, answer_records: bool = False
) -> Callable[..., float] | Callable[[Callable[..., float]], Callable[..., float]]:
    """Wrap a grade function so that it only ever fails with InvalidSubmission for submission problems.

    MLE-bench turns *any* exception inside its grade function into an invalid submission (score null),
    so an unexpected error while scoring a submission is reported here as an invalid submission too, with
    the error text. Wrong grader parameters (our configuration) and :class:`AnswersProblem` still raise
    as themselves.

    Answers must be a DataFrame. ``@grader_function(answer_records=True)`` also accepts a list of records
    (dicts), which is how ``csvio.load_answers`` reads a ``.jsonl`` answers file
    (tensorflow2-question-answering); the grade function then checks the records itself.
    """
    if fn is None:
        return functools.partial(grader_function, answer_records=answer_records)
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(submission: pd.DataFrame, answers: pd.DataFrame, **params: Any) -> float:
        signature.bind(submission, answers, **params)  # a TypeError here is a configuration error
        if not isinstance(answers, pd.DataFrame) and not (answer_records and isinstance(answers, list)):
            expected = "a pandas DataFrame or a list of records" if answer_records else "a pandas DataFrame"
            raise AnswersProblem(f"answers must be {expected}, not {type(answers).__name__}")
        if not isinstance(submission, pd.DataFrame):
            raise InvalidSubmission(
                f"the submission could not be read as a table (got {type(submission).__name__}); "
                "upload a CSV file with a header row"
            )
        try:
            return fn(submission, answers, **params)
        except (InvalidSubmission, AnswersProblem):
            raise
        except Exception as exc:  # mirrors the reference: any error means "invalid"
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            detail = detail[:300]
            raise InvalidSubmission(
                "the submission could not be scored: "
                f"{type(exc).__name__}{': ' + detail if detail else ''}. "
                "Check that it follows the sample submission's columns, ids and value types"
            ) from exc

    return wrapper


# ---------------------------------------------------------------------------------------------------
# Columns and rows


def _has_single_column(frame: pd.DataFrame, column: str) -> bool:
    return int((frame.columns == column).sum()) == 1 if len(frame.columns) else False


def _column_hint(missing: str, present: Sequence[Any]) -> str | None:
    key = str(missing).strip().lower()
    for col in present:
        if str(col).strip().lower() == key and str(col) != str(missing):
            return f"column {show(col)} looks like {show(missing)}: column names are case- and space-sensitive"
    return None


def describe_columns(columns: Sequence[Any]) -> str:
    shown = [str(c) for c in columns]
    if len(shown) > 12:
        return ", ".join(shown[:10]) + f", ... ({len(shown)} columns)"
    return ", ".join(shown)


def require_columns(
    frame: pd.DataFrame,
    required: Sequence[str],
    *,
    expected: Sequence[str] | None = None,
) -> None:
    """Every column in ``required`` must be present exactly once (extra columns are allowed)."""
    present = list(frame.columns)
    missing = [c for c in required if c not in present]
    if missing:
        exp = describe_columns(expected if expected is not None else required)
        message = f"expected columns {exp}; missing {describe_columns(missing)}"
        if not present:
            message += " (the file has no columns)"
        hints = [h for h in (_column_hint(m, present) for m in missing[:MAX_EXAMPLES]) if h]
        if hints:
            message += "; " + "; ".join(hints)
        elif present:
            message += f" (the file has: {describe_columns(present)})"
        raise InvalidSubmission(message)
    duplicated = [c for c in required if int((frame.columns == c).sum()) > 1]
    if duplicated:
        raise InvalidSubmission(
            f"column {show(duplicated[0])} appears {int((frame.columns == duplicated[0]).sum())} times; "
            "keep exactly one"
        )


def require_exact_columns(frame: pd.DataFrame, expected: Sequence[str]) -> None:
    """The set of columns must be exactly ``expected`` (any order, nothing extra, nothing missing)."""
    require_columns(frame, expected, expected=expected)
    extra = [c for c in frame.columns if c not in set(expected)]
    if extra:
        raise InvalidSubmission(
            f"expected exactly the columns {describe_columns(expected)}; remove the extra "
            f"{'column' if len(extra) == 1 else 'columns'} {describe_columns(extra)}"
        )


def require_row_count(frame: pd.DataFrame, expected: int) -> None:
    actual = len(frame)
    if actual != expected:
        more = "more" if actual > expected else "fewer"
        raise InvalidSubmission(
            f"expected {plural(expected, 'row')} (one per test id), got {actual}: "
            f"{abs(actual - expected)} {more}; submit exactly one row per id of the sample submission"
        )


def require_frames(submission: pd.DataFrame, answers: pd.DataFrame, columns: Sequence[str]) -> None:
    """Most graders' first three checks, in the order their messages must come: the answers hold ``columns``,
    the submission holds them too, and it has one row per answer."""
    require_answers_columns(answers, columns)
    require_columns(submission, columns)
    require_row_count(submission, len(answers))


def require_answers_columns(answers: pd.DataFrame, required: Sequence[str]) -> None:
    missing = [c for c in required if c not in answers.columns]
    if missing:
        raise AnswersProblem(
            f"the answers lack column(s) {describe_columns(missing)} named in the grader's parameters "
            f"(answers have: {describe_columns(list(answers.columns))})"
        )


# ---------------------------------------------------------------------------------------------------
# Values


def _is_numeric_dtype(series: pd.Series) -> bool:
    dtype = series.dtype
    return (
        pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)
    ) and not pd.api.types.is_complex_dtype(dtype)


def _object_values(series: pd.Series) -> np.ndarray:
    return series.to_numpy(dtype=object, na_value=np.nan)


def _to_float(series: pd.Series) -> np.ndarray:
    """float64 values of a numeric (int, float, bool, nullable) column; missing values become NaN."""
    if series.dtype == np.float64:
        return series.to_numpy()
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _non_numeric_positions(values: np.ndarray) -> np.ndarray:
    """Positions of cells that pandas.to_numeric cannot read (missing cells excluded)."""
    parsed = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy()
    missing = pd.isna(values)
    return np.flatnonzero(pd.isna(parsed) & ~missing)


def _raise_non_numeric(series: pd.Series, column: str, ids: RowIds | None, positions: np.ndarray) -> None:
    values = _object_values(series)
    if len(positions) == 0:  # every cell reads as a number on its own, yet the column is text
        positions = np.flatnonzero(~pd.isna(values))[:MAX_EXAMPLES]
        first = int(positions[0]) if len(positions) else 0
        raise InvalidSubmission(
            f"column {show(column)} holds text rather than numbers (e.g. {show(values[first])} in "
            f"{row_label(first, ids)}); write plain numbers"
        )
    first = int(positions[0])
    examples = [f"{show(values[int(p)])} in {row_label(int(p), ids)}" for p in positions[:MAX_EXAMPLES]]
    raise InvalidSubmission(
        f"column {show(column)} has {plural(len(positions), 'non-numeric value')}, e.g. "
        + "; ".join(examples)
        + f"; every value must be a number{_decimal_hint(values[first])}"
    )


def _decimal_hint(value: Any) -> str:
    if isinstance(value, str) and "," in value and any(ch.isdigit() for ch in value):
        return " (use '.' as the decimal separator and ',' only between columns)"
    return ""


def numeric_values(series: pd.Series, column: str, ids: RowIds | None = None) -> np.ndarray:
    """float64 values of a column that must already be numeric (int, float or bool).

    A text column is rejected even when some of its cells look like numbers: the reference compares the
    raw column with 0 and 1, which fails on text.
    """
    if _is_numeric_dtype(series):
        return _to_float(series)
    if len(series) == 0:  # a file with only the header reads every column as text, yet holds no text
        return np.zeros(0, dtype=np.float64)
    values = _object_values(series)
    _raise_non_numeric(series, column, ids, _non_numeric_positions(values))
    raise AssertionError("unreachable")


def float_values_like_sklearn(
    series: pd.Series, column: str, ids: RowIds | None = None, *, rows: np.ndarray | None = None
) -> np.ndarray:
    """float64 values the way scikit-learn's ``check_array`` (and ``Series.astype(float)``) gets them.

    Numeric columns convert directly. A text column is converted cell by cell with Python's ``float``,
    so cells like ``' 2 '`` or ``'1_000'`` are accepted exactly as the reference accepts them. With
    ``rows``, only those rows (in that order) are returned and only they must convert.
    """
    if _is_numeric_dtype(series):
        values = _to_float(series)
        return values if rows is None else values[rows]
    objects = _object_values(series)
    if rows is not None:
        objects = objects[rows]
    try:
        return objects.astype(np.float64)
    except (ValueError, TypeError):
        bad = np.flatnonzero(_float_failures(objects))
        original = bad if rows is None else np.asarray(rows)[bad]
        examples = "; ".join(
            f"{show(objects[b])} in {row_label(int(o), ids)}" for b, o in zip(bad[:MAX_EXAMPLES], original)
        )
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(bad), 'value')} that {'is' if len(bad) == 1 else 'are'} "
            f"not a number, e.g. {examples}; every value must be a number"
            f"{_decimal_hint(objects[bad[0]]) if len(bad) else ''}"
        ) from None


def _float_failures(values: np.ndarray) -> np.ndarray:
    failed = np.zeros(len(values), dtype=bool)
    for position, value in enumerate(values.tolist()):
        try:
            float(value)
        except (ValueError, TypeError):
            failed[position] = True
    return failed


def _original_rows(positions: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return positions if rows is None else np.asarray(rows)[positions]


def require_no_missing(
    values: np.ndarray,
    column: str,
    ids: RowIds | None = None,
    *,
    what: str = "a number",
    rows: np.ndarray | None = None,
) -> None:
    """No NaN cells (empty cells or 'nan'/'NA' text read as missing)."""
    missing = np.isnan(values)
    if missing.any():
        positions = _original_rows(np.flatnonzero(missing), rows)
        shown = ", ".join(row_label(int(p), ids) for p in positions[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(positions), 'missing value')} (empty or NaN), e.g. {shown}; "
            f"every row needs {what}"
        )


def require_finite(
    values: np.ndarray, column: str, ids: RowIds | None = None, *, rows: np.ndarray | None = None
) -> None:
    require_no_missing(values, column, ids, rows=rows)
    infinite = np.isinf(values)
    if infinite.any():
        positions = np.flatnonzero(infinite)
        examples = ", ".join(
            f"{row_label(int(o), ids)} has {show(values[int(p)])}"
            for p, o in zip(positions[:MAX_EXAMPLES], _original_rows(positions[:MAX_EXAMPLES], rows))
        )
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(positions), 'infinite value')}: {examples}; write finite numbers"
        )


def require_unit_interval(values: np.ndarray, column: str, ids: RowIds | None = None) -> None:
    """Every value within [0, 1] (NaN fails too, as in the reference's comparisons)."""
    inside = (values >= 0) & (values <= 1)
    if not inside.all():
        positions = np.flatnonzero(~inside)
        if np.isnan(values[positions]).all():
            require_no_missing(values, column, ids, what="a probability")
        outside = [int(p) for p in positions if not np.isnan(values[p])][:MAX_EXAMPLES]
        examples = "; ".join(f"{row_label(p, ids)} has {show(values[p])}" for p in outside)
        raise InvalidSubmission(
            f"values in column {show(column)} must be probabilities within [0, 1]; "
            f"{plural(len(positions), 'value')} {'is' if len(positions) == 1 else 'are'} not, e.g. {examples}"
        )


def require_non_negative(values: np.ndarray, column: str, ids: RowIds | None = None, *, why: str) -> None:
    negative = values < 0
    if negative.any():
        positions = np.flatnonzero(negative)
        examples = "; ".join(f"{row_label(int(p), ids)} has {show(values[int(p)])}" for p in positions[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(positions), 'negative value')}, e.g. {examples}; {why}"
        )


def require_rows_sum_to_one(
    matrix: np.ndarray,
    columns: Sequence[Any],
    ids: RowIds | None = None,
    *,
    atol: float,
    rtol: float,
) -> None:
    """Each row's probabilities must sum to 1 the way the reference checks it.

    The reference sums with pandas (missing cells count as 0) and tests ``numpy.isclose(sum, 1, atol)``,
    whose default relative tolerance adds ``rtol * 1``: a row passes when ``|sum - 1| <= atol + rtol``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.where(np.isnan(matrix), 0.0, matrix).sum(axis=1)
    close = np.abs(sums - 1.0) <= atol + rtol * 1.0
    if not close.all():
        positions = np.flatnonzero(~close)
        examples = "; ".join(f"{row_label(int(p), ids)} sums to {sums[int(p)]:.10g}" for p in positions[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"each row's probabilities over {plural(len(columns), 'class column')} must sum to 1 "
            f"(within {atol + rtol:g}); {plural(len(positions), 'row')} "
            f"{'does' if len(positions) == 1 else 'do'} not: {examples}"
        )


def require_no_empty_cells(matrix: np.ndarray, columns: Sequence[Any], ids: RowIds | None = None) -> None:
    empty = np.isnan(matrix)
    if empty.any():
        rows, cols = np.nonzero(empty)
        examples = "; ".join(
            f"{row_label(r, ids)}, column {show(columns[c])}"
            for r, c in list(zip(rows.tolist(), cols.tolist()))[:MAX_EXAMPLES]
        )
        raise InvalidSubmission(
            f"{plural(len(rows), 'probability', 'probabilities')} {'is' if len(rows) == 1 else 'are'} "
            f"missing (empty or NaN), e.g. {examples}; fill every class column of every row"
        )


def require_matrix_in_unit_interval(matrix: np.ndarray, columns: Sequence[Any], ids: RowIds | None = None) -> None:
    inside = (matrix >= 0) & (matrix <= 1)
    if not inside.all():
        bad_rows, bad_cols = np.nonzero(~inside)
        examples = []
        for r, c in list(zip(bad_rows.tolist(), bad_cols.tolist()))[:MAX_EXAMPLES]:
            value = matrix[r, c]
            shown = "an empty cell (NaN)" if np.isnan(value) else show(value)
            examples.append(f"{row_label(r, ids)}, column {show(columns[c])} has {shown}")
        raise InvalidSubmission(
            "all probabilities must be numbers within [0, 1]; "
            f"{plural(len(bad_rows), 'cell')} {'is' if len(bad_rows) == 1 else 'are'} not, e.g. " + "; ".join(examples)
        )
