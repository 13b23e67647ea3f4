"""Rank with its uncertainty: a board's ranks and a 95% interval for each, by a bootstrap over seeds.

An entry's figure is the mean of its per-seed any-medal percentages. Its rank is 1 + the number of entries
whose figure is strictly higher (equal figures share a rank). The interval resamples each entry's seeds
with replacement, ``replicates`` times, ranks every replicate the same way, and takes the 2.5th and
97.5th percentiles of the entry's ranks. Two entries are *statistically tied* when their intervals
overlap. An entry with one seed has no spread of its own; only the others' move its rank.

Framework-free, deterministic (a fixed random seed), numpy only. The replicates are ranked all at once (a
sort of each replicate's figures, then each figure's rank from the end of its run of equal figures), which
gives the same ranks as ranking one replicate after the other, in a third of the time.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

RANK_VERSION = "bootstrap-seeds-1"
REPLICATES = 2000
LEVEL = 0.95
_DECIMALS = 9  # means equal to this many decimals are equal: float noise never splits a tie
_CHUNK = 65536  # figures ranked in one block


@dataclass(frozen=True)
class RankInterval:
    rank: int
    low: int
    high: int
    tied_with: list[int] = field(default_factory=list)  # indexes of the entries whose intervals overlap


@dataclass(frozen=True)
class TabRank:
    """What the board stores of a ranked row: the rank, its interval, and the ranks it is statistically tied with
    (those of the other entries whose intervals overlap its own, each once, in order)."""

    rank: int
    low: int
    high: int
    tied_ranks: list[int]


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 + how many values are strictly higher, for each value (equal ones share the rank)."""
    ordered = np.sort(values)
    return len(values) - np.searchsorted(ordered, values, side="right") + 1


def _replicate_ranks(boot: np.ndarray) -> np.ndarray:
    """_ranks of every replicate (row) of a replicate × entry matrix, as one sort per row: in a sorted row, the
    number of values up to and including a value is the position after the last one equal to it."""
    replicates, n = boot.shape
    order = np.argsort(boot, axis=1)
    ordered = np.take_along_axis(boot, order, axis=1)
    ends = np.empty((replicates, n), dtype=np.int64)
    ends[:, -1] = n
    ends[:, :-1] = np.where(ordered[:, 1:] == ordered[:, :-1], n, np.arange(1, n))
    np.minimum.accumulate(ends[:, ::-1], axis=1, out=ends[:, ::-1])  # each run of equal values takes its end
    ranks = np.empty((replicates, n), dtype=np.int64)
    np.put_along_axis(ranks, order, n + 1 - ends, axis=1)
    return ranks


def _intervals(
    per_seed: Sequence[Sequence[float]], *, replicates: int, level: float, random_seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each entry's rank, and the lower and upper percentiles of its ranks over the replicates."""
    if any(len(seeds) == 0 for seeds in per_seed):
        raise ValueError("every entry needs at least one seed to be ranked")
    n = len(per_seed)
    means = np.round(np.array([float(np.mean(seeds)) for seeds in per_seed]), _DECIMALS)
    point = _ranks(means)
    rng = np.random.default_rng(random_seed)
    boot = np.empty((n, replicates))
    for i, seeds in enumerate(per_seed):
        values = np.asarray(seeds, dtype=float)
        if len(values) == 1:
            boot[i] = values[0]
        else:
            boot[i] = values[rng.integers(0, len(values), size=(replicates, len(values)))].mean(axis=1)
    boot = np.round(boot, _DECIMALS)
    ranks = np.empty((n, replicates), dtype=np.int64)
    step = max(1, _CHUNK // n)  # replicates ranked together: a block that stays in the processor's cache
    for start in range(0, replicates, step):
        ranks[:, start : start + step] = _replicate_ranks(np.ascontiguousarray(boot[:, start : start + step].T)).T
    # The percentiles as np.quantile(ranks, …, method="lower" / "higher") takes them, by one partial sort: which
    # of the sorted replicates each one is, asked of numpy on the replicates' positions.
    tail = (1 - level) / 2
    positions = np.arange(replicates)
    first = int(np.quantile(positions, tail, method="lower"))
    last = int(np.quantile(positions, 1 - tail, method="higher"))
    ranks.partition((first, last) if first != last else first, axis=1)
    return point, ranks[:, first].astype(int), ranks[:, last].astype(int)


def _overlapping(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Entry × entry: whether the two intervals overlap (an entry is not tied with itself)."""
    overlapping = (low[None, :] <= high[:, None]) & (high[None, :] >= low[:, None])
    np.fill_diagonal(overlapping, False)
    return overlapping


def rank_intervals(
    per_seed: Sequence[Sequence[float]], *, replicates: int = REPLICATES, level: float = LEVEL, random_seed: int = 0
) -> list[RankInterval]:
    """One RankInterval per entry, in the order given; each entry needs at least one seed."""
    if not per_seed:
        return []
    point, low, high = _intervals(per_seed, replicates=replicates, level=level, random_seed=random_seed)
    overlapping = _overlapping(low, high)
    return [
        RankInterval(
            rank=int(point[i]),
            low=int(min(low[i], point[i])),
            high=int(max(high[i], point[i])),
            tied_with=np.flatnonzero(overlapping[i]).tolist(),
        )
        for i in range(len(per_seed))
    ]


def tab_ranks(
    per_seed: Sequence[Sequence[float]], *, replicates: int = REPLICATES, level: float = LEVEL, random_seed: int = 0
) -> list[TabRank]:
    """rank_intervals with, instead of the tied entries' indexes, their distinct ranks: what a board row shows."""
    if not per_seed:
        return []
    point, low, high = _intervals(per_seed, replicates=replicates, level=level, random_seed=random_seed)
    overlapping = _overlapping(low, high)
    by_rank = np.argsort(point, kind="stable")
    ranks_in_order = point[by_rank]
    result = []
    for i in range(len(per_seed)):
        tied = ranks_in_order[overlapping[i, by_rank]]
        distinct = tied[np.concatenate(([True], tied[1:] != tied[:-1]))] if len(tied) else tied
        result.append(
            TabRank(
                rank=int(point[i]),
                low=int(min(low[i], point[i])),
                high=int(max(high[i], point[i])),
                tied_ranks=distinct.tolist(),
            )
        )
    return result
