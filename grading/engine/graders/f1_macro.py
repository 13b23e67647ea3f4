"""Macro-averaged F1 over integer class ids (herbarium 2020-2022, iwildcam-2019).

As in the reference: the submission must have one row per test id (same row count, the sorted id
sequences equal) and the id and label columns; labels on both sides are cast to int the way pandas'
``astype(int)`` casts them (see :func:`integer_labels`), and a cell that cannot be cast makes the file
invalid. The score is scikit-learn's ``f1_score(y_true, y_pred, average="macro")`` with its default label
set, the sorted union of true and predicted ids: a predicted id that never occurs in the truth adds a class
whose F1 is 0, and a true class never predicted scores 0 too.

Per class, F1 = 2·TP / (true count + predicted count), scikit-learn's own formula; counts come from one
``np.unique`` over both label vectors and three ``bincount`` calls, so 64,500 classes and 477,000 rows cost
milliseconds and memory linear in the rows (no confusion matrix).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._checks import (
    grader_function,
    require_answers_columns,
    require_columns,
    require_row_count,
    submission_ids,
)
from grading.engine.graders._labels import integer_labels
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """``f1_score(y_true, y_pred, average="macro")`` over the union of the labels, by counting."""
    labels, inverse = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    n_labels = len(labels)
    true_codes, pred_codes = inverse[: len(y_true)], inverse[len(y_true) :]
    true_counts = np.bincount(true_codes, minlength=n_labels)
    pred_counts = np.bincount(pred_codes, minlength=n_labels)
    hits = np.bincount(true_codes[true_codes == pred_codes], minlength=n_labels)
    # every label of the union is true or predicted somewhere, so the denominator is never 0
    f1 = (2.0 * hits) / (true_counts + pred_counts)
    return float(np.mean(f1))


@register("f1_macro")
@grader_function
def grade(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Macro F1 of ``target_column`` (integer class ids) against the answers, rows matched on ``id_column``."""
    require_answers_columns(answers, [id_column, target_column])
    if answers.empty:
        raise AnswersProblem("the answers have no rows")
    require_row_count(submission, len(answers))
    require_columns(submission, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    predicted = integer_labels(
        submission[target_column], target_column, submission_ids(submission, id_column)
    )
    try:
        truth = integer_labels(answers[target_column], target_column)
    except InvalidSubmission as problem:
        raise AnswersProblem(f"the answers' labels are not integers: {problem}") from None
    return macro_f1(Pairing.take(truth, pairing.ans_rows), Pairing.take(predicted, pairing.sub_rows))
