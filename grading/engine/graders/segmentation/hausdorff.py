"""The normalised 3-D Hausdorff distance of UW-Madison GI tract, exact and fast.

The reference stacks a case-day's slices into a volume, takes the voxel coordinates divided by the
volume's shape and returns the larger of scipy's two ``directed_hausdorff`` distances, divided by sqrt(3)
so that it lies in [0, 1]. ``directed_hausdorff`` is exact but can take minutes on two large, nearly equal
voxel sets. The same number comes out of two observations:

* a point of A that is also in B is at distance 0 from B, so only ``A - B`` matters;
* the symmetric distance is the larger of the two directed ones, so only the voxels of either ``A - B``
  that could be the farthest need their exact distance, and only against the voxels of B that could be
  nearest to them.

No volume is ever drawn: a volume is its sorted runs of voxels along the last axis, cut into blocks of a
few voxels. The distance to B changes by at most the distance moved, so a k-d tree over the centres of
B's blocks bounds the distance of every voxel of a block of ``A - B`` to within twice a block's reach.
Branch and bound on coarse blocks (about 16 voxels across), then on fine ones (about 4), drops the
blocks of either direction that cannot hold the farthest voxel, and the blocks of B that cannot hold the
voxel nearest to a block kept; the voxels left are looked up exactly. On the real answers that is a blob
of one direction against a patch of the other volume, a few thousand voxels, instead of k-d trees over
the ~125,000 voxels of each volume's surface.

Bit for bit: the exact distances come from a k-d tree over voxel coordinates divided by the shape, as
in the reference, and every bound carries a relative slack of 1e-9, far above rounding (about 1e-13
here). So a voxel or block left out is farther from the answer than rounding can move a distance, a
voxel's tree holds every voxel of B that rounding could make its nearest, and the largest rounded
distance is the one the dense search finds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain

import numpy as np
from scipy.spatial import cKDTree

from grading.engine.graders.segmentation.rle import Runs, merge

_BLOCK_SHARE = 4 / 266  # a fine block's side as a share of each axis: 4 voxels of a 266-voxel line, 2 of 144 slices
_COARSER = 4  # a coarse block is this many fine blocks along each axis
_FEW = 64  # asked blocks looked around one by one; more are looked around at once
_SLACK = 1e-9  # relative margin on every bound, far above rounding and far below the gap between distances


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
    return _symmetric(predicted, truth) / math.sqrt(3)


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


def _difference(a: Volume, b: Volume) -> tuple[np.ndarray, np.ndarray]:
    """Runs of the voxels of ``a`` not in ``b``: ``a``'s runs cut by the gaps between ``b``'s runs."""
    gap_starts = np.concatenate([[0], b.ends])
    gap_ends = np.concatenate([b.starts, [math.prod(a.shape)]])
    first = np.searchsorted(gap_ends, a.starts, side="right")  # the first gap ending after the run starts
    count = np.searchsorted(gap_starts, a.ends, side="left") - first  # gaps starting before the run ends
    run = np.repeat(np.arange(len(a.starts)), count)
    gap = np.repeat(first - np.cumsum(count) + count, count) + np.arange(len(run))
    starts, ends = np.maximum(a.starts[run], gap_starts[gap]), np.minimum(a.ends[run], gap_ends[gap])
    kept = ends > starts
    return starts[kept], ends[kept]


def _voxels(starts: np.ndarray, ends: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Coordinates of the voxels of runs, one row each, in the runs' order."""
    lengths = ends - starts
    flat = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    return np.column_stack(np.unravel_index(flat, shape))


# ---------------------------------------------------------------------------------------------------
# Blocks


@dataclass(frozen=True)
class _Grid:
    """Blocks of ``side[i]`` voxels along axis i tiling a volume of ``shape``, numbered in C order."""

    shape: tuple[int, int, int]
    side: np.ndarray
    count: np.ndarray
    reach: float  # how far (shape-normalised) a voxel of a block can lie from the block's centre, with slack

    @staticmethod
    def of(shape: tuple[int, int, int], side: np.ndarray) -> _Grid:
        count = -(-np.asarray(shape, dtype=np.int64) // side)
        reach = float(np.sqrt(np.sum(((side - 1) / 2 / np.asarray(shape, dtype=np.float64)) ** 2)))
        return _Grid(shape, side, count, reach * (1 + _SLACK))

    @property
    def blocks(self) -> int:
        return int(self.count.prod())

    def pieces(self, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Runs (each within one line) cut where they cross from one block to the next, and each piece's
        block number."""
        rows, line, width = self.shape[1], self.shape[2], int(self.side[2])
        lines = starts // line
        origin = lines * line
        first = (starts - origin) // width
        pieces = (ends - 1 - origin) // width - first + 1
        run = np.repeat(np.arange(len(starts)), pieces)
        column = first[run] + np.arange(len(run)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
        low = origin[run] + column * width
        block_row = (lines // rows // self.side[0]) * self.count[1] + (lines % rows) // self.side[1]
        return np.maximum(starts[run], low), np.minimum(ends[run], low + width), block_row[run] * self.count[2] + column

    def centres(self, blocks: np.ndarray) -> np.ndarray:
        """Shape-normalised centres of blocks, one row each."""
        index = np.column_stack(np.unravel_index(blocks, tuple(self.count.tolist())))
        return (index * self.side + (self.side - 1) / 2) / np.asarray(self.shape, dtype=np.float64)

    def coarser(self) -> _Grid:
        """The grid of blocks of ``_COARSER`` blocks of this one along each axis."""
        return _Grid.of(self.shape, self.side * _COARSER)


def _unique(blocks: np.ndarray, size: int) -> np.ndarray:
    """The distinct block numbers, sorted (below ``size``)."""
    flags = np.zeros(size, dtype=bool)
    flags[blocks] = True
    return np.flatnonzero(flags)


def _among(blocks: np.ndarray, chosen: np.ndarray, size: int) -> np.ndarray:
    """Whether each of ``blocks`` is one of ``chosen`` (block numbers below ``size``)."""
    flags = np.zeros(size, dtype=bool)
    flags[chosen] = True
    return flags[blocks]


@dataclass(frozen=True)
class _Blocks:
    """Runs (each within one line) cut into the blocks of a grid: the pieces, the block of each piece,
    and the blocks holding a voxel (sorted)."""

    starts: np.ndarray
    ends: np.ndarray
    block_of_piece: np.ndarray
    blocks: np.ndarray

    @staticmethod
    def of(starts: np.ndarray, ends: np.ndarray, grid: _Grid) -> _Blocks:
        pieces = grid.pieces(starts, ends)
        return _Blocks(*pieces, _unique(pieces[2], grid.blocks))

    def within(self, chosen: np.ndarray, grid: _Grid) -> tuple[np.ndarray, np.ndarray]:
        """The pieces in the ``chosen`` blocks."""
        keep = _among(self.block_of_piece, chosen, grid.blocks)
        return self.starts[keep], self.ends[keep]


def _tree(points: np.ndarray) -> cKDTree:
    return cKDTree(points, leafsize=16, balanced_tree=False, compact_nodes=False)


def _nearest(grid: _Grid, asked: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, cKDTree]:
    """The distance from each ``asked`` block's centre to the nearest centre of a ``target`` block, and the
    k-d tree over the target blocks' centres."""
    tree = _tree(grid.centres(target))
    nearest, _ = tree.query(grid.centres(asked), k=1)
    return nearest, tree


def _around(grid: _Grid, asked: np.ndarray, nearest: np.ndarray, target: np.ndarray, tree: cKDTree) -> np.ndarray:
    """The ``target`` blocks (``tree`` over their centres) that can hold the voxel of B nearest to a voxel
    of the ``asked`` blocks (each ``nearest`` from the nearest target block's centre).

    A voxel of asked block a is at most ``nearest[a] + 2 reach`` from B, so the block of its nearest
    voxel has its centre within ``nearest[a] + 4 reach`` of a's centre."""
    radius = (nearest + 4 * grid.reach) * (1 + _SLACK)
    if len(asked) <= _FEW:
        found = tree.query_ball_point(grid.centres(asked), r=radius, return_sorted=False)
        return target[_unique(np.fromiter(chain.from_iterable(found), dtype=np.int64), len(target))]
    # Many blocks: the target blocks within the largest radius of any asked block, found without lists.
    distance, _ = _tree(grid.centres(asked)).query(grid.centres(target), k=1, distance_upper_bound=radius.max())
    return target[np.isfinite(distance)]


def _symmetric(predicted: Volume, truth: Volume) -> float:
    """The larger of the two directed Hausdorff distances of shape-normalised voxel coordinates.

    Branch and bound on two grids of blocks: the coarse blocks of either ``A - B`` that cannot be
    farther from B than some other block are dropped, then the fine blocks within those, then the voxels
    left are looked up exactly, the most promising direction first. A block whose centre is d from the
    nearest centre of a block of B holds voxels between d - 2 reach and d + 2 reach from B. Only the blocks
    of B that can hold a voxel nearest to one of the blocks kept go on to the next grid.
    """
    shape = predicted.shape
    fine = _Grid.of(shape, np.array([max(1, round(_BLOCK_SHARE * n)) for n in shape], dtype=np.int64))
    coarse = fine.coarser()
    searches = []
    for a, b in ((predicted, truth), (truth, predicted)):
        starts, ends = _difference(a, b)
        if len(starts):  # else a lies within b: every distance is 0
            asked, target = _Blocks.of(starts, ends, coarse), _Blocks.of(b.starts, b.ends, coarse)
            searches.append((asked, target, *_nearest(coarse, asked.blocks, target.blocks)))
    floor = max((float(s[2].max()) - 2 * coarse.reach for s in searches), default=0.0) * (1 - _SLACK)
    best = 0.0
    for asked, target, nearest, tree in sorted(searches, key=lambda s: -float(s[2].max())):
        kept = (nearest + 2 * coarse.reach) * (1 + _SLACK) >= max(floor, best)
        if not kept.any():
            continue
        near = _around(coarse, asked.blocks[kept], nearest[kept], target.blocks, tree)
        asked = _Blocks.of(*asked.within(asked.blocks[kept], coarse), fine)
        target = _Blocks.of(*target.within(near, coarse), fine)
        nearest, tree = _nearest(fine, asked.blocks, target.blocks)
        floor = max(floor, (float(nearest.max()) - 2 * fine.reach) * (1 - _SLACK))
        kept = (nearest + 2 * fine.reach) * (1 + _SLACK) >= max(floor, best)
        if kept.any():
            near = _around(fine, asked.blocks[kept], nearest[kept], target.blocks, tree)
            distance = _farthest(asked.within(asked.blocks[kept], fine), target.within(near, fine), shape)
            best = max(best, distance)
    return best


def _farthest(
    asked: tuple[np.ndarray, np.ndarray], target: tuple[np.ndarray, np.ndarray], shape: tuple[int, int, int]
) -> float:
    """The largest distance from a voxel of the ``asked`` runs to one of the ``target`` runs, exactly as a
    k-d tree over voxel coordinates divided by the shape gives it."""
    scale = np.asarray(shape, dtype=np.float64)
    tree = cKDTree(_voxels(*target, shape) / scale, leafsize=32, balanced_tree=False, compact_nodes=False)
    distances, _ = tree.query(_voxels(*asked, shape) / scale, k=1)
    return float(distances.max())
