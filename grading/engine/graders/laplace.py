"""Modified Laplace log likelihood (osic-pulmonary-fibrosis-progression).

Per scored row: ``sigma = max(Confidence, 70)``, ``delta = min(|FVC_true - FVC_pred|, 1000)`` and
``-sqrt(2) * delta / sigma - ln(sqrt(2) * sigma)``; the score is the mean over scored rows (at best
``-ln(70 * sqrt(2))``, about -4.5951). The answers list every patient x week of the test range, with FVC
empty where nothing was measured; the scored rows are each patient's last three weeks with a measured FVC.

Validity, as in the reference: the id, FVC and Confidence columns must exist and FVC and Confidence must
be numeric columns; every submitted id must be one of the answers' ids (unscored weeks may be left out or
repeated). The submission's scored rows must be as many as the answers' scored rows: a missing or repeated
scored week makes the file invalid. Both sides are then sorted by id and paired row by row. An empty
Confidence counts as 0 (so 70); an empty FVC in a scored row makes the score NaN, which MLE-bench counts as
valid and earning nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    describe_columns,
    grader_function,
    numeric_values,
    plural,
    require_answers_columns,
    require_columns,
    row_label,
    show,
    show_many,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_position
from grading.engine.registry import register

SIGMA_MIN = 70.0
ERROR_MAX = 1000.0


def laplace_log_likelihood(truth: np.ndarray, predicted: np.ndarray, confidence: np.ndarray) -> float:
    """Mean modified Laplace log likelihood; ``confidence`` with NaN already replaced by 0."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        sigma = np.maximum(confidence, SIGMA_MIN)
        delta = np.minimum(np.abs(truth - predicted), ERROR_MAX)
        per_row = -np.sqrt(2) * delta / sigma - np.log(np.sqrt(2) * sigma)
        return float(np.mean(per_row))


def scored_rows(
    answers: pd.DataFrame, *, patient_column: str, week_column: str, target_column: str, last: int
) -> np.ndarray:
    """Positions of the answers' scored rows: each patient's last ``last`` weeks with a measured target."""
    try:
        measured = answers[target_column].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise AnswersProblem(f"the answers' column {describe_columns([target_column])} is not numeric") from exc
    positions = np.flatnonzero(~np.isnan(measured))
    real = pd.DataFrame(
        {
            "patient": answers[patient_column].to_numpy(dtype=object)[positions],
            "week": answers[week_column].to_numpy()[positions],
        }
    )
    from_last = real.groupby("patient", sort=False)["week"].rank(method="first", ascending=False)
    return positions[from_last.to_numpy() <= last]


@register("laplace_log_likelihood")
@grader_function
def grade(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    patient_column: str,
    week_column: str,
    target_column: str,
    confidence_column: str,
    last_weeks: int = 3,
) -> float:
    """Modified Laplace log likelihood over each patient's last ``last_weeks`` measured weeks."""
    require_answers_columns(answers, [id_column, patient_column, week_column, target_column])
    require_columns(submission, [id_column, target_column, confidence_column])
    ids = submission_ids(submission, id_column)
    sub_ids = submission[id_column]
    known = sub_ids.isin(answers[id_column]).to_numpy(dtype=bool)
    if not known.all():
        unknown = np.flatnonzero(~known)
        examples = ", ".join(f"{show(sub_ids.iloc[int(p)])} in {row_label(int(p))}" for p in unknown[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"{plural(len(unknown), 'id')} in column {show(id_column)} {'is' if len(unknown) == 1 else 'are'} "
            f"not in the test set (e.g. {examples}); write the ids exactly as in the sample submission"
        )
    predicted = numeric_values(submission[target_column], target_column, ids)
    confidence = numeric_values(submission[confidence_column], confidence_column, ids)

    scored = scored_rows(
        answers,
        patient_column=patient_column,
        week_column=week_column,
        target_column=target_column,
        last=last_weeks,
    )
    scored_ids = answers[id_column].iloc[scored].reset_index(drop=True)
    kept = np.flatnonzero(sub_ids.isin(scored_ids).to_numpy(dtype=bool))
    kept_ids = sub_ids.iloc[kept].reset_index(drop=True)
    if len(kept) != len(scored):
        _raise_scored_mismatch(kept_ids, scored_ids, id_column, target_column, last_weeks)
    pairing = pair_by_sorted_position(
        pd.DataFrame({id_column: kept_ids}), pd.DataFrame({id_column: scored_ids}), id_column
    )
    rows = Pairing.take(kept, pairing.sub_rows)
    truth = answers[target_column].to_numpy(dtype=np.float64, na_value=np.nan)[Pairing.take(scored, pairing.ans_rows)]
    return laplace_log_likelihood(truth, predicted[rows], _missing_as_zero(confidence[rows]))


def _raise_scored_mismatch(
    kept_ids: pd.Series, scored_ids: pd.Series, id_column: str, target_column: str, last_weeks: int
) -> None:
    missing = scored_ids[~scored_ids.isin(kept_ids)].tolist()
    counts = kept_ids.value_counts(sort=False)
    repeated = counts[counts > 1]
    parts = []
    if missing:
        parts.append(
            f"{plural(len(missing), 'scored week')} {'is' if len(missing) == 1 else 'are'} missing "
            f"(e.g. {show_many(missing[:MAX_EXAMPLES])})"
        )
    if len(repeated):
        examples = ", ".join(f"{show(k)} {int(v)} times" for k, v in list(repeated.items())[:MAX_EXAMPLES])
        parts.append(
            f"{plural(len(repeated), 'scored week')} {'appears' if len(repeated) == 1 else 'appear'} more than "
            f"once (e.g. {examples})"
        )
    raise InvalidSubmission(
        f"each patient's last {last_weeks} weeks with a measured {target_column} are scored, and each must "
        f"appear exactly once in column {show(id_column)}: " + "; ".join(parts) + ". Submit one row for each "
        f"{id_column} of the sample submission"
    )


def _missing_as_zero(values: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), 0.0, values)
