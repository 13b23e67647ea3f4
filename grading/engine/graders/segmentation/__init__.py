"""Segmentation masks written as run-length encodings (see ``segmentation.rle`` for the format).

- ``rle_global_dice`` (google-research-identify-contrails): Dice over all pixels of all records together,
  2|X∩Y| / (|X| + |Y|); NaN when both sides are empty everywhere. ``'-'`` is an empty mask, an empty cell
  is invalid.
- ``rle_mean_dice`` (hubmap-kidney-segmentation): the mean over images of each image's Dice, 1 when both
  masks of an image are empty; an empty cell is an empty mask.
- ``rle_iou_sweep`` (tgs-salt-identification-challenge): per image the whole mask is one object, so at
  each IoU threshold 0.50, 0.55, ..., 0.95 the image scores 1 if IoU > threshold, else 0; the mean over
  thresholds, then over images. An image without salt scores 1 for an empty prediction, else 0. An
  empty prediction of an image with salt counts as the whole image, as the reference's histogram bins it
  (see :func:`grade_iou_sweep`).
- ``rle_dice_hausdorff`` (uw-madison-gi-tract-image-segmentation): 0.4 x Dice + 0.6 x (1 - Hausdorff), see
  :func:`grade_dice_hausdorff`.
- ``rle_fbeta`` (vesuvius-challenge-ink-detection): scikit-learn's binary ``fbeta_score`` over the pixels
  of each row, averaged over rows.

Every grader decodes each submission row with its answers row's height and width, and compares masks as
sets of pixel numbers, so no mask of a whole-slide image is ever drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    RowIds,
    describe_columns,
    grader_function,
    plural,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_row_count,
    row_label,
    show,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, id_objects, pair_by_sorted_ids
from grading.engine.graders.segmentation.hausdorff import normalised_hausdorff, volume
from grading.engine.graders.segmentation.rle import Runs, intersections, is_missing, parse_column
from grading.engine.registry import register

IOU_THRESHOLDS = np.arange(0.5, 1.0, 0.05)  # as numpy makes them: 0.6000000000000001, ...


# ---------------------------------------------------------------------------------------------------
# Shared steps


def _side(answers: pd.DataFrame, side: str | int) -> np.ndarray:
    """An image side (height or width) of every answers row, from a column or a fixed number."""
    if isinstance(side, int):
        return np.full(len(answers), side, dtype=np.int64)
    values = pd.to_numeric(answers[side], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~(values >= 1) | (np.floor(values) != values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise AnswersProblem(
            f"the answers' column {show(side)} must hold positive whole numbers; row {row + 1} has "
            f"{show(answers[side].iloc[row])}"
        )
    return values.astype(np.int64)


def _pixels_per_image(answers: pd.DataFrame, height: str | int, width: str | int) -> np.ndarray:
    """height x width of every answers row."""
    return _side(answers, height) * _side(answers, width)


def _answer_masks(answers: pd.DataFrame, column: str, sizes: np.ndarray, *, empty_token: str | None = None) -> Runs:
    runs = parse_column(
        answers[column], column=column, empty_token=empty_token, error=AnswersProblem, whose="the answers' "
    )
    return runs.clip(sizes)


def _paired(submitted: Runs, truth: Runs, sizes: np.ndarray, pairing: Pairing) -> tuple[Runs, Runs, np.ndarray]:
    """Both sides in pairing order (pair k = submission row sub_rows[k] with answers row ans_rows[k])."""
    if pairing.sub_rows is None and pairing.ans_rows is not None:
        # submission row k goes with answers row ans_rows[k]: put the answers in submission order
        return submitted.clip(sizes[pairing.ans_rows]), truth.take(pairing.ans_rows), sizes[pairing.ans_rows]
    if pairing.ans_rows is not None:
        sizes = sizes[pairing.ans_rows]
        truth = truth.take(pairing.ans_rows)
    return submitted.take(pairing.sub_rows).clip(sizes), truth, sizes


def _dice_terms(submitted: Runs, truth: Runs, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per image: shared pixels, and predicted + true pixels."""
    return intersections(submitted, truth, sizes), submitted.areas() + truth.areas()


# ---------------------------------------------------------------------------------------------------
# Contrails: global Dice


@register("rle_global_dice")
@grader_function
def grade_global_dice(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    rle_column: str,
    height_column: str,
    width_column: str,
    empty_mask: str,
) -> float:
    """2 x shared pixels / (predicted + true pixels) over every image at once; NaN when both are 0.

    ``empty_mask`` is the text of an empty mask (``'-'``); an empty cell is invalid, as in the reference,
    where it is not a string and fails the decoder's check.
    """
    require_answers_columns(answers, [id_column, rle_column, height_column, width_column])
    require_columns(submission, [id_column, rle_column])
    require_row_count(submission, len(answers))
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    sizes = _pixels_per_image(answers, height_column, width_column)
    submitted = parse_column(
        submission[rle_column],
        column=rle_column,
        ids=submission_ids(submission, id_column),
        missing="invalid",
        empty_token=empty_mask,
        missing_hint=f"; write {show(empty_mask)} for an image with nothing to mark",
    )
    truth = _answer_masks(answers, rle_column, sizes, empty_token=empty_mask)
    shared, total = _dice_terms(*_paired(submitted, truth, sizes, pairing))
    shared_sum, total_sum = int(shared.sum()), int(total.sum())
    return math.nan if total_sum == 0 else 2 * shared_sum / total_sum


# ---------------------------------------------------------------------------------------------------
# HuBMAP: mean per-image Dice


@register("rle_mean_dice")
@grader_function
def grade_mean_dice(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    rle_column: str,
    answers_rle_column: str,
    height_column: str,
    width_column: str,
) -> float:
    """Mean over images of 2 x shared / (predicted + true pixels), 1 for an image where both are empty.

    An empty cell is an empty mask. The answers hold the true masks in ``answers_rle_column``.
    """
    require_answers_columns(answers, [id_column, answers_rle_column, height_column, width_column])
    require_columns(submission, [id_column, rle_column])
    require_row_count(submission, len(answers))
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    sizes = _pixels_per_image(answers, height_column, width_column)
    submitted = parse_column(submission[rle_column], column=rle_column, ids=submission_ids(submission, id_column))
    truth = _answer_masks(answers, answers_rle_column, sizes)
    shared, total = _dice_terms(*_paired(submitted, truth, sizes, pairing))
    with np.errstate(invalid="ignore", divide="ignore"):
        dice = np.where(total == 0, 1.0, 2 * shared / total)
    return float(np.mean(dice))


# ---------------------------------------------------------------------------------------------------
# TGS salt: precision over an IoU sweep, one object per image


@register("rle_iou_sweep")
@grader_function
def grade_iou_sweep(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    rle_column: str,
    height: int,
    width: int,
) -> float:
    """Mean over images of the share of IoU thresholds (0.50 to 0.95 by 0.05) that IoU strictly exceeds.

    The IoU is the one the reference gets from the public kernels' ``numpy.histogram2d(truth, predicted,
    bins=(2, 2))``: each mask's 0/1 pixels are split into two bins over the range of the values present,
    and the upper bin is the salt. A mask holding both values has edges 0, 0.5, 1, so the bins are its
    background and its salt. A constant mask has numpy's range v - 0.5 to v + 0.5: a full mask (edges
    0.5, 1, 1.5) still puts its pixels in the upper bin, and so does an empty one (edges -0.5, 0, 0.5: 0
    lies in the upper bin [0, 0.5]). An empty prediction is therefore a prediction of the whole image:
    its IoU is the salt's share of the image, not 0. An image without salt is not binned: it scores 1
    for an empty prediction and 0 for any other (competitions.json's "empty truth with non-empty
    prediction => 0").

    As in the reference, the columns must be exactly ``id_column`` and ``rle_column``, and every cell must
    be text once empty cells are read as '' (a number anywhere makes the file invalid).
    """
    require_answers_columns(answers, [id_column, rle_column])
    require_exact_columns(submission, [id_column, rle_column])
    require_row_count(submission, len(answers))
    ids = submission_ids(submission, id_column)
    for column in (id_column, rle_column):
        _require_text_or_empty(submission[column], column, ids)
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    sizes = _pixels_per_image(answers, height, width)
    submitted = parse_column(submission[rle_column], column=rle_column, ids=ids)
    truth = _answer_masks(answers, rle_column, sizes)
    submitted, truth, sizes = _paired(submitted, truth, sizes, pairing)
    true_area, predicted_area = truth.areas(), submitted.areas()
    shared = intersections(submitted, truth, sizes)
    binned_as_whole_image = predicted_area == 0  # the empty prediction's pixels land in the salt bin
    shared = np.where(binned_as_whole_image, true_area, shared)
    union = true_area + np.where(binned_as_whole_image, sizes, predicted_area) - shared
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = shared / union
    swept = (iou[:, None] > IOU_THRESHOLDS[None, :]).mean(axis=1)
    without_salt = np.where(predicted_area == 0, 1.0, 0.0)
    per_image = np.where(true_area == 0, without_salt, swept)
    return float(np.mean(per_image))


def _require_text_or_empty(series: pd.Series, column: str, ids: RowIds | None) -> None:
    """The reference's ``fillna('')`` then "is every cell a str" check."""
    values = series.to_numpy(dtype=object, na_value=np.nan)
    not_text = [
        row for row, value in enumerate(values.tolist()) if not isinstance(value, str) and not is_missing(value)
    ]
    if not_text:
        shown = "; ".join(f"{show(values[r])} in {row_label(r, ids)}" for r in not_text[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)} must hold text, but {plural(len(not_text), 'cell')} "
            f"{'reads' if len(not_text) == 1 else 'read'} as a number ({shown}). Write ids exactly as in the "
            "sample submission and masks as 'start length' pairs separated by spaces (an empty cell for "
            "an empty mask)"
        )


# ---------------------------------------------------------------------------------------------------
# UW-Madison GI tract: 0.4 x Dice + 0.6 x (1 - 3-D Hausdorff)


@register("rle_dice_hausdorff")
@grader_function
def grade_dice_hausdorff(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    class_column: str,
    rle_column: str,
    height_column: str,
    width_column: str,
    dice_weight: float,
    hausdorff_weight: float,
    max_volume_ratio: float,
) -> float:
    """``dice_weight`` x Dice + ``hausdorff_weight`` x (1 - Hausdorff), rows paired by position.

    Dice: per row, 2 x shared / (predicted + true pixels); rows where both are empty are left out of the
    mean. Hausdorff: per case-day (the id up to ``_slice_``), the rows' masks are OR-ed per slice and the
    slices stacked in sorted id order; see :func:`normalised_hausdorff`. Case-days where both volumes are
    empty are left out of the mean. The submission's ids and classes are not read (as in the reference):
    row k is scored against answers row k.

    A file with the header and no rows scores NaN, a valid score that earns nothing: the reference's
    Dice is ``nanmean`` over no rows. Any other row count than the answers' is refused.
    """
    require_answers_columns(answers, [id_column, rle_column, height_column, width_column])
    require_columns(submission, [id_column, class_column, rle_column])
    if len(submission) == 0:
        return math.nan
    require_row_count(submission, len(answers))
    heights, widths = _side(answers, height_column), _side(answers, width_column)
    sizes = heights * widths
    submitted = parse_column(submission[rle_column], column=rle_column, ids=submission_ids(submission, id_column)).clip(
        sizes
    )
    truth = _answer_masks(answers, rle_column, sizes)
    shared, total = _dice_terms(submitted, truth, sizes)
    scored = total > 0
    dice = float(np.mean(2 * shared[scored] / total[scored])) if scored.any() else math.nan
    distances = np.asarray(
        [
            normalised_hausdorff(
                volume(submitted, rows, depth, shape),
                volume(truth, rows, depth, shape),
                max_ratio=max_volume_ratio,
            )
            for rows, depth, shape in _case_days(answers[id_column], heights, widths)
        ],
        dtype=np.float64,
    )
    hausdorff = float(np.mean(distances[~np.isnan(distances)])) if (~np.isnan(distances)).any() else math.nan
    return dice_weight * dice + hausdorff_weight * (1 - hausdorff)


def _case_days(
    ids: pd.Series, heights: np.ndarray, widths: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray, tuple[int, int, int]]]:
    """For each case-day: its answers rows, each row's slice number (rank of its id among the case-day's
    distinct ids) and the volume's shape (slices, width, height): a column-major mask's pixel number is
    the C-order index of a (width, height) plane."""
    texts = id_objects(ids)
    if not all(isinstance(t, str) and "_slice_" in t for t in texts.tolist()):
        raise AnswersProblem("the answers' ids must look like 'case<N>_day<M>_slice_<K>'")
    frame = pd.DataFrame({"id": texts.astype(str), "row": np.arange(len(texts))})
    frame["case_day"] = [t.rsplit("_slice_", 1)[0] for t in frame["id"].tolist()]
    for _, group in frame.groupby("case_day", sort=True):
        rows = group["row"].to_numpy()
        slices, depth = np.unique(group["id"].to_numpy(dtype=object), return_inverse=True)
        plane_heights, plane_widths = np.unique(heights[rows]), np.unique(widths[rows])
        if len(plane_heights) != 1 or len(plane_widths) != 1:
            raise AnswersProblem(f"the answers' slices of {group['case_day'].iloc[0]} differ in size")
        yield rows, depth, (len(slices), int(plane_widths[0]), int(plane_heights[0]))


# ---------------------------------------------------------------------------------------------------
# Vesuvius: pixel F0.5 per fragment


@register("rle_fbeta")
@grader_function
def grade_fbeta(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    rle_column: str,
    height_column: str,
    width_column: str,
    beta: float,
) -> float:
    """Mean over rows of scikit-learn's binary ``fbeta_score`` over the row's pixels, rows paired by
    position with the answers' ids required in the same order. Exactly the columns ``id_column`` and
    ``rle_column``; every mask must be text (an empty cell is invalid)."""
    require_answers_columns(answers, [id_column, rle_column, height_column, width_column])
    require_row_count(submission, len(answers))
    expected = [id_column, rle_column]
    if len(submission.columns) != 2:
        raise InvalidSubmission(
            f"expected exactly the 2 columns {describe_columns(expected)}, got {len(submission.columns)}: "
            f"{describe_columns(list(submission.columns))}"
        )
    require_exact_columns(submission, expected)
    ids = submission_ids(submission, id_column)
    _require_same_ids_in_order(submission[id_column], answers[id_column], id_column, ids)
    sizes = _pixels_per_image(answers, height_column, width_column)
    submitted = parse_column(
        submission[rle_column], column=rle_column, ids=ids, missing="invalid", missing_hint=""
    ).clip(sizes)
    truth = _answer_masks(answers, rle_column, sizes)
    tp = intersections(submitted, truth, sizes)
    true_sum, predicted_sum = truth.areas(), submitted.areas()
    beta2 = beta * beta
    scores = []
    for hits, actual, predicted in zip(tp.tolist(), true_sum.tolist(), predicted_sum.tolist()):
        denominator = beta2 * actual + predicted  # scikit-learn's F-beta from counts
        scores.append(0.0 if denominator == 0 else (1 + beta2) * hits / denominator)
    return float(np.mean(scores))


def _require_same_ids_in_order(sub_ids: pd.Series, ans_ids: pd.Series, column: str, ids: RowIds | None) -> None:
    submitted, expected = id_objects(sub_ids), id_objects(ans_ids)
    differ = [k for k, (a, b) in enumerate(zip(submitted.tolist(), expected.tolist())) if a != b]
    if differ:
        k = differ[0]
        raise InvalidSubmission(
            f"column {show(column)} must list the test ids in the sample submission's order; "
            f"{row_label(k, ids)} should be {show(expected[k])}"
            + (f" ({plural(len(differ), 'row')} differ)" if len(differ) > 1 else "")
        )
