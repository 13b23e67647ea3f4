"""ROC AUC variants: ALASKA2's TPR-weighted AUC and Jigsaw's unintended-bias AUC combination.

``weighted_roc_auc`` (alaska2-image-steganalysis): the ROC curve (scikit-learn's ``roc_curve``) is cut
into horizontal bands of TPR, ``[0, 0.4]`` weighing 2 and ``[0.4, 1]`` weighing 1. Where the curve has no
point at a band edge, one is interpolated on the segment that crosses it; each band's area is the area
between the curve (clipped to the band and shifted down to start at 0) and the FPR axis, the curve being
closed at FPR = 1. The score is ``sum(weight * area) / sum(weight * band height)``, so a perfect ranking
scores 1 and a random one about 0.5. This is the band-exact area; Kaggle's popular notebook dropped the
curve's points on the band edges, which is the "threshold-insertion fix" MLE-bench applies.

``jigsaw_bias_auc`` (jigsaw-unintended-bias-in-toxicity-classification): Kaggle's bias metric,
``w * AUC(all) + (1 - w) * mean(M_p(subgroup AUCs), M_p(BPSN AUCs), M_p(BNSP AUCs))`` with ``w = 0.25``
and ``M_p`` the power mean with ``p = -5`` over the identity columns. Truth toxicity and identity
membership count when ``>= 0.5`` (an empty identity cell is "not in the subgroup"), and, as in MLE-bench,
the submitted predictions are binarised at ``>= 0.5`` too before every AUC (an empty prediction is below
the threshold). A subgroup AUC that is undefined (one class only) is NaN, as in Kaggle's code, which makes
the score NaN.
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
    require_answers_columns,
    require_columns,
    require_finite,
    require_frames,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.graders.roc_auc import binary_roc_auc, positive_indicator, roc_curve_points
from grading.engine.registry import register

# ---------------------------------------------------------------------------------------------------
# ALASKA2: weighted AUC over TPR bands


def insert_tpr_points(fpr: np.ndarray, tpr: np.ndarray, levels: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The ROC points with one interpolated point at each TPR level the curve does not already reach."""
    for level in levels:
        if (tpr == level).any():
            continue
        above = np.flatnonzero(tpr > level)
        if not len(above) or above[0] == 0:
            continue
        i = int(above[0])
        x0, y0, x1, y1 = fpr[i - 1], tpr[i - 1], fpr[i], tpr[i]
        x = x0 + (x1 - x0) * (level - y0) / (y1 - y0)
        fpr = np.insert(fpr, i, x)
        tpr = np.insert(tpr, i, level)
    return fpr, tpr


def tpr_weighted_auc(fpr: np.ndarray, tpr: np.ndarray, levels: Sequence[float], weights: Sequence[float]) -> float:
    """Weighted area of the ROC curve over horizontal TPR bands ``[levels[k], levels[k+1]]``."""
    fpr, tpr = insert_tpr_points(fpr, tpr, levels)
    total = 0.0
    normalization = 0.0
    for low, high, weight in zip(levels[:-1], levels[1:], weights):
        inside = (tpr >= low) & (tpr <= high)
        x = np.r_[fpr[inside], 1.0]
        y = np.r_[tpr[inside], high] - low
        total += weight * float(np.trapezoid(y, x))
        normalization += weight * (high - low)
    return total / normalization


@register("weighted_roc_auc")
@grader_function
def grade_weighted(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    tpr_levels: Sequence[float] = (0.0, 0.4, 1.0),
    weights: Sequence[float] = (2.0, 1.0),
) -> float:
    """TPR-band weighted ROC AUC of ``target_column`` (any finite score; only the order matters)."""
    levels = [float(v) for v in tpr_levels]
    if len(levels) != len(weights) + 1 or levels != sorted(levels) or levels[0] != 0.0 or levels[-1] != 1.0:
        raise TypeError("weighted_roc_auc: tpr_levels must rise from 0 to 1 with one weight per band")
    require_frames(submission, answers, [id_column, target_column])
    ids = submission_ids(submission, id_column)
    scores = float_values_like_sklearn(submission[target_column], target_column, ids)
    require_finite(scores, target_column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    y_true = Pairing.take(answers[target_column].to_numpy(), pairing.ans_rows)
    positive = positive_indicator(y_true, column=target_column)
    fpr, tpr = roc_curve_points(positive, Pairing.take(scores, pairing.sub_rows))
    return tpr_weighted_auc(fpr, tpr, levels, [float(w) for w in weights])


# ---------------------------------------------------------------------------------------------------
# Jigsaw unintended bias


def _auc_or_nan(positive: np.ndarray, scores: np.ndarray) -> float:
    """Kaggle's ``compute_auc``: ROC AUC, or NaN where it is undefined (one class only)."""
    if positive.all() or not positive.any():
        return float("nan")
    return binary_roc_auc(positive, scores)


def power_mean(values: np.ndarray, p: float) -> float:
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return float(np.power(np.sum(np.power(values, p)) / len(values), 1.0 / p))


def _answers_at_least(answers: pd.DataFrame, columns: list[str], threshold: float) -> np.ndarray:
    try:
        values = answers[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise AnswersProblem(f"answers columns {describe_columns(columns)} must be numeric") from exc
    return values >= threshold


@register("jigsaw_bias_auc")
@grader_function
def grade_bias(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    target_column: str,
    prediction_columns: Sequence[str],
    identity_columns: Sequence[str],
    power: float = -5.0,
    overall_weight: float = 0.25,
    threshold: float = 0.5,
) -> float:
    """Kaggle's Jigsaw bias metric on predictions binarised at ``threshold``.

    ``prediction_columns``: the accepted names of the prediction column, in order of preference
    (``prediction``, then ``toxicity``).
    """
    identities = list(identity_columns)
    require_answers_columns(answers, [id_column, target_column, *identities])
    accepted = list(prediction_columns)
    present = [c for c in accepted if c in submission.columns]
    require_columns(submission, [id_column])
    if not present:
        raise InvalidSubmission(
            f"expected a prediction column named {describe_columns(accepted[:1])}"
            + (f" (or {describe_columns(accepted[1:])})" if len(accepted) > 1 else "")
            + f"; the file has: {describe_columns(list(submission.columns))}"
        )
    column = present[0]
    require_columns(submission, [id_column, column])
    ids = submission_ids(submission, id_column)
    values = numeric_values(submission[column], column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    with np.errstate(invalid="ignore"):
        predicted = (Pairing.take(values, pairing.sub_rows) >= threshold).astype(np.float64)
    toxic = Pairing.take(_answers_at_least(answers, [target_column], threshold)[:, 0], pairing.ans_rows)
    members = Pairing.take(_answers_at_least(answers, identities, threshold), pairing.ans_rows)

    overall = binary_roc_auc(positive_indicator(toxic, column=target_column), predicted)
    subgroup, bpsn, bnsp = [], [], []
    for j in range(len(identities)):
        inside = members[:, j]
        subgroup.append(_auc_or_nan(toxic[inside], predicted[inside]))
        mask = (inside & ~toxic) | (~inside & toxic)
        bpsn.append(_auc_or_nan(toxic[mask], predicted[mask]))
        mask = (inside & toxic) | (~inside & ~toxic)
        bnsp.append(_auc_or_nan(toxic[mask], predicted[mask]))
    bias = np.mean([power_mean(np.asarray(aucs), power) for aucs in (subgroup, bpsn, bnsp)])
    return float(overall_weight * overall + (1 - overall_weight) * bias)
