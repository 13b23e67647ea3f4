"""Two metrics pooled over all rows: SIIM-COVID-19's mean AP over classes and Kuzushiji's point-in-box F1."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from grading.engine.graders.detection.geometry import box_iou_xyxy, pairs_within_groups
from grading.engine.graders.detection.matching import greedy_match
from grading.engine.graders.detection.tokens import Objects

# ---------------------------------------------------------------------------------------------------
# SIIM-COVID-19: per class, (truth, score) pairs from greedy matching at IoU > 0.5, then sklearn's AP


def siim_map(truth: Objects, predicted: Objects, pred_row: np.ndarray, n_rows: int, iou_threshold: float) -> float:
    """Mean over the answers' classes of average precision, study and image rows pooled.

    Per row and class, predictions in descending confidence (ties in written order) each take the free
    ground-truth box with the largest IoU if it is above the threshold: (1, confidence); otherwise
    (0, confidence). A box left free adds (1, 0); a row with neither predictions nor boxes of the class
    adds (0, 0).
    """
    classes, gt_code = np.unique(truth.label.astype(str), return_inverse=True)
    n_classes = len(classes)
    pred_code = np.searchsorted(classes, predicted.label.astype(str)).clip(0, max(n_classes - 1, 0))
    known = classes[pred_code] == predicted.label.astype(str) if n_classes else np.zeros(len(pred_row), bool)
    pred_code, conf, boxes = pred_code[known], predicted.values[known, 0], predicted.values[known, 1:5]
    pred_key = pred_row[known].astype(np.int64) * n_classes + pred_code
    gt_key = truth.row.astype(np.int64) * n_classes + gt_code

    gt_order = np.argsort(gt_key, kind="stable")
    group_keys, group_start, group_count = np.unique(gt_key[gt_order], return_index=True, return_counts=True)
    gt_boxes = truth.values[gt_order, 1:5]

    order = np.lexsort((np.arange(len(pred_key)), -conf, pred_key))
    pred_key, pred_code, conf, boxes = pred_key[order], pred_code[order], conf[order], boxes[order]
    where = np.searchsorted(group_keys, pred_key).clip(0, max(len(group_keys) - 1, 0))
    has_gt = (group_keys[where] == pred_key) if len(group_keys) else np.zeros(len(pred_key), dtype=bool)
    with_gt = np.flatnonzero(has_gt)
    items, partners, ious = [], [], []
    for left, right in pairs_within_groups(where[with_gt], group_start, group_count):
        iou = box_iou_xyxy(boxes[with_gt[left]], gt_boxes[right])
        above = iou > iou_threshold
        items.append(with_gt[left[above]])
        partners.append(right[above])
        ious.append(iou[above])
    matched = greedy_match(
        _concat(items, np.intp), _concat(partners, np.intp), _concat(ious, float), pred_key, len(pred_key)
    )

    gt_per_class = np.bincount(gt_code, minlength=n_classes)
    tp_per_class = np.bincount(pred_code[matched], minlength=n_classes)
    occupied = np.unique(np.concatenate([gt_key, pred_key]))
    neither = n_rows - np.bincount(occupied % max(n_classes, 1), minlength=n_classes)
    precisions = []
    for c in range(n_classes):
        mine = pred_code == c
        missed = int(gt_per_class[c] - tp_per_class[c])
        empty = int(neither[c])
        y_true = np.concatenate([matched[mine].astype(np.float64), np.ones(missed), np.zeros(empty)])
        y_score = np.concatenate([conf[mine], np.zeros(missed + empty)])
        precisions.append(average_precision(y_true, y_score))
    return float(np.mean(precisions))


def average_precision(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """scikit-learn 1.5's ``average_precision_score`` for 0/1 truth and finite scores."""
    order = np.argsort(y_score, kind="mergesort")[::-1]
    y_score, y_true = y_score[order], y_true[order]
    distinct = np.flatnonzero(np.diff(y_score))
    thresholds = np.r_[distinct, y_true.size - 1]
    tps = np.cumsum(y_true, dtype=np.float64)[thresholds]
    fps = 1 + thresholds - tps
    predicted = tps + fps
    precision = np.zeros_like(tps)
    np.divide(tps, predicted, out=precision, where=predicted != 0)
    recall = np.ones_like(tps) if tps[-1] == 0 else tps / tps[-1]
    precision = np.hstack((precision[::-1], 1))
    recall = np.hstack((recall[::-1], 0))
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def _concat(parts: list[np.ndarray], dtype: npt.DTypeLike) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


# ---------------------------------------------------------------------------------------------------
# Kuzushiji: micro F1 of predicted centre points falling strictly inside a free box of the same character


def kuzushiji_f1(truth: Objects, predicted: Objects, pred_row: np.ndarray) -> float:
    """Kaggle's ``kuzushiji_f1``: each box, in the order written, takes the first free prediction (in the
    order written) of its label whose point is strictly inside it; pooled over pages."""
    labels = np.concatenate([truth.label, predicted.label]).astype(str)
    codes, uniques = pd.factorize(labels)
    n_labels = max(len(uniques), 1)
    gt_key = truth.row.astype(np.int64) * n_labels + codes[: len(truth)]
    pred_key = pred_row.astype(np.int64) * n_labels + codes[len(truth) :]
    x_min, y_min = truth.values[:, 0], truth.values[:, 1]
    x_max, y_max = x_min + truth.values[:, 2], y_min + truth.values[:, 3]

    # predictions grouped by (page, label), written order kept: a box's candidates in preference order
    pred_order = np.argsort(pred_key, kind="stable")
    group_keys, group_start, group_count = np.unique(pred_key[pred_order], return_index=True, return_counts=True)
    px, py = predicted.values[pred_order, 0], predicted.values[pred_order, 1]
    where = np.searchsorted(group_keys, gt_key).clip(0, max(len(group_keys) - 1, 0))
    has_pred = (group_keys[where] == gt_key) if len(group_keys) else np.zeros(len(gt_key), dtype=bool)
    # boxes in written order per page; pages are independent and so are labels, the key orders both
    box_order = np.argsort(gt_key, kind="stable")
    boxes = box_order[has_pred[box_order]]
    items, partners = [], []
    for left, right in pairs_within_groups(where[boxes], group_start, group_count):
        b = boxes[left]
        inside = (x_min[b] < px[right]) & (x_max[b] > px[right]) & (y_min[b] < py[right]) & (y_max[b] > py[right])
        items.append(left[inside])
        partners.append(right[inside])
    item = _concat(items, np.intp)
    matched = greedy_match(item, _concat(partners, np.intp), np.zeros(len(item)), gt_key[boxes], len(boxes))
    tp = int(matched.sum())
    fp = len(pred_key) - tp
    fn = len(gt_key) - tp
    if tp + fp == 0 or tp + fn == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    if precision > 0 and recall > 0:
        return float(2 * precision * recall / (precision + recall))
    return 0.0
