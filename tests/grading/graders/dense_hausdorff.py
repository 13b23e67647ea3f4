"""The dense UW-Madison Hausdorff distance the grader used before it worked on runs: volumes drawn as boolean
arrays, cropped, their surface found with array shifts. Kept as the reference the run-based one must equal
exactly (tests/grading/graders/test_hausdorff_runs.py)."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from grading.engine.graders.segmentation.rle import Runs, merge

_BLOCK_WIDTHS = (0.2, 0.05, 0.0125, 0.004)  # blocks the search drops at once, as a share of each side


def volume(runs: Runs, masks: np.ndarray, depth_of_mask: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """A boolean volume of ``shape`` = (depth, *plane): mask ``masks[k]`` OR-ed into plane
    ``depth_of_mask[k]``. The masks' pixel numbers are the flat (C-order) index within a plane."""
    plane = shape[1] * shape[2]
    chosen = runs.take(masks)
    shift = np.repeat(np.asarray(depth_of_mask, dtype=np.int64) * plane, chosen.counts)
    starts, ends = merge(chosen.starts + shift, chosen.ends + shift)
    lengths = ends - starts
    out = np.zeros(shape[0] * plane, dtype=bool)
    out[np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))] = True
    return out.reshape(shape)


def normalised_hausdorff(predicted: np.ndarray, truth: np.ndarray, *, max_ratio: float) -> float:
    """The reference's per-volume score: NaN when both are empty (skipped), 0 when identical, 1 when
    exactly one is empty or the prediction has more than ``max_ratio`` times the true voxels, else the
    symmetric Hausdorff distance of the shape-normalised voxel coordinates divided by sqrt(3)."""
    n_predicted, n_truth = int(np.count_nonzero(predicted)), int(np.count_nonzero(truth))
    if n_predicted == 0 and n_truth == 0:
        return math.nan
    if np.array_equal(predicted, truth):
        return 0.0
    if n_predicted == 0 or n_truth == 0 or n_predicted > max_ratio * n_truth:
        return 1.0
    shape = np.asarray(predicted.shape, dtype=np.float64)
    box = _bounding_box(predicted | truth)
    a, b = predicted[box], truth[box]
    origin = np.array([s.start for s in box], dtype=np.int64)
    distance = max(_directed(a, b, origin, shape), _directed(b, a, origin, shape))
    return distance / math.sqrt(3)


def _bounding_box(mask: np.ndarray) -> tuple[slice, ...]:
    box = []
    for axis in range(mask.ndim):
        present = np.flatnonzero(mask.any(axis=tuple(a for a in range(mask.ndim) if a != axis)))
        box.append(slice(int(present[0]), int(present[-1]) + 1))
    return tuple(box)


def _directed(a: np.ndarray, b: np.ndarray, origin: np.ndarray, shape: np.ndarray) -> float:
    """max over voxels of a of the distance to the nearest voxel of b (b non-empty).

    Branch and bound over blocks of ``a - b``, from blocks about a fifth of the volume wide down to a
    hundredth: one voxel per block is looked up, and a block whose voxels cannot beat the best distance
    found so far is dropped, since the distance to b changes by at most the distance moved. The voxels
    left are looked up one by one.
    """
    points = _voxels(a & ~b)
    if not len(points):
        return 0.0
    surface = (_voxels(b & ~_interior(b)) + origin) / shape
    tree = cKDTree(surface, leafsize=32, balanced_tree=False, compact_nodes=False)
    best = 0.0
    for width in _BLOCK_WIDTHS:
        sides = 1 + np.floor(width * shape).astype(np.int64)
        if (sides == 1).all() or len(points) < 1000:
            break
        blocks = points // sides
        span = blocks.max(axis=0) + 1
        key = (blocks[:, 0] * span[1] + blocks[:, 1]) * span[2] + blocks[:, 2]
        _, first, block_of = np.unique(key, return_index=True, return_inverse=True)
        near, _ = tree.query((points[first] + origin) / shape, k=1)
        best = max(best, float(near.max()))
        reach = float(np.sqrt(np.sum(((sides - 1) / shape) ** 2))) * (1 + 1e-9)
        points = points[np.isin(block_of, np.flatnonzero(near + reach > best))]
    distances, _ = tree.query((points + origin) / shape, k=1)
    return max(best, float(distances.max()))


def _voxels(mask: np.ndarray) -> np.ndarray:
    """Coordinates of the voxels in a mask, one row each (``np.argwhere``, faster)."""
    return np.column_stack(np.unravel_index(np.flatnonzero(mask), mask.shape))


def _interior(mask: np.ndarray) -> np.ndarray:
    """Voxels whose six face neighbours are all in the mask (voxels on the array's faces never are)."""
    inner = mask.copy()
    for axis in range(mask.ndim):
        lower = [slice(None)] * mask.ndim
        upper = [slice(None)] * mask.ndim
        lower[axis], upper[axis] = slice(None, -1), slice(1, None)
        inner[tuple(upper)] &= mask[tuple(lower)]
        inner[tuple(lower)] &= mask[tuple(upper)]
        edge: list[slice | int] = [slice(None)] * mask.ndim
        for end in (0, -1):
            edge[axis] = end
            inner[tuple(edge)] = False
    return inner
