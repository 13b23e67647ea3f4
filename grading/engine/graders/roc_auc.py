"""Binary ROC AUC of one probability column (MLE-bench's ``prepare_for_auroc_metric`` + ``roc_auc_score``).

Validity, as in the reference: the id and target columns must exist (others are ignored), the row count
must equal the answers', the target column must be numeric with every value in [0, 1] (an empty or NaN
cell is rejected: the reference's range check skips NaN but scikit-learn then refuses it), and after
sorting both frames by id the id sequences must be equal element by element.

The AUC itself is computed the way scikit-learn 1.5 does it (stable sort by score, ties grouped, the
ROC curve's collinear points dropped, trapezoidal area), so the floating-point result is the same. One
behaviour changed in later scikit-learn versions and is kept from 1.5 here: answers with a single class
make the metric undefined, which the reference reports as an error (an invalid submission) where newer
versions return NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    grader_function,
    numeric_values,
    require_frames,
    require_unit_interval,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register


def positive_indicator(y_true: np.ndarray, *, column: str) -> np.ndarray:
    """y_true as booleans with the larger of its two classes as the positive one (label_binarize)."""
    classes = np.unique(y_true)
    if len(classes) != 2:
        raise InvalidSubmission(
            f"ROC AUC is undefined for column {show(column)}: the scored answers hold "
            f"{'only one class' if len(classes) < 2 else f'{len(classes)} classes'}, and MLE-bench scores "
            "such a submission as invalid. This is a property of the answers, not of your file"
        )
    return y_true == classes[1]


def roc_curve_points(positive: np.ndarray, y_score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn 1.5's ``roc_curve(..., drop_intermediate=True)``: the (fpr, tpr) points, from (0, 0)."""
    order = np.argsort(y_score, kind="mergesort")[::-1]
    scores = y_score[order]
    truth = positive[order]
    distinct = np.flatnonzero(np.diff(scores))
    thresholds = np.r_[distinct, truth.size - 1]
    tps = np.cumsum(truth, dtype=np.float64)[thresholds]
    fps = 1 + thresholds - tps
    if len(fps) > 2:
        keep = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
        fps = fps[keep]
        tps = tps[keep]
    tps = np.r_[0, tps]
    fps = np.r_[0, fps]
    return fps / fps[-1], tps / tps[-1]


def binary_roc_auc(positive: np.ndarray, y_score: np.ndarray) -> float:
    """scikit-learn 1.5's ``roc_auc_score`` for a boolean truth vector and finite float scores."""
    fpr, tpr = roc_curve_points(positive, y_score)
    return float(np.trapezoid(tpr, fpr))


@register("roc_auc")
@grader_function
def grade(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """ROC AUC of ``target_column`` (probability of the positive class), rows matched on ``id_column``."""
    require_frames(submission, answers, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    y_score = numeric_values(submission[target_column], target_column, ids)
    require_unit_interval(y_score, target_column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    y_true = Pairing.take(answers[target_column].to_numpy(), pairing.ans_rows)
    positive = positive_indicator(y_true, column=target_column)
    return binary_roc_auc(positive, Pairing.take(y_score, pairing.sub_rows))
