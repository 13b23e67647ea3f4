"""Rank with its uncertainty: a board's ranks and a 95% interval for each, by a bootstrap over seeds.

An entry's figure is the mean of its per-seed any-medal percentages. Its rank is 1 + the number of entries
whose figure is strictly higher (equal figures share a rank). The interval resamples each entry's seeds
with replacement, ``replicates`` times, ranks every replicate the same way, and takes the 2.5th and
97.5th percentiles of the entry's ranks. Two entries are *statistically tied* when their intervals
overlap. An entry with one seed has no spread of its own; only the others' move its rank.

Framework-free, deterministic (a fixed random seed), numpy only.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

RANK_VERSION = "bootstrap-seeds-1"
REPLICATES = 2000
LEVEL = 0.95
_DECIMALS = 9  # means equal to this many decimals are equal: float noise never splits a tie


@dataclass(frozen=True)
class RankInterval:
    rank: int
    low: int
    high: int
    tied_with: list[int] = field(default_factory=list)  # indexes of the entries whose intervals overlap


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 + how many values are strictly higher, for each value (equal ones share the rank)."""
    ordered = np.sort(values)
    return len(values) - np.searchsorted(ordered, values, side="right") + 1


def rank_intervals(
    per_seed: Sequence[Sequence[float]], *, replicates: int = REPLICATES, level: float = LEVEL, random_seed: int = 0
) -> list[RankInterval]:
    """One RankInterval per entry, in the order given; each entry needs at least one seed."""
    n = len(per_seed)
    if n == 0:
        return []
    if any(len(seeds) == 0 for seeds in per_seed):
        raise ValueError("every entry needs at least one seed to be ranked")
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
    for b in range(replicates):
        ranks[:, b] = _ranks(boot[:, b])
    tail = (1 - level) / 2
    low = np.quantile(ranks, tail, axis=1, method="lower").astype(int)
    high = np.quantile(ranks, 1 - tail, axis=1, method="higher").astype(int)
    result = []
    for i in range(n):
        overlapping = (low <= high[i]) & (high >= low[i])
        overlapping[i] = False
        result.append(
            RankInterval(
                rank=int(point[i]),
                low=int(min(low[i], point[i])),
                high=int(max(high[i], point[i])),
                tied_with=np.nonzero(overlapping)[0].tolist(),
            )
        )
    return result
