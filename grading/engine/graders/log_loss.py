"""Log loss: binary (dogs-vs-cats, statoil), multi-class over one-hot answers (dog-breed, leaf, spooky,
lmsys) and weighted multi-label over long-format answers (rsna-2022-cervical-spine).

The loss is scikit-learn 1.5's ``log_loss``, written out so that newer versions cannot change it:
probabilities are clipped to ``[eps, 1 - eps]`` with ``eps`` the float64 machine epsilon (about
2.22e-16; Kaggle's metric used 1e-15), rows that do not sum to 1 are *not* renormalised (the graders
reject them before, with the tolerance below), and the loss is the mean over rows of
``-sum(y * log(p))``.

Row sums are checked as the reference checks them: pandas row sums (an empty cell counts as 0) compared
with ``numpy.isclose(sum, 1, atol=1e-6)``, whose default relative tolerance makes the effective bound
``|sum - 1| <= 1e-6 + 1e-5``, or, with ``row_sum_decimals`` (lmsys), as "the row sum rounded to that many
decimals equals 1".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import xlogy

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._prob_validation import require_rows_round_to_one
from grading.engine.graders._validation import (
    AnswersProblem,
    describe_columns,
    grader_function,
    numeric_values,
    plural,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_frames,
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
def grade_binary(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Binary log loss; ``target_column`` is the probability of the answers' larger label (e.g. 1 = dog)."""
    require_frames(submission, answers, [id_column, target_column])
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
    row_sum_decimals: int | None = None,
) -> float:
    """Multi-class log loss of one probability column per class against one-hot answers.

    ``columns``: ``"required"`` (id and every class column present, others ignored), ``"exact"`` (the
    columns are exactly id + classes) or ``"positional"`` (exactly 1 + len(classes) columns; the
    probability checks apply to every column after the first, so the id column must come first).
    ``row_sum_decimals``: when set, a row passes when its sum rounded to that many decimals is 1 (instead
    of the ``numpy.isclose`` tolerance of ``row_sum_atol`` and ``row_sum_rtol``).
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
    if row_sum_decimals is None:
        require_rows_sum_to_one(matrix, checked, ids, atol=row_sum_atol, rtol=row_sum_rtol)
    else:
        require_rows_round_to_one(matrix, checked, ids, decimals=row_sum_decimals)
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


@register("log_loss_weighted_multilabel")
@grader_function
def grade_weighted_multilabel(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    group_column: str,
    label_column: str,
    negative_weights: dict[str, float],
    positive_weights: dict[str, float],
    eps: float = 1e-15,
) -> float:
    """Weighted binary log loss over long-format rows, averaged per group, then over groups.

    Each answers row is one (group, label) cell, e.g. ``{study}_C3``: ``label_column`` names the label
    and ``target_column`` holds its 0/1 truth. A cell weighs ``positive_weights[label]`` when its truth is
    1 and ``negative_weights[label]`` when 0; a group's loss is ``sum(w * loss) / sum(w)`` over its cells
    and the score is the mean over groups. Probabilities are clipped to ``[eps, 1 - eps]``. A group with
    fewer cells (a subset of the answers) is averaged over the cells it has.
    """
    require_answers_columns(answers, [id_column, target_column, group_column, label_column])
    require_columns(submission, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    probability = numeric_values(submission[target_column], target_column, ids)
    require_unit_interval(probability, target_column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)

    truth = answers[target_column].to_numpy()
    if truth.dtype.kind not in "biuf" or not np.isin(truth, (0, 1)).all():
        raise AnswersProblem(f"answers column {show(target_column)} must hold 0/1 labels")
    labels = answers[label_column].astype(object)
    weights = np.where(
        truth == 1,
        labels.map(positive_weights).to_numpy(dtype=np.float64, na_value=np.nan),
        labels.map(negative_weights).to_numpy(dtype=np.float64, na_value=np.nan),
    )
    if np.isnan(weights).any():
        unknown = sorted({str(v) for v in labels[np.isnan(weights)].tolist()})
        raise AnswersProblem(
            f"answers column {show(label_column)} holds {plural(len(unknown), 'label')} without a weight: "
            f"{', '.join(unknown[:5])}"
        )
    groups, _ = pd.factorize(answers[group_column], sort=True)
    if (groups < 0).any():
        raise AnswersProblem(f"answers column {show(group_column)} has empty cells")

    p = np.clip(Pairing.take(probability, pairing.sub_rows), eps, 1 - eps)
    rows = pairing.ans_rows
    y = Pairing.take(truth, rows).astype(np.float64)
    w = Pairing.take(weights, rows)
    g = Pairing.take(groups, rows)
    loss = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    per_group = np.bincount(g, weights=w * loss) / np.bincount(g, weights=w)
    return float(np.mean(per_group[np.bincount(g) > 0]))
