"""Class labels as scikit-learn 1.5's classification metrics see them (``type_of_target``, ``_check_targets``).

Shared by the accuracy and kappa families. A label column is usable when scikit-learn would call it
"binary" or "multiclass": whole numbers, booleans, or text without empty cells. Floats with a fractional
part are "continuous" and refused; an empty cell in a numeric column is refused; a text column with an
empty cell cannot be sorted and is refused too.

Where the reference first casts the labels to integers (macro F1, top-1 error), :func:`integer_labels` and
:func:`first_token_integers` reproduce that cast instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    RowIds,
    plural,
    require_answers_columns,
    require_columns,
    require_row_count,
    row_label,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids


@dataclass(frozen=True)
class Labels:
    values: np.ndarray  # float64 for numbers (exact for whole numbers below 2**53), object for text
    is_text: bool
    target_type: str  # "binary" or "multiclass"


def label_values(series: pd.Series) -> np.ndarray:
    """A label column's values as pandas parsed them: numbers as numbers (NaN where empty), text as objects."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    ):
        if series.hasnans:
            return series.to_numpy(dtype=np.float64, na_value=np.nan)
        return series.to_numpy()
    return series.to_numpy(dtype=object, na_value=np.nan)


def labels_of(values: np.ndarray, column: str, ids: RowIds | None = None) -> Labels:
    """Classify one label vector; raise InvalidSubmission where scikit-learn raises."""
    if values.dtype.kind in "biu":
        numbers = values.astype(np.float64)
        return Labels(numbers, False, _binary_or_multiclass(len(np.unique(values))))
    if values.dtype.kind == "f":
        fractional = ~(np.isfinite(values) & (np.floor(values) == values) & (np.abs(values) < 2.0**63))
        if fractional.any():
            positions = np.flatnonzero(fractional)
            examples = "; ".join(
                f"{row_label(int(p), ids)} has {show(values[int(p)])}" for p in positions[:MAX_EXAMPLES]
            )
            if not np.isfinite(values[positions]).all():
                problem = "is empty or not finite" if len(positions) == 1 else "are empty or not finite"
            else:
                problem = (
                    "is not a whole-number class label" if len(positions) == 1 else "are not whole-number class labels"
                )
            raise InvalidSubmission(
                f"column {show(column)} must hold class labels like the answers'; "
                f"{plural(len(positions), 'value')} {problem}, e.g. {examples}"
            )
        return Labels(values, False, _binary_or_multiclass(len(np.unique(values))))
    objects = np.asarray(values, dtype=object)
    if len(objects) and not isinstance(objects[0], str):
        raise InvalidSubmission(
            f"column {show(column)} must hold a class label in every row; {row_label(0, ids)} has {show(objects[0])}"
        )
    missing = np.asarray(pd.isna(objects), dtype=bool)
    if missing.any():
        positions = np.flatnonzero(missing)
        rows = ", ".join(row_label(int(p), ids) for p in positions[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(positions), 'empty cell')}, e.g. {rows}; every row needs a label"
        )
    try:
        distinct = len(np.unique(objects))
    except TypeError:
        raise InvalidSubmission(
            f"column {show(column)} mixes text with other values; write one label per row"
        ) from None
    return Labels(objects, True, _binary_or_multiclass(distinct))


def _binary_or_multiclass(distinct: int) -> str:
    return "multiclass" if distinct > 2 else "binary"


def combined_type(true: Labels, pred: Labels, column: str) -> str:
    """``_check_targets``: the common target type, refusing text mixed with numbers where it fails."""
    if true.target_type == "binary" and pred.target_type == "binary":
        if true.is_text != pred.is_text:
            raise InvalidSubmission(_mixed_message(true, column))
        return "binary" if len(np.unique(np.concatenate([true.values, pred.values]))) <= 2 else "multiclass"
    return "multiclass"


def _mixed_message(true: Labels, column: str) -> str:
    kind = "text" if true.is_text else "numbers"
    example = ""
    if len(true.values):
        first = true.values[0]
        example = show(int(first) if not true.is_text and float(first).is_integer() else first)
    return (
        f"column {show(column)} must hold labels of the same kind as the answers ({kind}, e.g. {example}); "
        "write the class labels exactly as in the training data"
    )


def require_same_kind(true: Labels, pred: Labels, column: str) -> None:
    """``unique_labels``: text labels and numeric labels cannot be mixed."""
    if true.is_text != pred.is_text:
        raise InvalidSubmission(_mixed_message(true, column))


def equal_labels(true: Labels, pred: Labels) -> np.ndarray:
    """``y_true == y_pred`` elementwise, with NumPy's semantics (a number never equals text)."""
    if true.is_text != pred.is_text:
        return np.zeros(len(true.values), dtype=bool)
    return np.asarray(true.values == pred.values, dtype=bool)


# ---------------------------------------------------------------------------------------------------
# Labels cast to integers (macro F1, top-1 error)

_INT64_LIMIT = 2.0**63
_TOKEN_RULE = (
    "each cell must start with an integer class id (e.g. 42, or '42 7 3' where only the first counts); "
    "a number with a decimal point such as 42.0, or an empty cell, is not one"
)
_INTEGER_RULE = "each cell must be an integer class id such as 42"


def integer_labels(series: pd.Series, column: str, ids: RowIds | None = None) -> np.ndarray:
    """int64 labels the way pandas 2.2's ``astype(int)`` casts a column read from CSV.

    Whole numbers pass as they are and booleans become 0/1; a float column is truncated toward zero
    (``12.7`` becomes 12) unless a cell is empty or infinite; text is cast cell by cell with Python's
    ``int`` (``' 12 '`` and ``'+12'`` pass, ``'12.0'`` and ``'abc'`` do not). Raises InvalidSubmission
    naming the cells that cannot be cast.
    """
    dtype = series.dtype
    if (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) and not series.hasnans:
        return series.to_numpy().astype(np.int64)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.flatnonzero(~(np.isfinite(values) & (np.abs(values) < _INT64_LIMIT)))
        if len(bad):
            _raise_not_integers(column, values, bad, ids, "fill every row with an integer class id")
        return values.astype(np.int64)
    return _cast_text(series, column, ids, first_token=False)


def first_token_integers(series: pd.Series, column: str, ids: RowIds | None = None) -> np.ndarray:
    """int64 of each cell's first space-separated token, as ``int(str(cell).split()[0])`` in pandas 2.2.

    A cell goes through ``astype(str)`` first, so a number column pandas read as floats (``12.0``, or any
    empty cell) gives ``'12.0'`` and ``'nan'``, which are not integers; ``'12 7 3'`` gives 12.
    """
    dtype = series.dtype
    if pd.api.types.is_integer_dtype(dtype) and not series.hasnans:
        return series.to_numpy().astype(np.int64)
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        # pandas 2.2 turns these cells into 'True', '12.0' or 'nan': none of them reads as an integer
        values = series.to_numpy(dtype=object, na_value=np.nan)
        rule = _TOKEN_RULE
        if series.hasnans:
            rule += " (one empty cell makes the whole column read as decimals: fill every row)"
        _raise_not_integers(column, values, np.arange(len(values)), ids, rule)
    return _cast_text(series, column, ids, first_token=True)


def _cast_text(series: pd.Series, column: str, ids: RowIds | None, *, first_token: bool) -> np.ndarray:
    """Python's ``int`` of each distinct cell (or of its first token), spread back over the rows."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    uniques = np.asarray(uniques, dtype=object)
    cast = np.zeros(len(uniques), dtype=np.int64)
    failed = np.zeros(len(uniques), dtype=bool)
    for position, value in enumerate(uniques.tolist()):
        try:
            number = int(str(value).split()[0] if first_token else value)
            if not -(2**63) <= number < 2**63:
                raise OverflowError
            cast[position] = number
        except (ValueError, TypeError, IndexError, OverflowError):
            failed[position] = True
    bad = (codes < 0) | failed[np.maximum(codes, 0)]
    if bad.any():
        values = series.to_numpy(dtype=object, na_value=np.nan)
        _raise_not_integers(column, values, np.flatnonzero(bad), ids, _TOKEN_RULE if first_token else _INTEGER_RULE)
    return cast[codes]


def _raise_not_integers(column: str, values: np.ndarray, positions: np.ndarray, ids: RowIds | None, rule: str) -> None:
    examples = "; ".join(f"{show(values[int(p)])} in {row_label(int(p), ids)}" for p in positions[:MAX_EXAMPLES])
    raise InvalidSubmission(
        f"column {show(column)} has {plural(len(positions), 'value')} that cannot be read as an integer "
        f"class id, e.g. {examples}; {rule}"
    )


class LabelParser(Protocol):
    """:func:`integer_labels` or :func:`first_token_integers`."""

    def __call__(self, series: pd.Series, column: str, ids: RowIds | None = None) -> np.ndarray: ...


def paired_integer_labels(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str, parse: LabelParser
) -> tuple[np.ndarray, np.ndarray]:
    """(truth, predicted) integer class ids in matched row order, ``parse`` being :func:`integer_labels` or
    :func:`first_token_integers`. Checks as the reference does: answers' columns, row count, the
    submission's columns, then the sorted id sequences; answers that do not parse are our problem."""
    require_answers_columns(answers, [id_column, target_column])
    if answers.empty:
        raise AnswersProblem("the answers have no rows")
    require_row_count(submission, len(answers))
    require_columns(submission, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    predicted = parse(submission[target_column], target_column, submission_ids(submission, id_column))
    try:
        truth = parse(answers[target_column], target_column)
    except InvalidSubmission as problem:
        raise AnswersProblem(f"the answers' labels are not integers: {problem}") from None
    return Pairing.take(truth, pairing.ans_rows), Pairing.take(predicted, pairing.sub_rows)
