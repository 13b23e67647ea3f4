"""Box overlaps, vectorised: bird's-eye rotated rectangles (3D boxes) and axis-aligned image boxes.

The rotated-rectangle intersection is measured along its boundary (Green's theorem), which needs no
polygon construction or sorting; it is the area shapely's intersection returns, to rounding.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

_CHUNK = 100_000  # pairs per pass: keeps the (pairs x 4) temporaries small


def rectangle_corners(
    cx: np.ndarray, cy: np.ndarray, width: np.ndarray, length: np.ndarray, yaw: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """x and y (each (n, 4)) of the counter-clockwise corners of boxes with ``length`` along ``yaw``.

    The corner formulas of the Lyft SDK's ``Box3D.ground_bbox_coords`` (points 0..3: centre + along +
    across, + along - across, - along - across, - along + across); sizes are taken by magnitude, since a
    negative size describes the same rectangle, so the corners always run counter-clockwise.
    """
    cos, sin = np.cos(yaw), np.sin(yaw)
    half_l, half_w = np.abs(length) / 2, np.abs(width) / 2
    along_x, along_y = half_l * cos, half_l * sin
    across_x, across_y = half_w * sin, -half_w * cos
    xs = np.stack([along_x + across_x, along_x - across_x, -along_x - across_x, -along_x + across_x], axis=1)
    ys = np.stack([along_y + across_y, along_y - across_y, -along_y - across_y, -along_y + across_y], axis=1)
    return xs + np.asarray(cx)[:, None], ys + np.asarray(cy)[:, None]


def rotated_overlap_areas(a: tuple, b: tuple) -> np.ndarray:
    """Bird's-eye intersection areas of pairs of boxes ``(cx, cy, width, length, yaw)`` (arrays of n each).

    Green's theorem: the intersection's boundary is the part of each rectangle's edges inside the other, so
    its area is the sum of the shoelace terms of those clipped edges (Cyrus-Beck clipping against the four
    half-planes of the other rectangle). An edge lying on an edge of the other rectangle is counted once:
    from ``a`` when both run the same way, from both (they cancel) when they run opposite ways. Coordinates
    are taken relative to a's centre, so large map coordinates cost no precision.
    """
    out = np.empty(len(a[0]), dtype=np.float64)
    for start in range(0, len(out), _CHUNK):
        part = slice(start, start + _CHUNK)
        ax, ay, aw, al, ayaw = (np.asarray(v)[part] for v in a)
        bx, by, bw, bl, byaw = (np.asarray(v)[part] for v in b)
        a_corners = rectangle_corners(np.zeros(len(ax)), np.zeros(len(ax)), aw, al, ayaw)
        b_corners = rectangle_corners(bx - ax, by - ay, bw, bl, byaw)
        out[part] = np.abs(
            _inside_edges_area(a_corners, b_corners, first=True) + _inside_edges_area(b_corners, a_corners, first=False)
        )
    return out


def _inside_edges_area(polygon: tuple, clip: tuple, *, first: bool) -> np.ndarray:
    """Sum of shoelace terms of the parts of ``polygon``'s edges inside ``clip`` (both counter-clockwise)."""
    px, py = polygon
    dx, dy = np.roll(px, -1, axis=1) - px, np.roll(py, -1, axis=1) - py  # (n, 4) edge directions
    cx, cy = clip
    t_in = np.zeros_like(px)
    t_out = np.ones_like(px)
    outside = np.zeros(px.shape, dtype=bool)
    for k in range(4):
        ex, ey = (cx[:, (k + 1) % 4] - cx[:, k])[:, None], (cy[:, (k + 1) % 4] - cy[:, k])[:, None]
        # side(t) = a + t * b >= 0 on the inner side (left) of clip edge k
        a = ex * (py - cy[:, k, None]) - ey * (px - cx[:, k, None])
        b = ex * dy - ey * dx
        with np.errstate(divide="ignore", invalid="ignore"):
            crossing = -a / b
        t_in = np.where(b > 0, np.maximum(t_in, crossing), t_in)
        t_out = np.where(b < 0, np.minimum(t_out, crossing), t_out)
        inside_parallel = (a > 0) | ((a == 0) & (True if first else (ex * dx + ey * dy) < 0))
        outside |= (b == 0) & ~inside_parallel
    keep = (t_in < t_out) & ~outside
    x0, y0 = px + t_in * dx, py + t_in * dy
    x1, y1 = px + t_out * dx, py + t_out * dy
    return 0.5 * np.where(keep, x0 * y1 - y0 * x1, 0.0).sum(axis=1)


def box_iou_xyxy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of pairs of (x_min, y_min, x_max, y_max) boxes; 0 where the union has no area."""
    width = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    height = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    inter = np.clip(width, 0, None) * np.clip(height, 0, None)
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def pairs_within_groups(
    left_group: np.ndarray, right_start: np.ndarray, right_count: np.ndarray, *, max_pairs: int = 4_000_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (left, right) index arrays of every pair of a left item with each right item of its group.

    Right items are sorted by group: group g holds ``right_start[g] : right_start[g] + right_count[g]``.
    Left items are taken in order, in slices of at most ``max_pairs`` pairs (a single item never splits).
    """
    per_left = right_count[left_group]
    ends = np.cumsum(per_left)
    first = 0
    while first < len(left_group):
        base = ends[first - 1] if first else 0
        last = int(np.searchsorted(ends, base + max_pairs, side="right"))
        last = max(last, first + 1)
        counts = per_left[first:last]
        left = np.repeat(np.arange(first, last), counts)
        offsets = np.arange(len(left)) - np.repeat(np.cumsum(counts) - counts, counts)
        right = right_start[left_group[left]] + offsets
        yield left, right
        first = last
