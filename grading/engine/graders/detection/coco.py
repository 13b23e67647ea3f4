"""pycocotools' COCOeval at one IoU threshold, as the public VinBigData metric notebook drives it.

The notebook builds the COCO datasets by hand and MLE-bench's grader follows it, quirks included:

* boxes written ``x_min y_min x_max y_max`` go unchanged into COCO's ``[x, y, width, height]`` slots, so the
  IoU is that of ``[x_min, x_min + x_max] x [y_min, y_min + y_max]`` (pycocotools' ``bbIou``: C ``fmin`` /
  ``fmax``, an overlap of zero or less in either direction gives 0, else intersection / union);
* the ``area`` fields (used only to ignore boxes outside the "all" range [0, 1e10]) are computed from the
  boxes read as corners: ``(x_max - x_min) * (y_max - y_min)``;
* annotation ids count from 0 over the answers (images in order of first appearance, rows in file order)
  and from 0 over the predictions (submission rows in file order). pycocotools stores the matched id as
  the match flag, so the answer box with id 0 never counts as matched (its detection is a false positive, or
  ignored when outside the area range) and the prediction with id 0 leaves its box free for the next one.

Per (image, category): detections by descending score (stable), at most ``max_detections``; each takes the
free ground-truth box with the largest IoU >= threshold (the last such box on a tie, and pycocotools' NaN
comparisons as they fall). Per category over all images: 101-point interpolated precision. The score is the
mean of all those precisions over the categories of the answers (``stats[0]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

AREA_RANGE = (0.0, 1e5**2)
RECALL_THRESHOLDS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


@dataclass(frozen=True)
class Boxes:
    """Annotations of one side: image index, category, the four box numbers as written, score, id."""

    image: np.ndarray  # intp
    category: np.ndarray  # int64
    box: np.ndarray  # float64 (n, 4): x_min, y_min, x_max, y_max as written
    score: np.ndarray  # float64 (zeros for ground truth)
    ident: np.ndarray  # int64 annotation id (0-based, in dataset order)

    @property
    def area(self) -> np.ndarray:
        return (self.box[:, 2] - self.box[:, 0]) * (self.box[:, 3] - self.box[:, 1])


def coco_bbox_iou(det: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """pycocotools ``bbIou`` of pairs, with the four numbers read as x, y, width, height."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        width = np.fmin(det[:, 2] + det[:, 0], gt[:, 2] + gt[:, 0]) - np.fmax(det[:, 0], gt[:, 0])
        height = np.fmin(det[:, 3] + det[:, 1], gt[:, 3] + gt[:, 1]) - np.fmax(det[:, 1], gt[:, 1])
        intersection = width * height
        union = det[:, 2] * det[:, 3] + gt[:, 2] * gt[:, 3] - intersection
        iou = intersection / union
    return np.where((width <= 0) | (height <= 0), 0.0, iou)


def coco_ap(truth: Boxes, detections: Boxes, *, iou_threshold: float, max_detections: int = 100) -> float:
    categories = np.unique(truth.category)
    gt_ignore = (truth.area < AREA_RANGE[0]) | (truth.area > AREA_RANGE[1])
    known = np.isin(detections.category, categories)
    det = _subset(detections, np.flatnonzero(known))

    # ground truth per (image, category): not-ignored first, then file order (mergesort on the flag)
    gt_order = np.lexsort((np.arange(len(truth.image)), gt_ignore, truth.category, truth.image))
    g_image, g_cat = truth.image[gt_order], truth.category[gt_order]
    # detections per (image, category): descending score, stable, the first max_detections kept
    det_order = np.lexsort((det.ident, -det.score, det.category, det.image))
    det = _subset(det, det_order)
    d_first = _group_starts(det.image, det.category)
    d_rank = np.arange(len(det.image)) - np.repeat(d_first, np.diff(np.append(d_first, len(det.image))))
    det = _subset(det, np.flatnonzero(d_rank < max_detections))
    d_rank = d_rank[d_rank < max_detections]

    # pad the ground truth of each (image, category) group into a row per group
    g_first = _group_starts(g_image, g_cat)
    g_count = np.diff(np.append(g_first, len(g_image)))
    g_keys = np.stack([g_image[g_first], g_cat[g_first]], axis=1) if len(g_first) else np.zeros((0, 2), int)
    det_group = _lookup_groups(g_keys, det.image, det.category)  # -1: no ground truth there
    width = int(g_count.max()) if len(g_count) else 0
    slots = np.full((len(g_first), width), -1, dtype=np.intp)  # index into gt_order
    for j in range(width):
        has = g_count > j
        slots[has, j] = g_first[has] + j
    gt_box = truth.box[gt_order]
    gt_ign = gt_ignore[gt_order]
    gt_ident = truth.ident[gt_order]

    det_matched_id = np.zeros(len(det.image), dtype=np.int64)  # dtm: the matched box's id (0 = none)
    det_ignored = np.zeros(len(det.image), dtype=bool)
    gt_matched_by = np.zeros(len(gt_box), dtype=np.int64)  # gtm: the matching detection's id (0 = free)
    threshold = min(iou_threshold, 1 - 1e-10)
    for rank in range(int(d_rank.max()) + 1 if len(d_rank) else 0):
        current = np.flatnonzero((d_rank == rank) & (det_group >= 0))
        if not len(current):
            continue
        group = det_group[current]
        best = np.full(len(current), threshold)
        chosen = np.full(len(current), -1, dtype=np.intp)  # index into gt_order
        stopped = np.zeros(len(current), dtype=bool)
        for j in range(width):
            slot = slots[group, j]
            present = slot >= 0
            g = np.where(present, slot, 0)
            stopped |= present & (chosen >= 0) & ~gt_ign[np.where(chosen >= 0, chosen, 0)] & gt_ign[g]
            iou = coco_bbox_iou(det.box[current], gt_box[g])
            take = present & ~stopped & ~(gt_matched_by[g] > 0) & ~(iou < best)
            best = np.where(take, iou, best)
            chosen = np.where(take, g, chosen)
        hit = chosen >= 0
        det_ignored[current[hit]] = gt_ign[chosen[hit]]
        det_matched_id[current[hit]] = gt_ident[chosen[hit]]
        gt_matched_by[chosen[hit]] = det.ident[current[hit]]
    outside = (det.area < AREA_RANGE[0]) | (det.area > AREA_RANGE[1])
    det_ignored |= (det_matched_id == 0) & outside

    precisions = np.full((len(RECALL_THRESHOLDS), len(categories)), -1.0)
    for k, category in enumerate(categories):
        in_category = truth.category == category
        n_positive = int(np.count_nonzero(~gt_ignore[in_category]))
        if n_positive == 0:
            continue
        mine = np.flatnonzero(det.category == category)
        # images in order, each image's detections as sorted above; then a stable sort by descending score
        mine = mine[np.lexsort((d_rank[mine], det.image[mine]))]
        mine = mine[np.argsort(-det.score[mine], kind="mergesort")]
        matched = det_matched_id[mine] != 0
        ignored = det_ignored[mine]
        tp = np.cumsum(matched & ~ignored).astype(float)
        fp = np.cumsum(~matched & ~ignored).astype(float)
        recall = tp / n_positive
        precision = tp / (fp + tp + np.spacing(1))
        precision = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
        where = np.searchsorted(recall, RECALL_THRESHOLDS, side="left")
        q = np.zeros(len(RECALL_THRESHOLDS))
        reached = where < len(precision)
        q[reached] = precision[where[reached]]
        precisions[:, k] = q
    values = precisions[precisions > -1]
    return float(np.mean(values)) if len(values) else -1.0


def _subset(boxes: Boxes, rows: np.ndarray) -> Boxes:
    return Boxes(boxes.image[rows], boxes.category[rows], boxes.box[rows], boxes.score[rows], boxes.ident[rows])


def _group_starts(image: np.ndarray, category: np.ndarray) -> np.ndarray:
    if not len(image):
        return np.zeros(0, dtype=np.intp)
    change = np.ones(len(image), dtype=bool)
    change[1:] = (image[1:] != image[:-1]) | (category[1:] != category[:-1])
    return np.flatnonzero(change)


def _lookup_groups(keys: np.ndarray, image: np.ndarray, category: np.ndarray) -> np.ndarray:
    """Row of (image, category) in the sorted ``keys``, or -1."""
    if not len(keys) or not len(image):
        return np.full(len(image), -1, dtype=np.intp)
    span = int(max(keys[:, 1].max(), category.max()) - min(keys[:, 1].min(), category.min())) + 1
    low = min(int(keys[:, 1].min()), int(category.min()))
    packed_keys = keys[:, 0].astype(np.int64) * span + (keys[:, 1] - low)
    packed = image.astype(np.int64) * span + (category - low)
    where = np.searchsorted(packed_keys, packed).clip(0, len(packed_keys) - 1)
    return np.where(packed_keys[where] == packed, where, -1)
