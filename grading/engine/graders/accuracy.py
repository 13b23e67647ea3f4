"""Accuracy: the share of rows whose prediction equals the answer.

``compare="labels"`` (tabular-playground-series-dec-2021): MLE-bench's ``prepare_for_accuracy_metric`` +
``accuracy_score``. Predictions are compared as pandas parsed them, so ``2.0`` equals ``2``; a fractional
number, an empty cell or text mixed with numbers is refused where scikit-learn refuses it. When the answers
have three or more classes, a text column against numeric answers is accepted and simply never matches
(scikit-learn compares it without complaint), exactly as in the reference.

``compare="strings"`` (text-normalization): both columns are turned into text first, the way pandas 2.2's
``astype(str)`` does it (an empty cell becomes ``'nan'``, ``12.0`` stays ``'12.0'``), then compared exactly:
case, spaces and punctuation all count.

``top1_error`` (inaturalist-2019-fgvc6) is 1 - accuracy over integer class ids where only the first
space-separated token of a prediction counts: each cell is written as text the way pandas 2.2 does it and
its first token cast with ``int``, so ``'42 7 3'`` predicts 42, while ``42.0`` (or any empty cell, which
makes pandas read the whole column as floats) cannot be read and makes the file invalid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.graders._labels import (
    combined_type,
    equal_labels,
    first_token_integers,
    label_values,
    labels_of,
    paired_integer_labels,
)
from grading.engine.graders._validation import (
    grader_function,
    require_frames,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError:  # pragma: no cover
    pa = None
    pc = None

_COMPARE = ("labels", "strings")


@register("accuracy")
@grader_function
def grade(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    compare: str = "labels",
) -> float:
    """Fraction of rows (matched on ``id_column``) whose ``target_column`` equals the answer."""
    if compare not in _COMPARE:
        raise TypeError(f"accuracy: compare must be one of {_COMPARE}, not {compare!r}")
    require_frames(submission, answers, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    if compare == "strings":
        matches = _equal_as_text(submission[target_column], answers[target_column], pairing)
        return float(np.average(matches))
    ids = submission_ids(submission, id_column) if pairing.sub_rows is None else None
    predicted = labels_of(Pairing.take(label_values(submission[target_column]), pairing.sub_rows), target_column, ids)
    truth = labels_of(Pairing.take(label_values(answers[target_column]), pairing.ans_rows), target_column)
    combined_type(truth, predicted, target_column)
    return float(np.average(equal_labels(truth, predicted)))


@register("top1_error")
@grader_function
def grade_top1_error(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Share of rows (matched on ``id_column``) whose first predicted class id is not the answer."""
    truth, predicted = paired_integer_labels(
        submission, answers, id_column=id_column, target_column=target_column, parse=first_token_integers
    )
    return float(1.0 - np.average(truth == predicted))


# ---------------------------------------------------------------------------------------------------
# Text comparison


def _arrow_text(series: pd.Series) -> pa.ChunkedArray | None:
    if pa is None:
        return None
    array = getattr(series.array, "_pa_array", None)
    if array is None:
        return None
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    return pc.fill_null(array, "nan")


def _text_objects(series: pd.Series) -> np.ndarray:
    """pandas 2.2 ``astype(str)`` of a column, as an object array."""
    dtype = series.dtype
    if pd.api.types.is_float_dtype(dtype):
        return np.array([str(v) for v in series.to_numpy(dtype=np.float64, na_value=np.nan).tolist()], dtype=object)
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        if series.hasnans:  # nullable integers: pandas 2.2 would have read them as floats
            return _text_objects(series.astype(np.float64))
        return np.array([str(v) for v in series.tolist()], dtype=object)
    values = series.to_numpy(dtype=object, na_value=np.nan)
    out = values.copy()
    missing = np.asarray(pd.isna(values), dtype=bool)
    out[missing] = "nan"
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        for position in np.flatnonzero(~missing):
            if not isinstance(values[position], str):
                out[position] = str(values[position])
    return out


def _equal_as_text(sub: pd.Series, ans: pd.Series, pairing: Pairing) -> np.ndarray:
    sub_arrow, ans_arrow = _arrow_text(sub), _arrow_text(ans)
    if sub_arrow is not None and ans_arrow is not None:
        if pairing.sub_rows is not None:
            sub_arrow = sub_arrow.take(pa.array(pairing.sub_rows))
        if pairing.ans_rows is not None:
            ans_arrow = ans_arrow.take(pa.array(pairing.ans_rows))
        equal = pc.equal(sub_arrow, ans_arrow)
        return np.asarray(equal.to_numpy(zero_copy_only=False), dtype=bool)
    sub_text = Pairing.take(_text_objects(sub), pairing.sub_rows)
    ans_text = Pairing.take(_text_objects(ans), pairing.ans_rows)
    return np.asarray(sub_text == ans_text, dtype=bool)
