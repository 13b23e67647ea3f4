"""The run-based UW-Madison Hausdorff distance equals, to the last bit, the dense one it replaced
(``dense_hausdorff``, itself checked against scipy's ``directed_hausdorff`` in test_segmentation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grading.engine.graders.segmentation import hausdorff
from grading.engine.graders.segmentation.rle import Runs, merge

from . import dense_hausdorff


def masks_as_runs(masks: np.ndarray) -> Runs:
    """Runs of 2-D masks (one per row of ``masks``, flattened in C order), touching runs left apart."""
    starts, ends, counts = [], [], []
    for mask in masks.reshape(len(masks), -1):
        padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
        change = np.flatnonzero(np.diff(padded))
        starts.append(change[0::2])
        ends.append(change[1::2])
        counts.append(len(change) // 2)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Runs(offsets, np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64))


def random_volume(rng, depth: int, rows: int, line: int, *, blobs: int, noise: float) -> np.ndarray:
    volume = np.zeros((depth, rows, line), dtype=bool)
    for _ in range(blobs):
        z, y, x = (int(rng.integers(0, n)) for n in volume.shape)
        dz, dy, dx = (int(rng.integers(1, max(2, n // 2))) for n in volume.shape)
        volume[z : z + dz, y : y + dy, x : x + dx] = True
    return volume ^ (rng.random(volume.shape) < noise)


def both(rng, depth: int, rows: int, line: int, *, masks_per_slice: int = 2) -> tuple[float, float]:
    """The dense and run-based distances of a random pair of volumes, each slice OR-ed from several masks."""
    truth = random_volume(rng, depth, rows, line, blobs=int(rng.integers(1, 5)), noise=float(rng.choice([0, 0.02])))
    moved = np.roll(truth, tuple(int(rng.integers(-2, 3)) for _ in range(3)), axis=(0, 1, 2))
    predicted = moved ^ (rng.random(truth.shape) < float(rng.choice([0, 0.01, 0.05])))
    if rng.random() < 0.2:
        predicted[int(rng.integers(0, depth)), int(rng.integers(0, rows)), int(rng.integers(0, line))] = True
    results = []
    for impl in (dense_hausdorff, hausdorff):
        volumes = []
        for volume in (predicted, truth):
            # split each slice into masks that overlap, as the three organs' masks of a slice may
            parts = np.stack([volume & (rng.random(volume.shape) < 0.7) for _ in range(masks_per_slice - 1)] + [volume])
            stacked = parts.transpose(1, 0, 2, 3).reshape(depth * masks_per_slice, rows * line)
            runs = masks_as_runs(stacked)
            order = np.arange(depth * masks_per_slice)
            volumes.append(impl.volume(runs, order, order // masks_per_slice, (depth, rows, line)))
        results.append(impl.normalised_hausdorff(*volumes, max_ratio=10))
    return results[0], results[1]


@pytest.mark.parametrize("seed", range(40))
def test_runs_give_the_dense_distance_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 12)), int(rng.integers(1, 30)), int(rng.integers(1, 30)))
    dense, runs = both(rng, *shape)
    assert (math.isnan(dense) and math.isnan(runs)) or dense == runs


def test_runs_give_the_dense_distance_on_volumes_big_enough_for_the_block_search():
    rng = np.random.default_rng(99)
    for _ in range(3):
        dense, runs = both(rng, 24, 60, 70)
        assert dense == runs


def test_runs_crossing_lines_and_slices_are_cut_where_they_cross():
    runs = Runs(np.array([0, 1]), np.array([3]), np.array([14]))  # voxels 3..13 of 2 x 5-voxel lines + 1
    starts, ends = merge(runs.starts, runs.ends)
    cut = hausdorff.volume(runs, np.array([0]), np.array([0]), (1, 3, 5))
    assert cut.starts.tolist() == [3, 5, 10] and cut.ends.tolist() == [5, 10, 14]
    assert (starts.tolist(), ends.tolist()) == ([3], [14])
