"""Lyft 3D object detection: mean over (sample, IoU threshold) of the mean over the sample's classes of VOC AP.

The Lyft SDK's ``recall_precision`` + ``get_ap``, per sample as MLE-bench calls it: the classes are those of
the sample's ground truth (predictions of other classes are ignored); a class without predictions has AP 0.
Predictions go in descending confidence (ties keep the order they were written in); each takes the box of its
class with the largest 3D IoU (the first such box on a tie) and is a true positive if that IoU is strictly
above the threshold and the box is still free, otherwise a false positive: there is no fallback to the
next-best box. So a prediction's box and IoU do not depend on the threshold, and "first prediction to claim
a box" is all the matching there is, which is what makes it vectorisable.

3D IoU = bird's-eye intersection area x height overlap / (volume + volume - intersection), clipped to [0, 1].
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.graders.detection.geometry import (
    pairs_within_groups,
    rotated_overlap_areas,
)
from grading.engine.graders.detection.tokens import Objects, TokenFormat

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)

LYFT_FORMAT = TokenFormat(
    fields=(
        "confidence",
        "center_x",
        "center_y",
        "center_z",
        "width",
        "length",
        "height",
        "yaw",
        "class_name",
    ),
    label_field=8,
    separator=None,
    empty_cell="no_objects",
    example="'0.92 2680.28 698.19 -18.05 2.06 4.92 1.72 -0.38 car'",
)

# Numeric columns of Objects.values for LYFT_FORMAT
_CONF, _X, _Y, _Z, _W, _L, _H, _YAW = range(8)


def lyft_map(truth: Objects, predicted: Objects, pred_sample: np.ndarray, n_samples: int) -> float:
    """The score, given ground truth objects (row = sample) and predictions with their sample index."""
    labels = np.concatenate([truth.label, predicted.label]).astype(str)
    codes, uniques = pd.factorize(labels)
    n_labels = max(len(uniques), 1)
    gt_key = truth.row.astype(np.int64) * n_labels + codes[: len(truth)]
    pred_key = pred_sample.astype(np.int64) * n_labels + codes[len(truth) :]

    # ground truth grouped by (sample, class), original order kept within a group
    gt_order = np.argsort(gt_key, kind="stable")
    group_keys, group_start, group_count = np.unique(gt_key[gt_order], return_index=True, return_counts=True)
    gt = truth.values[gt_order]
    group_sample = group_keys // n_labels

    # predictions of the sample's ground-truth classes, by group and descending confidence
    where = np.searchsorted(group_keys, pred_key).clip(0, max(len(group_keys) - 1, 0))
    kept = np.flatnonzero(group_keys[where] == pred_key) if len(group_keys) else np.zeros(0, dtype=np.intp)
    pred_group = where[kept]
    pred = predicted.values[kept]
    order = np.lexsort((np.arange(len(kept)), -pred[:, _CONF], pred_group))
    pred_group, pred = pred_group[order], pred[order]

    best_iou, best_box = _best_boxes(pred, pred_group, gt, group_start, group_count, min(THRESHOLDS))

    is_first = np.ones(len(pred_group), dtype=bool)
    is_first[1:] = pred_group[1:] != pred_group[:-1]
    starts = np.flatnonzero(is_first)
    position = np.arange(len(pred_group)) - np.repeat(starts, np.diff(np.append(starts, len(pred_group))))
    n_gt = group_count[pred_group].astype(np.float64)
    classes_per_sample = np.bincount(group_sample, minlength=n_samples).astype(np.float64)

    per_pair = []
    for threshold in THRESHOLDS:
        tp = np.zeros(len(pred_group), dtype=np.float64)
        claiming = np.flatnonzero(best_iou > threshold)
        _, first_claim = np.unique(best_box[claiming], return_index=True)
        tp[claiming[first_claim]] = 1.0
        ap = _voc_ap_per_group(tp, pred_group, is_first, position, n_gt, len(group_keys))
        with np.errstate(invalid="ignore", divide="ignore"):
            per_pair.append(np.bincount(group_sample, weights=ap, minlength=n_samples) / classes_per_sample)
    return float(np.mean(np.stack(per_pair, axis=1)))  # a sample without ground truth gives NaN, as np.mean of []


def _best_boxes(
    pred: np.ndarray,
    pred_group: np.ndarray,
    gt: np.ndarray,
    group_start: np.ndarray,
    group_count: np.ndarray,
    min_threshold: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Each prediction's largest IoU over the boxes of its group and that box (first on a tie).

    Pairs that cannot reach ``min_threshold`` (no height overlap, bounding circles apart, volumes too
    different) are not measured: they only matter through the maximum, which is then at most the threshold
    and makes the prediction a false positive whichever box it points at.
    """
    n = len(pred)
    best_iou = np.zeros(n)
    best_box = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return best_iou, best_box
    finite = np.isfinite(pred[:, _X:]).all(axis=1)
    best_iou[~finite] = np.nan  # NaN or infinite geometry: the reference's IoU is NaN, never above a threshold
    gt_volume = gt[:, _W] * gt[:, _L] * gt[:, _H]
    pred_volume = pred[:, _W] * pred[:, _L] * pred[:, _H]
    gt_x, gt_y, pred_x, pred_y = gt[:, _X].copy(), gt[:, _Y].copy(), pred[:, _X].copy(), pred[:, _Y].copy()
    gt_low, gt_high = gt[:, _Z] - gt[:, _H] / 2, gt[:, _Z] + gt[:, _H] / 2
    pred_low, pred_high = pred[:, _Z] - pred[:, _H] / 2, pred[:, _Z] + pred[:, _H] / 2
    gt_radius = np.hypot(gt[:, _W], gt[:, _L]) / 2
    pred_radius = np.where(finite, np.hypot(pred[:, _W], pred[:, _L]) / 2, -np.inf)  # never measured
    for left, right in pairs_within_groups(pred_group, group_start, group_count):
        reach = pred_radius[left] + gt_radius[right]
        dx, dy = pred_x[left] - gt_x[right], pred_y[left] - gt_y[right]
        near = (dx * dx + dy * dy < reach * reach) & (reach > 0)
        left, right = left[near], right[near]
        height = np.minimum(pred_high[left], gt_high[right]) - np.maximum(pred_low[left], gt_low[right])
        vp, vg = pred_volume[left], gt_volume[right]
        similar = ~((vp > 0) & (vg > 0)) | (np.minimum(vp, vg) > min_threshold * np.maximum(vp, vg))
        measure = (height > 0) & similar
        left, right, height = left[measure], right[measure], height[measure]
        area = rotated_overlap_areas(_ground_box(pred[left]), _ground_box(gt[right]))
        intersection = area * height
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = np.clip(intersection / (pred_volume[left] + gt_volume[right] - intersection), 0, 1)
        undefined = np.isnan(iou)
        if undefined.any():  # np.max over the boxes is NaN then
            best_iou[left[undefined]] = np.nan
        left, right, iou = left[~undefined], right[~undefined], iou[~undefined]
        np.maximum.at(best_iou, left, iou)
        top = iou == best_iou[left]
        candidates = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(candidates, left[top], right[top])
        improved = candidates != np.iinfo(np.int64).max
        best_box[improved] = candidates[improved]
    return best_iou, best_box


def _ground_box(values: np.ndarray) -> tuple:
    return values[:, _X], values[:, _Y], values[:, _W], values[:, _L], values[:, _YAW]


def _voc_ap_per_group(
    tp: np.ndarray, group: np.ndarray, is_first: np.ndarray, position: np.ndarray, n_gt: np.ndarray, n_groups: int
) -> np.ndarray:
    """All-point interpolated AP (precision envelope, summed over recall steps) of each group's predictions."""
    ap = np.zeros(n_groups)
    if len(tp) == 0:
        return ap
    cumulative = np.cumsum(tp)
    before = np.repeat(cumulative[is_first] - tp[is_first], np.diff(np.append(np.flatnonzero(is_first), len(tp))))
    tp_count = cumulative - before
    recall = tp_count / n_gt
    precision = tp_count / (position + 1.0)
    envelope = pd.Series(precision[::-1]).groupby(group[::-1], sort=False).cummax().to_numpy()[::-1]
    previous = np.where(is_first, 0.0, np.roll(recall, 1))
    return np.bincount(group, weights=(recall - previous) * envelope, minlength=n_groups)
