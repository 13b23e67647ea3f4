"""Quadratic weighted Cohen's kappa (aptos2019-blindness-detection).

As in the reference: the label column must exist, the submission must not be empty, its set of ids must
be the answers' set (a repeated id then leaves the row counts different, which scikit-learn refuses),
and the labels are used as given, without rounding: a fractional number such as ``2.5`` is refused
(scikit-learn calls it a continuous target), while ``2.0`` counts as ``2``. The kappa is scikit-learn
1.5's ``cohen_kappa_score(y_pred, y_true, weights="quadratic")`` written out: the weights use the
position of each label in the sorted union of predicted and true labels, so an out-of-range prediction
such as 7 widens the scale exactly as it does in the reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._labels import combined_type, label_values, labels_of, require_same_kind
from grading.engine.graders._validation import (
    grader_function,
    require_answers_columns,
    require_columns,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register


def quadratic_weighted_kappa(y1: np.ndarray, y2: np.ndarray) -> float:
    """``cohen_kappa_score(y1, y2, weights="quadratic")`` for label arrays of the same kind."""
    labels, inverse = np.unique(np.concatenate([y1, y2]), return_inverse=True)
    n_labels = len(labels)
    i1, i2 = inverse[: len(y1)], inverse[len(y1) :]
    confusion: np.ndarray = np.bincount(i1 * n_labels + i2, minlength=n_labels * n_labels).astype(np.int64)
    confusion = confusion.reshape(n_labels, n_labels)
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w_mat = np.zeros([n_labels, n_labels], dtype=int)
    w_mat += np.arange(n_labels)
    w_mat = (w_mat - w_mat.T) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.sum(w_mat * confusion) / np.sum(w_mat * expected)
    return float(1 - k)


@register("quadratic_weighted_kappa")
@grader_function
def grade(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Quadratic weighted kappa between ``target_column`` and the answers, rows matched on ``id_column``."""
    require_answers_columns(answers, [id_column, target_column])
    require_columns(submission, [target_column], expected=[id_column, target_column])
    if submission.empty:
        raise InvalidSubmission("the submission has no rows; submit one row per test id")
    require_columns(submission, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    ids = submission_ids(submission, id_column) if pairing.sub_rows is None else None
    predicted = labels_of(Pairing.take(label_values(submission[target_column]), pairing.sub_rows), target_column, ids)
    truth = labels_of(Pairing.take(label_values(answers[target_column]), pairing.ans_rows), target_column)
    combined_type(truth, predicted, target_column)
    require_same_kind(truth, predicted, target_column)
    return quadratic_weighted_kappa(predicted.values, truth.values)
