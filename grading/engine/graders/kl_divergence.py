"""KL divergence between expert vote distributions and predicted probabilities (HMS brain activity).

The answers hold vote counts (one column per class, several rows per ``eeg_id``); the truth of a row is
its votes divided by their sum. The score is Kaggle's micro-averaged KL divergence: per row the sum over
classes of ``t * log(t / p)`` with ``p`` clipped to ``[1e-15, 1 - 1e-15]`` and terms with ``t = 0``
counting 0, then the mean over rows.

Validity follows MLE-bench and the Kaggle metric it calls, in that order:

* the id and the class columns must be present and the row count must equal the answers';
* each row's class probabilities must sum to 1 once rounded to 5 decimals (pandas sums: an empty cell
  counts as 0);
* the *set* of ids must equal the answers' (the answers repeat ids; how often each id appears is not
  checked, and rows are paired by position after sorting both files by id);
* Kaggle's ``verify_valid_probabilities`` on every non-id column of the submission, extra columns
  included: numeric, smallest value >= 0, largest <= 1, row sums ``numpy.allclose`` to 1. Empty cells are
  skipped by these pandas checks.

An empty cell that passes those checks is skipped by the metric's pandas row sum too, so its term counts
0, exactly as in the reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._prob_validation import require_rows_round_to_one, require_same_id_set, row_sums
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    RowIds,
    describe_columns,
    grader_function,
    numeric_values,
    plural,
    require_frames,
    row_label,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_position
from grading.engine.registry import register

_ALLCLOSE_RTOL = 1e-5
_ALLCLOSE_ATOL = 1e-8


def _extra_hint(extra: list[str]) -> str:
    if not extra:
        return ""
    return (
        f" (the extra {'column' if len(extra) == 1 else 'columns'} {describe_columns(extra)} "
        f"{'is' if len(extra) == 1 else 'are'} checked as probabilities too; remove "
        f"{'it' if len(extra) == 1 else 'them'})"
    )


def _verify_probabilities(
    matrix: np.ndarray, columns: list[str], extra: list[str], ids: RowIds | None, id_column: str
) -> None:
    """Kaggle's ``verify_valid_probabilities`` over every non-id column (NaN skipped as pandas does)."""
    for name, bad, what in (
        ("below 0", matrix < 0, "must be at least 0"),
        ("above 1", matrix > 1, "must be at most 1"),
    ):
        if bad.any():
            rows, cols = np.nonzero(bad)
            examples = "; ".join(
                f"{row_label(r, ids)}, column {show(columns[c])} has {show(matrix[r, c])}"
                for r, c in list(zip(rows.tolist(), cols.tolist()))[:MAX_EXAMPLES]
            )
            raise InvalidSubmission(
                f"every value outside the {show(id_column)} column {what}; "
                f"{plural(len(rows), 'value')} {'is' if len(rows) == 1 else 'are'} {name}, e.g. {examples}"
                + _extra_hint(extra)
            )
    sums = row_sums(matrix)
    close = np.abs(sums - 1.0) <= _ALLCLOSE_ATOL + _ALLCLOSE_RTOL
    if not close.all():
        positions = np.flatnonzero(~close)
        examples = "; ".join(f"{row_label(int(p), ids)} sums to {sums[int(p)]:.10g}" for p in positions[:3])
        raise InvalidSubmission(
            f"the values of each row outside the {show(id_column)} column must add up to 1; "
            f"{plural(len(positions), 'row')} {'does' if len(positions) == 1 else 'do'} not: {examples}"
            + _extra_hint(extra)
        )


@register("kl_divergence_votes")
@grader_function
def grade(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    vote_columns: Sequence[str],
    row_sum_decimals: int = 5,
    eps: float = 1e-15,
) -> float:
    """Mean over rows of KL(votes normalised per row || predicted probabilities)."""
    votes = list(vote_columns)
    require_frames(submission, answers, [id_column, *votes])
    ids = submission_ids(submission, id_column)
    predicted = np.empty((len(submission), len(votes)), dtype=np.float64)
    for j, column in enumerate(votes):
        predicted[:, j] = numeric_values(submission[column], column, ids)
    require_rows_round_to_one(predicted, votes, ids, decimals=row_sum_decimals)
    require_same_id_set(submission, answers, id_column)

    extra = [str(c) for c in submission.columns if c != id_column and c not in set(votes)]
    if extra:
        checked = [*votes, *extra]
        matrix = np.empty((len(submission), len(checked)), dtype=np.float64)
        matrix[:, : len(votes)] = predicted
        for j, column in enumerate(extra, start=len(votes)):
            matrix[:, j] = numeric_values(submission.iloc[:, list(submission.columns).index(column)], column, ids)
    else:
        checked, matrix = votes, predicted
    with np.errstate(invalid="ignore"):
        _verify_probabilities(matrix, checked, extra, ids, id_column)

    counts = _vote_counts(answers, votes)
    pairing = pair_by_sorted_position(submission, answers, id_column)
    truth = Pairing.take(counts / counts.sum(axis=1, keepdims=True), pairing.ans_rows)
    p = np.clip(Pairing.take(predicted, pairing.sub_rows), eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(truth != 0, truth * np.log(truth / p), 0.0)
    return float(np.mean(np.nansum(terms, axis=1)))


def _vote_counts(answers: pd.DataFrame, votes: list[str]) -> np.ndarray:
    try:
        counts = answers[votes].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise AnswersProblem(f"answers columns {describe_columns(votes)} must hold vote counts") from exc
    totals = counts.sum(axis=1)
    if not (np.isfinite(counts).all() and (counts >= 0).all() and (totals > 0).all()):
        raise AnswersProblem(
            f"answers columns {describe_columns(votes)} must hold non-negative vote counts, at least one per row"
        )
    return counts
