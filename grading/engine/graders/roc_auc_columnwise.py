"""Mean of per-column ROC AUC over several label columns (ranzcr, plant-pathology, jigsaw).

Parameters describe each competition's reference behaviour:

``values``
    ``"probabilities"``: each scored column must be numeric with every value in [0, 1] (MLE-bench's
    ``prepare_for_auroc_metric``, ranzcr). ``"scores"``: any finite numbers, text cells converted with
    Python's ``float`` as scikit-learn's ``check_array`` does (plant-pathology, jigsaw).
``columns``
    ``"required"``: the id and label columns must be present, others are ignored, unless
    ``pair_columns`` is ``"by_position"``. ``"exact"``: the set of columns must be exactly id + labels.
``pair_columns``
    ``"by_name"``: each label column of the submission is scored against the same column of the answers.
    ``"by_position"`` (jigsaw): the reference scores *every* non-id column of the submission, in the
    submission's own column order, against the answers' label columns in the answers' order. Reordered
    columns are therefore scored against the wrong labels, and an extra column makes the submission
    invalid (scikit-learn fails on the extra column).
``id_alignment``
    ``"sorted"``: both frames sorted by id, the id sequences must be equal. ``"index"`` (jigsaw): both
    frames indexed by id and sorted, then the answers' keep-mask is aligned to the submission's index.
    The two agree whenever the ids are a permutation of the test ids; they differ only for submissions
    with repeated ids, which ``"index"`` reproduces exactly.
``unscored_rows``
    ``"negative_label_sum"`` (jigsaw): answer rows whose labels sum to a negative number (all -1, i.e.
    not scored by Kaggle) are dropped together with the matching submission rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    AnswersProblem,
    describe_columns,
    float_values_like_sklearn,
    grader_function,
    numeric_values,
    plural,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_finite,
    require_row_count,
    require_unit_interval,
    show,
    submission_ids,
)
from grading.engine.graders.ids import (
    AnswersHaveDuplicateIds,
    Pairing,
    _ids_of,
    describe_id_mismatch,
    match_permutation,
    pair_by_sorted_ids,
    reference_sort_order,
)
from grading.engine.graders.roc_auc import binary_roc_auc, positive_indicator
from grading.engine.registry import register

_VALUES = ("probabilities", "scores")
_COLUMNS = ("required", "exact")
_PAIR_COLUMNS = ("by_name", "by_position")
_ALIGNMENT = ("sorted", "index")
_UNSCORED = (None, "negative_label_sum")


@register("roc_auc_columnwise")
@grader_function
def grade(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_columns: Sequence[str],
    values: str = "probabilities",
    columns: str = "required",
    pair_columns: str = "by_name",
    id_alignment: str = "sorted",
    unscored_rows: str | None = None,
) -> float:
    """Mean over ``target_columns`` of the binary ROC AUC of each column."""
    _check_params(values, columns, pair_columns, id_alignment, unscored_rows)
    targets = list(target_columns)
    require_answers_columns(answers, [id_column, *targets])
    expected = [id_column, *targets]
    if columns == "exact":
        require_exact_columns(submission, expected)
    else:
        require_columns(submission, expected)
    require_row_count(submission, len(answers))
    ids = submission_ids(submission, id_column)

    if pair_columns == "by_position":
        score_columns = [c for c in submission.columns if c != id_column]
        truth_columns = [c for c in answers.columns if c != id_column]
        if len(score_columns) > len(truth_columns):
            extra = [c for c in score_columns if c not in set(truth_columns)]
            raise InvalidSubmission(
                f"expected only the columns {describe_columns(expected)}; remove "
                f"{describe_columns(extra or score_columns[len(truth_columns) :])} (MLE-bench scores every "
                "non-id column in order, so an extra column makes the file invalid)"
            )
        truth_columns = truth_columns[: len(score_columns)]
    else:
        score_columns = targets
        truth_columns = targets

    if values == "probabilities":  # checked on every row before alignment, as the reference does
        for column in score_columns:
            require_unit_interval(numeric_values(submission[column], str(column), ids), str(column), ids)

    keep = None
    if unscored_rows == "negative_label_sum":
        labels = _answers_float(answers, targets)
        keep = np.where(np.isnan(labels), 0.0, labels).sum(axis=1) >= 0

    if id_alignment == "index":
        sub_rows, ans_rows = _index_alignment(submission, answers, id_column, keep)
    else:
        pairing = pair_by_sorted_ids(submission, answers, id_column)
        sub_rows, ans_rows = pairing.sub_rows, pairing.ans_rows
        if keep is not None:
            kept = Pairing.take(keep, ans_rows)
            sub_rows = np.flatnonzero(kept) if sub_rows is None else sub_rows[kept]
            ans_rows = np.flatnonzero(keep) if ans_rows is None else ans_rows[kept]

    # Only the rows that are scored are converted and checked, as in the reference.
    n_scored = len(answers) if ans_rows is None else len(ans_rows)
    scores = np.empty((n_scored, len(score_columns)), dtype=np.float64)
    for j, column in enumerate(score_columns):
        if values == "probabilities":
            scores[:, j] = Pairing.take(numeric_values(submission[column], str(column), ids), sub_rows)
        else:
            scores[:, j] = float_values_like_sklearn(submission[column], str(column), ids, rows=sub_rows)
            require_finite(scores[:, j], str(column), ids, rows=sub_rows)
    truth = Pairing.take(answers[truth_columns].to_numpy(), ans_rows)

    per_column = []
    for j, column in enumerate(score_columns):
        if pair_columns == "by_position":
            positive = _multilabel_positive(truth[:, j], column=str(truth_columns[j]))
        else:
            positive = positive_indicator(truth[:, j], column=str(column))
        per_column.append(binary_roc_auc(positive, scores[:, j]))
    return float(np.average(np.asarray(per_column)))


def _check_params(values: str, columns: str, pair_columns: str, id_alignment: str, unscored_rows: str | None) -> None:
    for name, value, allowed in (
        ("values", values, _VALUES),
        ("columns", columns, _COLUMNS),
        ("pair_columns", pair_columns, _PAIR_COLUMNS),
        ("id_alignment", id_alignment, _ALIGNMENT),
        ("unscored_rows", unscored_rows, _UNSCORED),
    ):
        if value not in allowed:
            raise TypeError(f"roc_auc_columnwise: {name} must be one of {allowed}, not {value!r}")


def _answers_float(answers: pd.DataFrame, columns: list[str]) -> np.ndarray:
    try:
        return answers[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise AnswersProblem(f"answers label columns {describe_columns(columns)} are not numeric") from exc


def _multilabel_positive(values: np.ndarray, *, column: str) -> np.ndarray:
    """Positive class of one multilabel-indicator column (labels 0/1, pos_label 1), as scikit-learn."""
    classes = np.unique(values)
    if len(classes) != 2:
        raise InvalidSubmission(
            f"ROC AUC is undefined for column {show(column)}: the scored answers hold "
            f"{'only one class' if len(classes) < 2 else f'{len(classes)} classes'}, and MLE-bench scores "
            "such a submission as invalid. This is a property of the answers, not of your file"
        )
    return values == 1


def _index_alignment(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str, keep: np.ndarray | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Rows kept and paired as ``set_index(id).sort_index()`` + boolean-mask indexing pair them."""
    sub_ids, ans_ids = submission[id_column], answers[id_column]
    try:
        match = match_permutation(sub_ids, ans_ids)
    except AnswersHaveDuplicateIds:
        match = None
    if match is not None:
        ans_rows = None if match is True else match
        if keep is None:
            return None, ans_rows
        kept = Pairing.take(keep, ans_rows)
        return np.flatnonzero(kept), (np.flatnonzero(keep) if ans_rows is None else ans_rows[kept])

    # Not a permutation: reproduce pandas' index alignment exactly.
    sub_order = reference_sort_order(sub_ids, skip_if_sorted=True)
    ans_order = reference_sort_order(ans_ids, skip_if_sorted=True)
    sub_sorted = _ids_of(sub_ids).objects()[sub_order]
    ans_sorted = _ids_of(ans_ids).objects()[ans_order]
    mask_sorted = np.ones(len(ans_sorted), dtype=bool) if keep is None else keep[ans_order]
    position: dict = {}
    for p, value in enumerate(ans_sorted.tolist()):
        position.setdefault(value, p)
    found = [position.get(value, -1) for value in sub_sorted.tolist()]
    if -1 in found:  # pandas: "Unalignable boolean Series provided as indexer"
        raise InvalidSubmission(describe_id_mismatch(sub_ids, ans_ids, id_column))
    sub_keep = mask_sorted[np.asarray(found, dtype=np.intp)] if len(found) else np.zeros(0, dtype=bool)
    sub_rows = sub_order[sub_keep]
    ans_rows = ans_order[mask_sorted]
    if len(sub_rows) != len(ans_rows):
        raise InvalidSubmission(
            describe_id_mismatch(sub_ids, ans_ids, id_column)
            + f" (after dropping unscored rows the submission keeps {plural(len(sub_rows), 'row')} "
            f"but the answers keep {len(ans_rows)})"
        )
    return sub_rows, ans_rows
