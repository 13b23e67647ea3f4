"""Class labels as scikit-learn 1.5's classification metrics see them (``type_of_target``, ``_check_targets``).

Shared by the accuracy and kappa families. A label column is usable when scikit-learn would call it
"binary" or "multiclass": whole numbers, booleans, or text without empty cells. Floats with a fractional
part are "continuous" and refused; an empty cell in a numeric column is refused; a text column with an
empty cell cannot be sorted and is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._checks import MAX_EXAMPLES, plural, row_label, show


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


def labels_of(values: np.ndarray, column: str, ids=None) -> Labels:
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
                    "is not a whole-number class label"
                    if len(positions) == 1
                    else "are not whole-number class labels"
                )
            raise InvalidSubmission(
                f"column {show(column)} must hold class labels like the answers'; "
                f"{plural(len(positions), 'value')} {problem}, e.g. {examples}"
            )
        return Labels(values, False, _binary_or_multiclass(len(np.unique(values))))
    objects = np.asarray(values, dtype=object)
    if len(objects) and not isinstance(objects[0], str):
        raise InvalidSubmission(
            f"column {show(column)} must hold a class label in every row; {row_label(0, ids)} has "
            f"{show(objects[0])}"
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
