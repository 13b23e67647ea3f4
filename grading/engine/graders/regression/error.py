"""Regression errors: RMSE (denoising-dirty-documents, new-york-city-taxi, petfinder-pawpularity) and mean
column-wise RMSLE (nomad2018).

Values are converted as scikit-learn's ``check_array`` converts them: numeric columns directly, text cells
with Python's ``float`` (so ``' 2 '`` or ``'1_000'`` count as numbers, as in the reference). Empty/NaN
and infinite values make the submission invalid. The arithmetic follows scikit-learn 1.5's
``root_mean_squared_error`` and ``root_mean_squared_log_error`` step by step; 1.5's RMSLE refuses any
negative value (later versions accept values above -1), and that is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    RowIds,
    describe_columns,
    float_values_like_sklearn,
    grader_function,
    numeric_values,
    plural,
    require_answers_columns,
    require_columns,
    require_finite,
    require_no_missing,
    require_non_negative,
    require_row_count,
    row_label,
    show,
    submission_ids,
)
from grading.engine.graders.ids import (
    Pairing,
    in_reference_order,
    pair_by_sorted_ids,
    pair_by_sorted_position,
)
from grading.engine.registry import register

_ID_CHECKS = ("sorted_equal", "none")


def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """scikit-learn 1.5's root_mean_squared_error on one output, operation for operation."""
    with np.errstate(over="ignore"):  # huge values give inf, as in the reference
        errors = np.sqrt(np.average((y_true.reshape(-1, 1) - y_pred.reshape(-1, 1)) ** 2, axis=0))
        return float(np.average(errors))


@register("rmse")
@grader_function
def grade_rmse(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    id_check: str = "sorted_equal",
    value_range: Sequence[float] | None = None,
) -> float:
    """Root mean squared error of ``target_column``.

    ``value_range`` ``[low, high]``: every prediction must be a number within it (petfinder's
    ``[1, 100]``); the reference compares the raw column, so a text column is refused there.

    ``id_check``: ``"sorted_equal"`` (the row count must match and, after sorting both frames by id, the
    ids must be equal) or ``"none"`` (new-york-city-taxi's reference: both frames are sorted by id and
    compared row by row with no check that the ids agree; only the row count must match).
    """
    if id_check not in _ID_CHECKS:
        raise TypeError(f"rmse: id_check must be one of {_ID_CHECKS}, not {id_check!r}")
    require_answers_columns(answers, [id_column, target_column])
    require_columns(submission, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    if value_range is not None:
        _require_within(submission[target_column], target_column, ids, value_range)
    if id_check == "sorted_equal":
        require_row_count(submission, len(answers))
        values = float_values_like_sklearn(submission[target_column], target_column, ids)
        pairing = pair_by_sorted_ids(submission, answers, id_column)
    else:
        if len(submission) != len(answers):
            raise InvalidSubmission(
                f"expected {plural(len(answers), 'row')} (one per test {id_column}), got {len(submission)}; "
                f"rows are matched to the answers by sorted {id_column}, so the counts must be equal"
            )
        values = float_values_like_sklearn(submission[target_column], target_column, ids)
        pairing = pair_by_sorted_position(submission, answers, id_column)
    pairing = in_reference_order(pairing, answers, id_column)
    predicted = Pairing.take(values, pairing.sub_rows)
    require_finite(predicted, target_column, ids, rows=pairing.sub_rows)
    truth = Pairing.take(answers[target_column].to_numpy(dtype=np.float64), pairing.ans_rows)
    return rmse(truth, predicted)


def _require_within(series: pd.Series, column: str, ids: RowIds | None, value_range: Sequence[float]) -> None:
    low, high = (float(v) for v in value_range)
    values = numeric_values(series, column, ids)
    inside = (values >= low) & (values <= high)
    if inside.all():
        return
    require_no_missing(values, column, ids, what=f"a number within [{low:g}, {high:g}]")
    positions = np.flatnonzero(~inside)
    examples = "; ".join(f"{row_label(int(p), ids)} has {show(values[int(p)])}" for p in positions[:MAX_EXAMPLES])
    raise InvalidSubmission(
        f"column {show(column)} has {plural(len(positions), 'value')} outside [{low:g}, {high:g}], e.g. "
        f"{examples}; every prediction must lie within that range"
    )


@register("rmsle_columnwise_mean")
@grader_function
def grade_rmsle(submission: pd.DataFrame, answers: pd.DataFrame, *, target_columns: Sequence[str]) -> float:
    """Mean over ``target_columns`` of the root mean squared log error, rows paired by file position.

    nomad2018's reference neither requires nor uses an id column: row i of the submission is scored
    against row i of the answers.
    """
    targets = list(target_columns)
    require_answers_columns(answers, targets)
    require_columns(submission, targets)
    require_row_count(submission, len(answers))
    total = 0.0
    for k, column in enumerate(targets):
        predicted = float_values_like_sklearn(submission[column], column)
        require_finite(predicted, column)
        truth = answers[column].to_numpy(dtype=np.float64)
        if (truth < 0).any():
            raise InvalidSubmission(
                f"RMSLE is undefined: the answers' column {describe_columns([column])} holds negative values, "
                "and MLE-bench scores this as invalid"
            )
        require_non_negative(
            predicted,
            column,
            why="RMSLE (as scored by MLE-bench) refuses negative predictions; clip them at 0",
        )
        if pd.api.types.is_bool_dtype(submission[column].dtype):
            # NumPy's log1p of a boolean array computes in float16, and the reference passes the
            # boolean column through unchanged: reproduce that rounding.
            logged = np.log1p(predicted.astype(bool)).astype(np.float64)
        else:
            logged = np.log1p(predicted)
        error = rmse(np.log1p(truth), logged)
        total = error if k == 0 else total + error
    return total / len(targets)
