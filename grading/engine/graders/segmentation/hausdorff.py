"""The normalised 3-D Hausdorff distance of UW-Madison GI tract, exact and fast.

The reference stacks a case-day's slices into a volume, takes the voxel coordinates divided by the
volume's shape and returns the larger of scipy's two ``directed_hausdorff`` distances, divided by sqrt(3)
so that it lies in [0, 1]. ``directed_hausdorff`` is exact but can take minutes on two large, nearly equal
voxel sets. The same number comes out of two observations:

* a point of A that is also in B is at distance 0 from B, so only ``A - B`` matters;
* the voxel of B nearest to a voxel outside B lies on B's surface (a voxel of B with a face neighbour
  outside B): from a voxel inside, one step towards the far voxel stays in B and gets closer. So a k-d tree
  over B's surface voxels answers every query. Any extra voxels of B in the tree change nothing; the
  faces of the box around both sets count as surface.

No volume is ever drawn: a volume is its sorted runs of voxels along the last axis (a few thousand where
it holds hundreds of thousands of voxels), and ``A - B``, B's interior and its surface are set operations
on runs. Only the voxels of ``A - B`` and of B's surface are listed one by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from grading.engine.graders.segmentation.rle import Runs, merge

_BLOCK_WIDTHS = (0.2, 0.05, 0.0125, 0.004)  # blocks the search drops at once, as a share of each side
_NEAR_STEPS = 1  # voxels of A - B this many face steps from B are looked up only if no other is farther


@dataclass(frozen=True)
class Volume:
    """A boolean volume of ``shape`` = (depth, *plane) as sorted runs ``[starts, ends)`` of C-order voxel
    numbers, each within one line of the last axis, neither overlapping nor touching within a line."""

    starts: np.ndarray
    ends: np.ndarray
    shape: tuple[int, int, int]

    @property
    def voxels(self) -> int:
        return int((self.ends - self.starts).sum())


def volume(runs: Runs, masks: np.ndarray, depth_of_mask: np.ndarray, shape: tuple[int, int, int]) -> Volume:
    """The volume of ``shape``: mask ``masks[k]`` OR-ed into plane ``depth_of_mask[k]``. The masks' pixel
    numbers are the flat (C-order) index within a plane."""
    plane = shape[1] * shape[2]
    chosen = runs.take(masks)
    shift = np.repeat(np.asarray(depth_of_mask, dtype=np.int64) * plane, chosen.counts)
    starts, ends = merge(chosen.starts + shift, chosen.ends + shift)
    return Volume(*_split_lines(starts, ends, shape[2]), shape)


def normalised_hausdorff(predicted: Volume, truth: Volume, *, max_ratio: float) -> float:
    """The reference's per-volume score: NaN when both are empty (skipped), 0 when identical, 1 when
    exactly one is empty or the prediction has more than ``max_ratio`` times the true voxels, else the
    symmetric Hausdorff distance of the shape-normalised voxel coordinates divided by sqrt(3)."""
    n_predicted, n_truth = predicted.voxels, truth.voxels
    if n_predicted == 0 and n_truth == 0:
        return math.nan
    if np.array_equal(predicted.starts, truth.starts) and np.array_equal(predicted.ends, truth.ends):
        return 0.0
    if n_predicted == 0 or n_truth == 0 or n_predicted > max_ratio * n_truth:
        return 1.0
    box = _bounding_box(predicted, truth)
    distance = max(_directed(predicted, truth, box), _directed(truth, predicted, box))
    return distance / math.sqrt(3)


def _split_lines(starts: np.ndarray, ends: np.ndarray, line: int) -> tuple[np.ndarray, np.ndarray]:
    """Runs cut where they cross from one line of ``line`` voxels to the next."""
    first, last = starts // line, (ends - 1) // line
    pieces = last - first + 1
    if (pieces == 1).all():
        return starts, ends
    run = np.repeat(np.arange(len(starts)), pieces)
    k = np.arange(len(run)) - np.repeat(np.cumsum(pieces) - pieces, pieces)  # piece number within its run
    line_start = (first[run] + k) * line
    return np.maximum(starts[run], line_start), np.minimum(ends[run], line_start + line)


def _bounding_box(a: Volume, b: Volume) -> np.ndarray:
    """(first, last) voxel index along each axis of the box around both volumes: shape (3, 2)."""
    starts, ends = np.concatenate([a.starts, b.starts]), np.concatenate([a.ends, b.ends])
    plane, line = a.shape[1] * a.shape[2], a.shape[2]
    lines = starts // line
    return np.array(
        [
            [starts.min() // plane, (ends.max() - 1) // plane],
            [(lines % a.shape[1]).min(), (lines % a.shape[1]).max()],
            [(starts % line).min(), (ends - 1 - lines * line).max()],
        ],
        dtype=np.int64,
    )


def _covered(starts: np.ndarray, ends: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """For each piece ``[bounds[k], bounds[k + 1])``, how many of the runs contain it (0 or 1 for disjoint
    runs), when every start and end of the runs is one of the sorted distinct ``bounds``."""
    change = np.bincount(np.searchsorted(bounds, starts), minlength=len(bounds))
    change -= np.bincount(np.searchsorted(bounds, ends), minlength=len(bounds))
    return np.cumsum(change[:-1])


def _combine(
    run_lists: list[tuple[np.ndarray, np.ndarray]], keep: Callable[[list[np.ndarray]], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The runs of the voxels where ``keep(counts)`` holds, ``counts[i]`` telling whether the voxel is in
    run list i (each sorted and disjoint). Pieces come out sorted, not merged."""
    bounds = np.sort(np.concatenate([array for pair in run_lists for array in pair]))
    distinct = np.ones(len(bounds), dtype=bool)
    distinct[1:] = bounds[1:] != bounds[:-1]
    bounds = bounds[distinct]  # np.unique, without NumPy 2's slower hash table
    if len(bounds) < 2:
        return bounds[:0], bounds[:0]
    chosen = keep([_covered(starts, ends, bounds) for starts, ends in run_lists])
    return bounds[:-1][chosen], bounds[1:][chosen]


def _difference(a: Volume, b: Volume) -> tuple[np.ndarray, np.ndarray]:
    """Runs of the voxels of ``a`` not in ``b``."""
    return _combine([(a.starts, a.ends), (b.starts, b.ends)], lambda c: (c[0] > 0) & (c[1] == 0))


def _surface(b: Volume, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of b's voxels that have a face neighbour outside b or lie on a face of ``box``."""
    depth, rows, line = b.shape
    # Along a line, the voxels with both neighbours in b are each run less its two ends (runs do not touch).
    shrunk = (b.starts + 1, np.maximum(b.ends - 1, b.starts + 1))
    shifted = [shrunk] + [(b.starts - d, b.ends - d) for step in (line, rows * line) for d in (step, -step)]
    inner_starts, inner_ends = _combine(shifted, lambda c: np.logical_and.reduce([x > 0 for x in c]))
    # A voxel on a face of the box is surface: drop those from the interior (runs cut into lines first).
    inner_starts, inner_ends = _split_lines(inner_starts, inner_ends, line)
    lines = inner_starts // line
    z, y, x0 = lines // rows, lines % rows, lines * line
    inside = (z > box[0, 0]) & (z < box[0, 1]) & (y > box[1, 0]) & (y < box[1, 1])
    inner_starts = np.maximum(inner_starts, x0 + box[2, 0] + 1)[inside]
    inner_ends = np.minimum(inner_ends, x0 + box[2, 1])[inside]
    nonempty = inner_ends > inner_starts
    interior = Volume(inner_starts[nonempty], inner_ends[nonempty], b.shape)
    return _difference(b, interior)


def _dilated(starts: np.ndarray, ends: np.ndarray, shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Runs of the voxels in the runs or one face step from them (never across a face of the volume)."""
    depth, rows, line = shape
    lines = starts // line
    z, y = lines // rows, lines % rows
    along = (np.maximum(starts - 1, lines * line), np.minimum(ends + 1, (lines + 1) * line))
    moved = [along]
    for step, keep in ((line, y < rows - 1), (-line, y > 0), (rows * line, z < depth - 1), (-rows * line, z > 0)):
        moved.append((starts[keep] + step, ends[keep] + step))
    starts, ends = merge(np.concatenate([m[0] for m in moved]), np.concatenate([m[1] for m in moved]))
    return _split_lines(starts, ends, line)


def _voxels(starts: np.ndarray, ends: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Coordinates of the voxels of sorted runs, one row each, in C order (as ``np.argwhere``)."""
    lengths = ends - starts
    flat = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    return np.column_stack(np.unravel_index(flat, shape))


def _directed(a: Volume, b: Volume, box: np.ndarray) -> float:
    """max over voxels of a of the distance to the nearest voxel of b (b non-empty).

    Voxels of ``a - b`` next to b are looked up only when no voxel farther out is farther than one step.
    Branch and bound over blocks of those voxels, from blocks about a fifth of the volume wide down to a
    few hundredths: one voxel per block is looked up, and a block whose voxels cannot beat the best
    distance found so far is dropped, since the distance to b changes by at most the distance moved. The
    voxels left are looked up one by one.
    """
    only_a = Volume(*_difference(a, b), a.shape)
    if not only_a.voxels:
        return 0.0
    shape = np.asarray(a.shape, dtype=np.float64)
    surface = _voxels(*_surface(b, box), a.shape) / shape
    tree = cKDTree(surface, leafsize=32, balanced_tree=False, compact_nodes=False)
    # A voxel k face steps from b is at most k steps along the longest axis step from it: when a voxel
    # farther out is farther than that, the near ones need no look-up.
    near = (b.starts, b.ends)
    for _ in range(_NEAR_STEPS):
        near = _dilated(*near, a.shape)
    far = Volume(*_difference(only_a, Volume(*near, a.shape)), a.shape)
    if far.voxels:
        distance = _farthest(_voxels(far.starts, far.ends, a.shape), tree, shape, box[:, 0])
        if distance > _NEAR_STEPS / min(a.shape) * (1 + 1e-9):
            return distance
    return _farthest(_voxels(only_a.starts, only_a.ends, a.shape), tree, shape, box[:, 0])


def _farthest(points: np.ndarray, tree: cKDTree, shape: np.ndarray, origin: np.ndarray) -> float:
    """max over ``points`` of the distance to the nearest point in ``tree`` (coordinates divided by ``shape``)."""
    best = 0.0
    for width in _BLOCK_WIDTHS:
        sides = 1 + np.floor(width * shape).astype(np.int64)
        if (sides == 1).all() or len(points) < 1000:
            break
        blocks = (points - origin) // sides
        span = blocks.max(axis=0) + 1
        key = (blocks[:, 0] * span[1] + blocks[:, 1]) * span[2] + blocks[:, 2]
        # One voxel per block (the last one listed), found with a dense table of the blocks.
        representative = np.full(int(span.prod()), -1, dtype=np.int64)
        representative[key] = np.arange(len(key))
        occupied = np.flatnonzero(representative >= 0)
        near, _ = tree.query(points[representative[occupied]] / shape, k=1)
        best = max(best, float(near.max()))
        reach = float(np.sqrt(np.sum(((sides - 1) / shape) ** 2))) * (1 + 1e-9)
        keep = np.zeros(len(representative), dtype=bool)
        keep[occupied[near + reach > best]] = True
        points = points[keep[key]]
    distances, _ = tree.query(points / shape, k=1)
    return max(best, float(distances.max()))
