"""Probabilistic F-beta (RSNA screening mammography, pF1).

Kaggle's ``pfbeta``: each prediction is clipped to ``[0, 1]``; ``cTP`` is the sum of the predictions on
positive rows, ``cFP`` the sum on negative rows; ``precision = cTP / (cTP + cFP)``, ``recall = cTP /
positives`` and the score is ``(1 + b^2) * P * R / (b^2 * P + R)`` when both are positive, else 0.

Validity as in MLE-bench: the id and target columns must be present, the row count must equal the
answers' and the sorted id sequences must be equal. Predictions need not lie in [0, 1] (they are
clipped) but must be numbers. When every prediction is 0 (after clipping) the precision divides by zero
and the file is invalid. An empty (NaN) prediction makes Kaggle's sums NaN, and the function then returns
0: such a file is valid and scores 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    grader_function,
    numeric_values,
    require_frames,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register


def probabilistic_f_beta(positive: np.ndarray, predictions: np.ndarray, beta: float) -> float:
    """Kaggle's pF-beta on a boolean truth vector; raises ZeroDivisionError where Kaggle's loop does."""
    clipped = np.clip(predictions, 0.0, 1.0)
    ctp = float(np.sum(clipped[positive]))
    cfp = float(np.sum(clipped[~positive]))
    positives = int(positive.sum())
    if np.isnan(ctp) or np.isnan(cfp):
        return 0.0
    precision = ctp / (ctp + cfp)
    recall = ctp / positives
    if precision > 0 and recall > 0:
        beta_squared = beta * beta
        return (1 + beta_squared) * precision * recall / (beta_squared * precision + recall)
    return 0.0


@register("probabilistic_f_beta")
@grader_function
def grade(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str, beta: float = 1.0
) -> float:
    """pF-beta of ``target_column`` (probability of the positive class 1), rows matched on ``id_column``."""
    require_frames(submission, answers, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    values = numeric_values(submission[target_column], target_column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    truth = Pairing.take(answers[target_column].to_numpy(), pairing.ans_rows)
    positive = np.asarray(truth == 1, dtype=bool)
    if not positive.any():
        raise InvalidSubmission(
            f"pF-beta is undefined here: the scored answers hold no positive row in column "
            f"{show(target_column)} (recall divides by zero), and MLE-bench scores this as invalid. This is "
            "a property of the answers, not of your file"
        )
    predictions = Pairing.take(values, pairing.sub_rows)
    with np.errstate(invalid="ignore"):
        nothing_predicted = not np.isnan(predictions).any() and not (np.clip(predictions, 0, 1) > 0).any()
    if nothing_predicted:
        raise InvalidSubmission(
            f"every prediction in column {show(target_column)} is 0 (or below 0, which counts as 0), so the "
            "probabilistic precision divides by zero and MLE-bench scores the file as invalid; predict a "
            "probability above 0 for at least one row"
        )
    return probabilistic_f_beta(positive, predictions, beta)
