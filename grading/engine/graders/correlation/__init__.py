"""Correlation metrics: Kendall tau of orders, column-wise Spearman, Pearson, Matthews correlation.

``kendall_tau_orders`` (AI4Code): each row holds the predicted order of a notebook's cells as
space-separated cell ids. As in the reference, the row count must equal the answers', the set of ids must
equal theirs, each row must list as many cell ids as the notebook has cells, and every listed id must be
one of the notebook's cells. Like the reference's ``truth.index(cell)``, an id listed twice takes the same
rank twice (equal ranks are no inversion), so such a row is scored rather than refused. The score is
pooled: ``1 - 4 * sum(inversions) / sum(n * (n - 1))`` over all notebooks, not a mean of per-notebook taus.

``spearman_columnwise_mean`` (google-quest-challenge): the columns must be exactly the id and the
targets, the row count must equal the answers'; the ids are *not* compared: both frames are sorted by id
and paired row by row. Each target's Spearman correlation is scipy's ``spearmanr``: a constant column
(in the submission or the answers) or an empty cell gives NaN for that column, and the mean is then NaN,
which MLE-bench counts as a valid score that earns nothing. Unlike ``pearsonr``, SciPy 1.13's ``spearmanr``
already returned NaN for NaN input (its default ``nan_policy='propagate'``) and ranked infinities as the
largest or smallest values, as SciPy does now, so nothing here depends on the SciPy version.

``pearson`` (us-patent-phrase-to-phrase-matching): scipy's ``pearsonr`` after matching rows by id (the
row count must equal the answers' and the sorted ids must be equal), as SciPy 1.13 ran it for the
reference: constant predictions give NaN, a valid score that earns nothing, but an empty cell (NaN) or an
infinity makes the file invalid, where later SciPy returns NaN (see :func:`grade_pearson`).

``matthews_corrcoef`` (nfl-player-contact-detection): scikit-learn 1.5's ``matthews_corrcoef`` written out
over the confusion matrix, after matching rows by id. Predictions are class labels as scikit-learn reads
them: ``1.0`` counts as ``1``, a probability such as ``0.7`` or an empty cell makes the file invalid.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from grading.engine.graders._labels import combined_type, label_values, labels_of, require_same_kind
from grading.engine.graders._validation import (
    AnswersProblem,
    InvalidSubmission,
    RowIds,
    describe_columns,
    grader_function,
    numeric_values,
    require_answers_columns,
    require_exact_columns,
    require_finite,
    require_frames,
    require_row_count,
    row_label,
    show,
    submission_ids,
)
from grading.engine.graders.correlation.kendall import arrow_kendall_tau, kendall_tau_of_orders, text_cells
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids, pair_by_sorted_position
from grading.engine.registry import register


@register("kendall_tau_orders")
@grader_function
def grade_kendall_tau(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, order_column: str) -> float:
    """Pooled Kendall tau between the predicted and true orders in ``order_column``, rows matched on id."""
    require_frames(submission, answers, [id_column, order_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    n = len(answers)
    sub_rows = np.arange(n) if pairing.sub_rows is None else pairing.sub_rows
    ans_rows = np.arange(n) if pairing.ans_rows is None else pairing.ans_rows
    fast = arrow_kendall_tau(submission[order_column], answers[order_column], sub_rows, ans_rows)
    if fast is not None:
        return fast
    predicted = text_cells(submission[order_column])
    truth = text_cells(answers[order_column])
    return kendall_tau_of_orders(
        [predicted[i] for i in sub_rows.tolist()],
        [truth[i] for i in ans_rows.tolist()],
        column=order_column,
        submission_rows=sub_rows,
        ids=submission_ids(submission, id_column),
    )


@register("spearman_columnwise_mean")
@grader_function
def grade_spearman(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_columns: Sequence[str]
) -> float:
    """Mean over ``target_columns`` of scipy's Spearman correlation; rows paired after sorting by id."""
    targets = list(target_columns)
    require_answers_columns(answers, [id_column, *targets])
    require_exact_columns(submission, [id_column, *targets])
    require_row_count(submission, len(answers))
    ids = submission_ids(submission, id_column)
    pairing = pair_by_sorted_position(submission, answers, id_column)
    correlations = []
    for column in targets:
        predicted = Pairing.take(numeric_values(submission[column], column, ids), pairing.sub_rows)
        truth = Pairing.take(_answers_float(answers, column), pairing.ans_rows)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN
            correlations.append(float(stats.spearmanr(truth, predicted).statistic))
    return float(np.mean(correlations))


@register("pearson")
@grader_function
def grade_pearson(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """scipy's Pearson correlation between ``target_column`` and the answers, rows matched on id.

    SciPy 1.13's ``pearsonr`` first returns NaN when either side is constant (every value equal to the
    first; NaN equals nothing, so a column holding NaN is never constant), then centres both sides and
    takes their norms with ``scipy.linalg.norm``, which raises ValueError on NaN or an infinity. So the
    reference refuses predictions holding NaN or infinities, or numbers so large that their mean
    overflows, where later SciPy (1.18, for one) returns NaN.
    """
    require_frames(submission, answers, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    predicted = numeric_values(submission[target_column], target_column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    truth = Pairing.take(_answers_float(answers, target_column), pairing.ans_rows)
    paired = Pairing.take(predicted, pairing.sub_rows)
    if (truth == truth[0]).all() or (paired == paired[0]).all():
        return math.nan  # scipy warns that the correlation is undefined and returns NaN
    _require_centrable(predicted, target_column, ids)
    if not np.isfinite(truth).all():
        raise AnswersProblem(f"the answers' column {show(target_column)} holds NaN or infinities")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # a nearly constant input: scipy warns and goes on
        return float(stats.pearsonr(truth, paired).statistic)


def _require_centrable(values: np.ndarray, column: str, ids: RowIds | None) -> None:
    """What SciPy 1.13's ``linalg.norm(x - x.mean())`` accepts: finite values with a finite mean."""
    require_finite(values, column, ids)
    with np.errstate(over="ignore", invalid="ignore"):
        overflows = not np.isfinite(values - values.mean()).all()
    if overflows:
        largest = int(np.argmax(np.abs(values)))
        raise InvalidSubmission(
            f"column {show(column)} holds numbers too large to average (their mean overflows), e.g. "
            f"{show(values[largest])} in {row_label(largest, ids)}; write scores on the answers' scale"
        )


def matthews_corrcoef(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """scikit-learn 1.5's ``matthews_corrcoef`` for two label vectors of the same kind."""
    labels, inverse = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    k = len(labels)
    n = len(y_true)
    confusion = np.bincount(inverse[:n] * k + inverse[n:], minlength=k * k).reshape(k, k)
    t_sum = confusion.sum(axis=1, dtype=np.float64)
    p_sum = confusion.sum(axis=0, dtype=np.float64)
    n_correct = np.trace(confusion, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = n_correct * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp = n_samples**2 - np.dot(p_sum, p_sum)
    cov_ytyt = n_samples**2 - np.dot(t_sum, t_sum)
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


@register("matthews_corrcoef")
@grader_function
def grade_mcc(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Matthews correlation coefficient of the labels in ``target_column``, rows matched on id."""
    require_frames(submission, answers, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    ids = submission_ids(submission, id_column) if pairing.sub_rows is None else None
    predicted = labels_of(Pairing.take(label_values(submission[target_column]), pairing.sub_rows), target_column, ids)
    truth = labels_of(Pairing.take(label_values(answers[target_column]), pairing.ans_rows), target_column)
    combined_type(truth, predicted, target_column)
    require_same_kind(truth, predicted, target_column)
    return matthews_corrcoef(truth.values, predicted.values)


def _answers_float(answers: pd.DataFrame, column: str) -> np.ndarray:
    try:
        return answers[column].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise AnswersProblem(f"the answers' column {describe_columns([column])} is not numeric") from exc
