"""Ranking metrics: MAP@k over space-separated predictions (H&M, hotel-id, whale) and lwlrap (freesound).

``map_at_k``
    Mean over the answers' rows of AP@k (the ``ml_metrics`` definition MLE-bench uses): the predicted
    list is cut to its first k tokens; walking it, a token counts as a hit when it is in the row's true
    set and has not appeared earlier in the list (a repeat still takes its place); each hit adds
    ``hits so far / rank``; the sum is divided by ``min(|true set|, k)``. Tokens come from splitting on
    single spaces (``str.split(" ")``) and are compared as text, so ``'0108775015'`` does not match
    ``'108775015'``. An empty prediction cell scores 0 for its row. The true set is the answers cell split
    the same way.

    ``ids="same"`` (hotel-id, whale): the submission has one row per answers row and the same ids.
    ``ids="superset"`` (H&M): the submission must contain every answers id; rows of other ids are dropped
    before scoring. As in MLE-bench, a repeated id is not refused there: after dropping, both files are
    sorted by id and paired by position, the surplus rows at the end being ignored, so every row after a
    repeat is scored against the next answers row.

``lwlrap``
    Label-weighted label-ranking average precision: scikit-learn's ``label_ranking_average_precision_score``
    with each clip weighted by its number of true labels (clips without labels weigh nothing). Per clip,
    each true label scores ``(true labels ranked at or above it) / (labels ranked at or above it)``, ties
    counted against it; a clip whose labels are all true (or none) scores 1. The columns must be exactly
    the id then the class columns in the sample submission's order; values are read with ``pd.to_numeric``
    and must be finite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    RowIds,
    describe_columns,
    grader_function,
    plural,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_finite,
    require_row_count,
    row_label,
    show,
    show_many,
    submission_ids,
)
from grading.engine.graders.ids import (
    AnswersHaveDuplicateIds,
    Pairing,
    in_reference_order,
    match_permutation,
    pair_by_sorted_ids,
    reference_sort_order,
)
from grading.engine.graders.ranking.tokens import (
    codes,
    column_tokens,
    first_occurrences,
    pyarrow_isin,
    sorted_unique,
    vocabulary_of,
)
from grading.engine.registry import register

_COLUMNS = ("required", "exact")
_IDS = ("same", "superset")
_REFERENCE_ORDER_LIMIT = 250_000


# ---------------------------------------------------------------------------------------------------
# MAP@k


@register("map_at_k")
@grader_function
def grade_map_at_k(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    k: int,
    columns: str = "required",
    ids: str = "same",
) -> float:
    """Mean average precision at ``k`` of the space-separated predictions in ``target_column``."""
    if columns not in _COLUMNS or ids not in _IDS or not isinstance(k, int) or k < 1:
        raise TypeError(f"map_at_k: bad parameters columns={columns!r}, ids={ids!r}, k={k!r}")
    expected = [id_column, target_column]
    require_answers_columns(answers, expected)
    if columns == "exact":
        require_exact_columns(submission, expected)
    else:
        require_columns(submission, expected)
    sub_rows: np.ndarray | None
    if ids == "superset":
        sub_rows, ans_rows = _superset_pairing(submission, answers, id_column)
    else:
        require_row_count(submission, len(answers))
        pairing = pair_by_sorted_ids(submission, answers, id_column)
        sub_rows, ans_rows = pairing.sub_rows, pairing.ans_rows
    predicted = submission[target_column]
    if sub_rows is not None:  # only the scored rows are split (H&M lists 17x more customers than it scores)
        predicted = predicted.iloc[sub_rows]
    per_row = average_precision_at_k(predicted, answers[target_column], answer_rows=ans_rows, k=k)
    return _mean_in_reference_order(per_row, answers, id_column)


def average_precision_at_k(
    predicted: pd.Series, actual: pd.Series, *, answer_rows: np.ndarray | None, k: int
) -> np.ndarray:
    """AP@k of each answers row; prediction i is scored against answers row ``answer_rows[i]`` (None: row i).
    Answers rows without a prediction get 0."""
    n = len(actual)
    truth = column_tokens(actual, split="space")
    vocabulary = vocabulary_of(truth)
    size = max(len(vocabulary), 1)
    true_keys = sorted_unique(truth.rows * size + codes(truth, vocabulary))
    true_count = np.bincount(true_keys // size, minlength=n)

    guess = column_tokens(predicted, split="space", limit=k)
    row = guess.rows if answer_rows is None else np.asarray(answer_rows, dtype=np.int64)[guess.rows]
    code = codes(guess, vocabulary)
    known = code >= 0
    row, code, position = row[known], code[known], guess.position[known]
    keys = row * size + code
    first = first_occurrences(keys)  # a repeated token is not a second hit
    found = np.searchsorted(true_keys, keys)
    found[found == len(true_keys)] = 0
    hit = first & (true_keys[found] == keys) if len(true_keys) else np.zeros(len(keys), dtype=bool)
    hit_rows, hit_position = row[hit], position[hit]
    # tokens stay in (row, position) order, so the hits of a row are consecutive
    index = np.arange(len(hit_rows))
    starts = np.ones(len(hit_rows), dtype=bool)
    starts[1:] = hit_rows[1:] != hit_rows[:-1]
    hits_so_far = index - np.maximum.accumulate(np.where(starts, index, 0)) + 1
    score = np.bincount(hit_rows, weights=hits_so_far / (hit_position + 1.0), minlength=n)
    denominator = np.minimum(true_count, k)
    return np.divide(score, denominator, out=np.zeros(n), where=denominator > 0)


def _superset_pairing(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """(submission rows, answers rows) paired as "keep the answers' ids, sort both by id, zip"."""
    sub_ids, ans_ids = submission[id_column], answers[id_column]
    covered = pyarrow_isin(ans_ids, sub_ids)
    if not covered.all():
        absent = np.flatnonzero(~covered)
        examples = show_many(ans_ids.iloc[absent[:MAX_EXAMPLES]].tolist())
        raise InvalidSubmission(
            f"the submission lacks {plural(len(absent), 'id')} of the test set in column {show(id_column)} "
            f"(e.g. {examples}); include a row for every {id_column} of the sample submission "
            "(extra ids are allowed and ignored)"
        )
    kept = np.flatnonzero(pyarrow_isin(sub_ids, ans_ids))
    scored = sub_ids.iloc[kept].reset_index(drop=True)
    if len(kept) == len(answers):  # each test id exactly once: paired by id
        try:
            match = match_permutation(scored, ans_ids)
        except AnswersHaveDuplicateIds:
            match = None
        if match is not None:
            return kept, None if match is True else match
    # A repeated id: MLE-bench pairs the sorted lists by position and zip() drops the surplus.
    sub_order = kept[reference_sort_order(scored)][: len(answers)]
    return sub_order, reference_sort_order(ans_ids)


def _mean_in_reference_order(per_row: np.ndarray, answers: pd.DataFrame, id_column: str) -> float:
    """np.mean over the answers sorted by id, as the reference adds them (same bits, not just 5 decimals)."""
    if len(per_row) == 0:
        raise AnswersProblem("the answers have no rows")
    if len(per_row) <= _REFERENCE_ORDER_LIMIT:
        per_row = per_row[reference_sort_order(answers[id_column])]
    return float(np.mean(per_row))


# ---------------------------------------------------------------------------------------------------
# lwlrap


@register("lwlrap")
@grader_function
def grade_lwlrap(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, class_columns: Sequence[str]
) -> float:
    """Label-weighted label-ranking average precision of one score column per class."""
    classes = list(class_columns)
    expected = [id_column, *classes]
    require_answers_columns(answers, expected)
    require_row_count(submission, len(answers))
    _require_columns_in_order(submission, expected)
    pairing = in_reference_order(pair_by_sorted_ids(submission, answers, id_column), answers, id_column)
    ids = submission_ids(submission, id_column)
    scores = np.empty((len(answers), len(classes)), dtype=np.float64)
    for j, column in enumerate(classes):
        values = _to_numeric(submission[column], column, ids)
        require_finite(values, column, ids)
        scores[:, j] = Pairing.take(values, pairing.sub_rows)
    truth = Pairing.take(_answers_indicator(answers, classes), pairing.ans_rows)
    return label_weighted_lrap(truth, scores)


def label_weighted_lrap(truth: np.ndarray, scores: np.ndarray, *, block: int = 512) -> float:
    """sum_i w_i * LRAP_i / sum_i w_i with w_i the number of true labels of row i (rows in order)."""
    n, n_labels = truth.shape
    weights = truth.sum(axis=1).astype(np.float64)
    if not weights.sum() > 0:
        raise AnswersProblem("the answers hold no positive label, so lwlrap is undefined")
    per_row = np.ones(n)
    for first in range(0, n, block):
        last = min(n, first + block)
        t, s = truth[first:last], scores[first:last]
        at_or_above = s[:, None, :] >= s[:, :, None]  # [row, label j, label k]: s_k >= s_j
        rank = at_or_above.sum(axis=2)
        true_at_or_above = (at_or_above & t[:, None, :]).sum(axis=2)
        ratio = np.where(t, true_at_or_above / rank, 0.0)
        count = t.sum(axis=1)
        mixed = (count > 0) & (count < n_labels)
        per_row[first:last][mixed] = ratio[mixed].sum(axis=1) / count[mixed]
    weighted = per_row * weights
    return float(np.cumsum(weighted)[-1] / weights.sum())


def _require_columns_in_order(submission: pd.DataFrame, expected: list[str]) -> None:
    present = [str(c) for c in submission.columns]
    if present == expected:
        return
    if not present or present[0] != expected[0]:
        first = show(present[0]) if present else "nothing"
        raise InvalidSubmission(
            f"the first column must be {show(expected[0])}, found {first}; write the columns exactly as in "
            f"the sample submission ({describe_columns(expected)})"
        )
    require_exact_columns(submission, expected)
    position = next(i for i, (a, b) in enumerate(zip(present, expected)) if a != b)
    raise InvalidSubmission(
        f"the class columns must be in the sample submission's order: column {position + 1} is "
        f"{show(present[position])} where {show(expected[position])} is expected"
    )


def _to_numeric(series: pd.Series, column: str, ids: RowIds | None) -> np.ndarray:
    """``pd.to_numeric(series)`` as float64 (missing cells as NaN); text it cannot read is refused."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    ):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    parsed = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    failed = np.flatnonzero(np.isnan(parsed) & ~series.isna().to_numpy())
    if len(failed):
        values = series.iloc[failed[:MAX_EXAMPLES]].tolist()
        examples = "; ".join(f"{show(v)} in {row_label(int(p), ids)}" for v, p in zip(values, failed))
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(failed), 'value')} that pandas cannot read as a number, "
            f"e.g. {examples}; every score must be a number"
        )
    return parsed


def _answers_indicator(answers: pd.DataFrame, classes: list[str]) -> np.ndarray:
    truth = answers[classes].to_numpy()
    if truth.dtype.kind not in "biuf" or not np.isin(truth, (0, 1)).all():
        raise AnswersProblem(f"answers columns {describe_columns(classes)} must hold 0/1 labels")
    return truth.astype(bool)
