"""Rank with its uncertainty: a board's ranks and a 95% interval for each, by a bootstrap over seeds.

An entry's figure is the mean of its per-seed any-medal percentages. Its rank is 1 + the number of entries
whose figure is strictly higher (equal figures share a rank). The interval resamples each entry's seeds
with replacement, ``replicates`` times, ranks every replicate the same way, and takes the 2.5th and
97.5th percentiles of the entry's ranks. Two entries are *statistically tied* when their intervals
overlap. An entry with one seed has no spread of its own; only the others' move its rank.

Framework-free, deterministic (a fixed random seed), numpy only, and fast enough to rank a tab again on every
grading change that moves a figure: the draws are made a block of entries at a time, an entry's resampled
mean is looked up among the means of every ordered draw of its seeds, each replicate's ranks are counted over
the distinct figures instead of sorted, and so are each entry's percentiles. The tests hold all of it to a
reference that draws, averages, sorts and ranks one entry and one replicate after the other.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

RANK_VERSION = "bootstrap-seeds-1"
REPLICATES = 2000
LEVEL = 0.95
_DECIMALS = 9  # means equal to this many decimals are equal: float noise never splits a tie
_CHUNK = 65536  # figures ranked in one block when sorting
_DRAWS_PER_BLOCK = 1 << 18  # seed draws made at once (2 MB: they stay in the processor's cache)
_COUNTING_CELLS = 1 << 23  # replicates × distinct values up to which ranks are counted, not sorted
_COUNTED_RANKS = 1 << 22  # entries × ranks up to which the percentiles are counted, not partitioned (32 MB)
_ADDED_IN_ORDER = 7  # up to this many values, numpy's mean adds them from the first to the last
_ENUMERATED_SEEDS = 4  # up to this many seeds, every ordered draw's mean is computed once (4**4 = 256 of them)


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


def _resample(
    per_seed: Sequence[Sequence[float]], *, replicates: int, random_seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each entry's mean over its seeds; its means over its seeds drawn with replacement, as places in a table;
    and the table (all rounded).

    The draws are those of one ``rng.integers(0, k, size=(replicates, k))`` per entry of k > 1 seeds, in the
    entries' order, each averaged as numpy's mean of the drawn values does. Consecutive entries with the same
    number of seeds are drawn in one call: numpy's generator gives the same integers in one call as in
    consecutive calls with the same bound. With up to four seeds, an entry's part of the table holds its mean
    of every ordered draw (27 for 3 seeds), and a draw is its place there: no figure is gathered or added per
    replicate. With more, its part holds its resampled means themselves. (The test against the reference, which
    draws and averages one entry after the other, holds to all of this.)"""
    n = len(per_seed)
    rng = np.random.default_rng(random_seed)
    means = np.empty(n)
    places = np.empty((n, replicates), dtype=np.int64)
    parts = []
    size = 0
    start = 0
    while start < n:
        k = len(per_seed[start])
        most = max(1, _DRAWS_PER_BLOCK // (replicates * k))
        end = start + 1
        while end < n and end - start < most and len(per_seed[end]) == k:
            end += 1
        values = np.array(per_seed[start:end], dtype=float)  # entries × seeds
        means[start:end] = values.mean(axis=1)
        if k == 1:
            part, place = values, np.zeros((1, replicates), dtype=np.int64)
        else:
            draws = rng.integers(0, k, size=(end - start, replicates, k))
            if k <= _ENUMERATED_SEEDS:
                orders = np.array(list(itertools.product(range(k), repeat=k)))  # every ordered draw, in order
                part = values[:, orders].mean(axis=2)
                place = draws[..., 0]
                for seed in range(1, k):  # the draw's place among the ordered draws: its seeds as base-k digits
                    place *= k
                    place += draws[..., seed]
            else:
                draws += (np.arange(end - start) * k)[:, None, None]  # into the entries' seeds, in order
                part = _mean_of_last_axis(np.take(values.ravel(), draws))
                place = np.arange(replicates)[None, :]
        np.add(place, (size + np.arange(end - start) * part.shape[1])[:, None], out=places[start:end])
        parts.append(part.ravel())
        size += part.size
        start = end
    table = np.round(np.concatenate(parts), _DECIMALS)
    return np.round(means, _DECIMALS, out=means), places, table


def _mean_of_last_axis(drawn: np.ndarray) -> np.ndarray:
    """drawn.mean(axis=-1). For up to seven values, numpy adds them from the first to the last and divides;
    doing so here avoids its slow reduction of a short last axis."""
    k = drawn.shape[-1]
    if k > _ADDED_IN_ORDER:
        return drawn.mean(axis=-1)
    total = drawn[..., 0] + drawn[..., 1]
    for seed in range(2, k):
        total += drawn[..., seed]
    total /= k
    return total


def _replicate_ranks(places: np.ndarray, table: np.ndarray) -> np.ndarray:
    """_ranks of every replicate (column) of an entry × replicate matrix of figures, given as places in a table.

    A board's figures take few distinct values (counts over a split of 22 or 75 competitions, averaged over a few
    seeds), so each figure gets the number of its value among the distinct ones, and a replicate's ranks come
    from counting: 1 + how many figures of the replicate have a higher number. Many distinct values (or a
    non-finite one) rank by sorting each replicate instead; both give _ranks."""
    replicates = places.shape[1]
    distinct, numbers = np.unique(table, return_inverse=True)
    if len(distinct) * replicates > _COUNTING_CELLS or not np.isfinite(distinct[[0, -1]]).all():
        return _replicate_ranks_by_sorting(np.take(table, places))
    codes = np.take(numbers.ravel(), places)
    codes += (np.arange(replicates, dtype=np.int64) * len(distinct))[None, :]
    counts = np.bincount(codes.ravel(), minlength=replicates * len(distinct)).reshape(replicates, len(distinct))
    # higher[r, v]: how many figures of replicate r are above the v-th distinct value
    higher = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1] - counts
    return np.take(higher.ravel(), codes) + 1


def _replicate_ranks_by_sorting(boot: np.ndarray) -> np.ndarray:
    """_replicate_ranks by one sort per replicate, a block of replicates at a time: in a sorted replicate, the
    number of values up to and including a value is the position after the last one equal to it."""
    n, replicates = boot.shape
    ranks = np.empty((n, replicates), dtype=np.int64)
    step = max(1, _CHUNK // n)  # replicates ranked together: a block that stays in the processor's cache
    for first in range(0, replicates, step):
        block = np.ascontiguousarray(boot[:, first : first + step].T)  # replicate × entry
        width = block.shape[0]
        order = np.argsort(block, axis=1)
        ordered = np.take_along_axis(block, order, axis=1)
        ends = np.empty((width, n), dtype=np.int64)
        ends[:, -1] = n
        ends[:, :-1] = np.where(ordered[:, 1:] == ordered[:, :-1], n, np.arange(1, n))
        np.minimum.accumulate(ends[:, ::-1], axis=1, out=ends[:, ::-1])  # each run of equal values takes its end
        block_ranks = np.empty((width, n), dtype=np.int64)
        np.put_along_axis(block_ranks, order, n + 1 - ends, axis=1)
        ranks[:, first : first + step] = block_ranks.T
    return ranks


def _intervals(
    per_seed: Sequence[Sequence[float]], *, replicates: int, level: float, random_seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each entry's rank, and the lower and upper percentiles of its ranks over the replicates."""
    if any(len(seeds) == 0 for seeds in per_seed):
        raise ValueError("every entry needs at least one seed to be ranked")
    means, places, table = _resample(per_seed, replicates=replicates, random_seed=random_seed)
    point = _ranks(means)
    ranks = _replicate_ranks(places, table)
    # The percentiles as np.quantile(ranks, …, method="lower" / "higher") takes them: which of the sorted
    # replicates each one is, asked of numpy on the replicates' positions.
    tail = (1 - level) / 2
    positions = np.arange(replicates)
    first = int(np.quantile(positions, tail, method="lower"))
    last = int(np.quantile(positions, 1 - tail, method="higher"))
    low, high = _order_statistics(ranks, (first, last))
    return point, low, high


def _order_statistics(ranks: np.ndarray, positions: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """For each entry (row of ranks, each from 1 to the number of entries), its ranks' values at these positions
    of the sorted row. Counted for a board of up to a few thousand entries: how many times each entry got each
    rank, summed from the best rank on, reaches position + 1 at the value; a larger board partitions each row."""
    n = ranks.shape[0]
    first, last = positions
    if n * (n + 1) > _COUNTED_RANKS:
        ranks.partition(positions if first != last else first, axis=1)
        return ranks[:, first], ranks[:, last]
    counts = np.bincount((ranks + (np.arange(n) * (n + 1))[:, None]).ravel(), minlength=n * (n + 1))
    reached = np.cumsum(counts.reshape(n, n + 1), axis=1)  # entry × rank: how many replicates at that rank or better
    return np.argmax(reached > first, axis=1), np.argmax(reached > last, axis=1)


def _shown(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The rank and the interval a row shows (the interval always holds the rank), as Python ints."""
    return point.tolist(), np.minimum(low, point).tolist(), np.maximum(high, point).tolist()


def _row_lists(mask: np.ndarray, labels: np.ndarray) -> list[list[int]]:
    """For each row of a boolean matrix, the labels of its true columns, in the columns' order."""
    rows, columns = np.nonzero(mask)
    flat = labels[columns].tolist()
    ends = np.cumsum(np.bincount(rows, minlength=mask.shape[0])).tolist()
    return [flat[first:end] for first, end in zip([0, *ends[:-1]], ends, strict=True)]


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
    tied_with = _row_lists(_overlapping(low, high), np.arange(len(per_seed)))
    return [
        RankInterval(rank=rank, low=shown_low, high=shown_high, tied_with=tied)
        for rank, shown_low, shown_high, tied in zip(*_shown(point, low, high), tied_with, strict=True)
    ]


def tab_ranks(
    per_seed: Sequence[Sequence[float]], *, replicates: int = REPLICATES, level: float = LEVEL, random_seed: int = 0
) -> list[TabRank]:
    """rank_intervals with, instead of the tied entries' indexes, their distinct ranks: what a board row shows."""
    if not per_seed:
        return []
    point, low, high = _intervals(per_seed, replicates=replicates, level=level, random_seed=random_seed)
    # Whom a row is tied with, by the distinct ranks of the entries whose intervals overlap its own: the columns
    # (entries) in the order of their ranks, each run of one rank reduced to whether any of it overlaps.
    by_rank = np.argsort(point, kind="stable")
    levels, starts = np.unique(point[by_rank], return_index=True)
    reached = np.logical_or.reduceat(_overlapping(low, high)[:, by_rank], starts, axis=1)
    tied_ranks = _row_lists(reached, levels)
    return [
        TabRank(rank=rank, low=shown_low, high=shown_high, tied_ranks=tied)
        for rank, shown_low, shown_high, tied in zip(*_shown(point, low, high), tied_ranks, strict=True)
    ]
