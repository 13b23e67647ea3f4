"""Mean absolute error: plain (predict-volcanic-eruptions), over a subset of rows (ventilator-pressure),
and the mean over groups of log(MAE) (champs-scalar-coupling).

Values are converted as scikit-learn's ``check_array`` converts them (text cells with Python's ``float``);
an empty, NaN or infinite prediction in a scored row makes the submission invalid, as scikit-learn refuses
it. Rows that are not scored (ventilator's expiratory phase) are never looked at.

Two ways of matching rows, as in the references:

* ``id_check="sorted_equal"``: the row count must equal the answers' and the sorted id sequences must be
  equal (each id exactly once);
* ``id_check="set_equal"``: only the *set* of ids must equal the answers' set, then the frames are
  inner-merged on the id, so a repeated id is scored once per row.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    float_values_like_sklearn,
    grader_function,
    require_answers_columns,
    require_columns,
    require_finite,
    require_row_count,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, in_reference_order, pair_by_sorted_ids
from grading.engine.graders.regression.ids import merge_rows_by_id_set
from grading.engine.registry import register

_ID_CHECKS = ("sorted_equal", "set_equal")


def paired_rows(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str, id_check: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(sub_rows, ans_rows)``: the scored pairs, in the reference's row order."""
    if id_check == "set_equal":
        return merge_rows_by_id_set(submission, answers, id_column)
    require_row_count(submission, len(answers))
    pairing = in_reference_order(pair_by_sorted_ids(submission, answers, id_column), answers, id_column)
    n = len(answers)
    sub_rows = np.arange(n) if pairing.sub_rows is None else pairing.sub_rows
    ans_rows = np.arange(n) if pairing.ans_rows is None else pairing.ans_rows
    return sub_rows, ans_rows


def scored_predictions(submission: pd.DataFrame, column: str, id_column: str, sub_rows: np.ndarray) -> np.ndarray:
    ids = submission_ids(submission, id_column)
    predicted = float_values_like_sklearn(submission[column], column, ids, rows=sub_rows)
    require_finite(predicted, column, ids, rows=sub_rows)
    return predicted


def _check_id_check(grader: str, id_check: str) -> None:
    if id_check not in _ID_CHECKS:
        raise TypeError(f"{grader}: id_check must be one of {_ID_CHECKS}, not {id_check!r}")


@register("mae")
@grader_function
def grade_mae(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    id_check: str = "sorted_equal",
    only_where: dict[str, Any] | None = None,
    integer_score: bool = False,
) -> float:
    """Mean absolute error of ``target_column``.

    ``only_where`` ({answers column: value}) scores only the rows whose answers have that value
    (ventilator: ``{"u_out": 0}``); ``integer_score`` returns ``int(round(mae))`` (volcanic eruptions).
    """
    _check_id_check("mae", id_check)
    conditions = dict(only_where or {})
    require_answers_columns(answers, [id_column, target_column, *conditions])
    require_columns(submission, [id_column, target_column])
    sub_rows, ans_rows = paired_rows(submission, answers, id_column, id_check)
    if conditions:
        scored = np.ones(len(ans_rows), dtype=bool)
        for column, value in conditions.items():
            scored &= answers[column].to_numpy()[ans_rows] == value
        sub_rows, ans_rows = sub_rows[scored], ans_rows[scored]
        if not len(ans_rows):
            where = ", ".join(f"{c} == {show(v)}" for c, v in conditions.items())
            raise InvalidSubmission(f"no answers row has {where}, so there is nothing to score")
    predicted = scored_predictions(submission, target_column, id_column, sub_rows)
    truth = Pairing.take(answers[target_column].to_numpy(dtype=np.float64), ans_rows)
    with np.errstate(over="ignore"):
        mae = np.average(np.abs(predicted - truth))
    return float(round(mae)) if integer_score else float(mae)  # round() of a float gives an int


@register("grouped_log_mae")
@grader_function
def grade_grouped_log_mae(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    group_column: str,
    mae_floor: float = 1e-9,
    id_check: str = "set_equal",
) -> float:
    """Mean over the answers' ``group_column`` values of log(max(MAE of the group, ``mae_floor``)).

    The groups come from the answers (champs: the coupling ``type``); every group present in the scored
    rows counts once, whatever its size.
    """
    _check_id_check("grouped_log_mae", id_check)
    require_answers_columns(answers, [id_column, target_column, group_column])
    require_columns(submission, [id_column, target_column])
    sub_rows, ans_rows = paired_rows(submission, answers, id_column, id_check)
    predicted = scored_predictions(submission, target_column, id_column, sub_rows)
    truth = answers[target_column].to_numpy(dtype=np.float64)[ans_rows]
    codes, groups = pd.factorize(answers[group_column], sort=True, use_na_sentinel=False)
    codes = codes[ans_rows]
    by_group = np.argsort(codes, kind="stable")  # each group's rows in the merge's order
    with np.errstate(over="ignore"):
        errors = np.abs(predicted - truth)[by_group]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(groups)))])
    logs = [
        np.log(max(float(np.average(errors[lo:hi])), mae_floor)) for lo, hi in itertools.pairwise(bounds) if hi > lo
    ]
    return float(np.mean(logs))
