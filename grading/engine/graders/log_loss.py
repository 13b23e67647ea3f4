"""Log loss, binary (dogs-vs-cats) and multi-class over one-hot answers (dog-breed, leaf, spooky).

The loss is scikit-learn 1.5's ``log_loss``, written out so that newer versions cannot change it:
probabilities are clipped to ``[eps, 1 - eps]`` with ``eps`` the float64 machine epsilon (about
2.22e-16; Kaggle's metric used 1e-15), rows that do not sum to 1 are *not* renormalised (the graders
reject them before, with the tolerance below), and the loss is the mean over rows of
``-sum(y * log(p))``.

Row sums are checked as the reference checks them: pandas row sums (an empty cell counts as 0) compared
with ``numpy.isclose(sum, 1, atol=1e-6)``, whose default relative tolerance makes the effective bound
``|sum - 1| <= 1e-6 + 1e-5``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import xlogy

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._checks import (
    AnswersProblem,
    describe_columns,
    grader_function,
    numeric_values,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_matrix_in_unit_interval,
    require_no_empty_cells,
    require_row_count,
    require_rows_sum_to_one,
    require_unit_interval,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, in_reference_order, pair_by_sorted_ids
from grading.engine.registry import register

EPS = float(np.finfo(np.float64).eps)
_COLUMN_RULES = ("required", "exact", "positional")


def _loss(truth: np.ndarray, predicted: np.ndarray) -> float:
    clipped = np.clip(predicted, EPS, 1 - EPS)
    per_row = -xlogy(truth, clipped).sum(axis=1)
    return float(np.average(per_row))


@register("log_loss_binary")
@grader_function
def grade_binary(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str
) -> float:
    """Binary log loss; ``target_column`` is the probability of the answers' larger label (e.g. 1 = dog)."""
    require_answers_columns(answers, [id_column, target_column])
    require_columns(submission, [id_column, target_column])
    require_row_count(submission, len(answers))
    ids = submission_ids(submission, id_column)
    probability = numeric_values(submission[target_column], target_column, ids)
    require_unit_interval(probability, target_column, ids)
    pairing = in_reference_order(pair_by_sorted_ids(submission, answers, id_column), answers, id_column)

    labels = Pairing.take(answers[target_column].to_numpy(), pairing.ans_rows)
    classes = np.unique(labels)
    if len(classes) != 2:
        raise InvalidSubmission(
            f"log loss is undefined here: the answers hold {len(classes)} distinct labels in column "
            f"{show(target_column)} where 2 are needed, and MLE-bench scores this as invalid"
        )
    positive = (labels == classes[1]).astype(np.int64).reshape(-1, 1)
    truth = np.append(1 - positive, positive, axis=1)
    p = Pairing.take(probability, pairing.sub_rows).reshape(-1, 1)
    predicted = np.append(1 - p, p, axis=1)
    return _loss(truth, predicted)


@register("log_loss_multiclass")
@grader_function
def grade_multiclass(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    class_columns: Sequence[str],
    columns: str = "required",
    row_sum_atol: float = 1e-6,
    row_sum_rtol: float = 1e-5,
) -> float:
    """Multi-class log loss of one probability column per class against one-hot answers.

    ``columns``: ``"required"`` (id and every class column present, others ignored), ``"exact"`` (the
    columns are exactly id + classes) or ``"positional"`` (exactly 1 + len(classes) columns; the
    probability checks apply to every column after the first, so the id column must come first).
    """
    if columns not in _COLUMN_RULES:
        raise TypeError(f"log_loss_multiclass: columns must be one of {_COLUMN_RULES}, not {columns!r}")
    classes = list(class_columns)
    expected = [id_column, *classes]
    require_answers_columns(answers, expected)

    if columns == "positional":
        if submission.shape != (len(answers), len(expected)):
            rows, cols = submission.shape
            problems = []
            if rows != len(answers):
                problems.append(f"{rows} rows instead of {len(answers)}")
            if cols != len(expected):
                problems.append(f"{cols} columns instead of {len(expected)}")
            raise InvalidSubmission(
                f"expected exactly {len(answers)} rows and the {len(expected)} columns "
                f"{describe_columns(expected)} (id first); the file has {' and '.join(problems)}"
            )
        checked = list(submission.columns[1:])
        matrix_source = [submission.iloc[:, j] for j in range(1, submission.shape[1])]
        if id_column in checked and not pd.api.types.is_numeric_dtype(submission[id_column].dtype):
            raise InvalidSubmission(
                f"the id column {show(id_column)} must be the first column, followed by "
                f"{describe_columns(classes)}: MLE-bench reads the probabilities from the columns after the first"
            )
    else:
        if columns == "exact":
            require_exact_columns(submission, expected)
        else:
            require_columns(submission, expected)
        require_row_count(submission, len(answers))
        checked = classes
        matrix_source = [submission[c] for c in classes]

    ids = submission_ids(submission, id_column)
    matrix = np.empty((len(submission), len(checked)), dtype=np.float64)
    for j, (name, series) in enumerate(zip(checked, matrix_source)):
        matrix[:, j] = numeric_values(series, str(name), ids)
    require_no_empty_cells(matrix, checked, ids)
    require_rows_sum_to_one(matrix, checked, ids, atol=row_sum_atol, rtol=row_sum_rtol)
    require_matrix_in_unit_interval(matrix, checked, ids)

    if columns == "positional":  # the reference then requires the named columns as well
        require_columns(submission, expected)
        predicted_all = np.empty((len(submission), len(classes)), dtype=np.float64)
        for j, c in enumerate(classes):
            predicted_all[:, j] = numeric_values(submission[c], c, ids)
    else:
        predicted_all = matrix

    pairing = in_reference_order(pair_by_sorted_ids(submission, answers, id_column), answers, id_column)
    truth = Pairing.take(_one_hot(answers, classes), pairing.ans_rows)
    predicted = Pairing.take(predicted_all, pairing.sub_rows)
    return _loss(truth, predicted)


def _one_hot(answers: pd.DataFrame, classes: list[str]) -> np.ndarray:
    truth = answers[classes].to_numpy()
    if truth.dtype.kind not in "biuf" or not np.isin(truth, (0, 1)).all():
        raise AnswersProblem(f"answers columns {describe_columns(classes)} must be one-hot 0/1 labels")
    return truth
