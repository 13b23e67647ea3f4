"""Rank with its 95% interval from a bootstrap over seeds, on cases computed by hand."""

import numpy as np
import pytest

from grading.engine.ranking import rank_intervals, tab_ranks


def test_two_entries_whose_seeds_overlap_are_tied_with_interval_1_to_2():
    # A's resampled mean is 10 (p = 1/4), 20 (1/2) or 30 (1/4); B is always 20. A ranks 1 when its mean is
    # 20 or 30 (a tie shares rank 1), 2 when it is 10: P(rank 2) = 1/4 > 2.5 %, so both intervals are [1, 2].
    a, b = rank_intervals([[10, 30], [20, 20]])
    assert (a.rank, a.low, a.high) == (1, 1, 2)
    assert (b.rank, b.low, b.high) == (1, 1, 2)
    assert a.tied_with == [1] and b.tied_with == [0]


def test_entries_apart_by_more_than_their_spread_have_exact_ranks_and_no_ties():
    intervals = rank_intervals([[5, 6, 7], [50, 52, 54], [20, 21, 22]])
    assert [(i.rank, i.low, i.high) for i in intervals] == [(3, 3, 3), (1, 1, 1), (2, 2, 2)]
    assert all(i.tied_with == [] for i in intervals)


def test_one_seed_entries_with_equal_figures_share_the_rank_and_are_tied():
    first, second, third = rank_intervals([[50.0], [20.0], [20.0]])
    assert (first.rank, second.rank, third.rank) == (1, 2, 2)
    assert second.tied_with == [2] and third.tied_with == [1] and first.tied_with == []


def test_float_noise_does_not_split_a_tie():
    a, b = rank_intervals([[0.1 + 0.2], [0.3]])
    assert a.rank == b.rank == 1


def test_the_interval_is_deterministic_and_always_holds_the_rank():
    data = [[10, 12, 30], [11, 25, 18], [15, 16, 17], [0, 40, 20]]
    once, again = rank_intervals(data), rank_intervals(data)
    assert once == again
    for interval in once:
        assert interval.low <= interval.rank <= interval.high
        assert 1 <= interval.low and interval.high <= len(data)


def test_an_empty_board_has_no_ranks_and_an_entry_without_seeds_is_refused():
    assert rank_intervals([]) == []
    with pytest.raises(ValueError, match="at least one seed"):
        rank_intervals([[1.0], []])


def _reference_intervals(per_seed, *, replicates=2000, level=0.95, random_seed=0):
    """rank_intervals as it was written first, one replicate after the other: the vectorised one must match it."""
    n = len(per_seed)
    means = np.round(np.array([float(np.mean(seeds)) for seeds in per_seed]), 9)

    def ranks(values):
        return len(values) - np.searchsorted(np.sort(values), values, side="right") + 1

    point = ranks(means)
    rng = np.random.default_rng(random_seed)
    boot = np.empty((n, replicates))
    for i, seeds in enumerate(per_seed):
        values = np.asarray(seeds, dtype=float)
        if len(values) == 1:
            boot[i] = values[0]
        else:
            boot[i] = values[rng.integers(0, len(values), size=(replicates, len(values)))].mean(axis=1)
    boot = np.round(boot, 9)
    replicate_ranks = np.empty((n, replicates), dtype=np.int64)
    for b in range(replicates):
        replicate_ranks[:, b] = ranks(boot[:, b])
    tail = (1 - level) / 2
    low = np.quantile(replicate_ranks, tail, axis=1, method="lower").astype(int)
    high = np.quantile(replicate_ranks, 1 - tail, axis=1, method="higher").astype(int)
    result = []
    for i in range(n):
        overlapping = (low <= high[i]) & (high >= low[i])
        overlapping[i] = False
        shown = (int(point[i]), int(min(low[i], point[i])), int(max(high[i], point[i])))
        result.append((*shown, np.nonzero(overlapping)[0].tolist()))
    return result


def _random_board(rng, n):
    """Figures as a board has them (counts over a split of 22 or 75, many equal), with one to twelve seeds."""
    size = int(rng.choice([22, 75]))
    return [
        (rng.integers(0, size // 2, size=int(rng.choice([1, 1, 2, 3, 3, 3, 5, 9, 12]))) * 100 / size).tolist()
        for _ in range(n)
    ]


@pytest.mark.parametrize("board_seed", range(12))
def test_the_vectorised_ranks_intervals_and_ties_are_those_of_one_replicate_at_a_time(board_seed):
    rng = np.random.default_rng(board_seed)
    board = _random_board(rng, int(rng.integers(1, 150)))
    replicates = int(rng.choice([1, 7, 300, 2000]))
    level = float(rng.choice([0.95, 0.9, 0.5]))
    expected = _reference_intervals(board, replicates=replicates, level=level, random_seed=board_seed)
    found = rank_intervals(board, replicates=replicates, level=level, random_seed=board_seed)
    assert [(i.rank, i.low, i.high, i.tied_with) for i in found] == expected
    shown = tab_ranks(board, replicates=replicates, level=level, random_seed=board_seed)
    assert [(r.rank, r.low, r.high) for r in shown] == [e[:3] for e in expected]
    assert [r.tied_ranks for r in shown] == [sorted({expected[j][0] for j in e[3]}) for e in expected]


def test_a_board_of_a_thousand_entries_ranks_as_one_replicate_at_a_time():
    board = _random_board(np.random.default_rng(99), 1000)
    expected = _reference_intervals(board)
    assert [(i.rank, i.low, i.high, i.tied_with) for i in rank_intervals(board)] == expected


def _as_found(board, **kwargs):
    found = rank_intervals(board, **kwargs)
    return [(i.rank, i.low, i.high, i.tied_with) for i in found]


def test_long_runs_of_equal_seed_counts_drawn_in_blocks_rank_as_one_entry_at_a_time():
    # Runs of 3 seeds longer than one block of draws, then runs of 4, 5 and 8 seeds (a table of ordered draws
    # for up to 4, the drawn means themselves beyond), and one-seed entries between them.
    rng = np.random.default_rng(5)
    sizes = [3] * 120 + [1] * 3 + [4] * 40 + [5] * 30 + [3] * 10 + [8] * 12 + [2] * 25
    board = [(rng.integers(0, 40, size=k) * 100 / 75).tolist() for k in sizes]
    assert _as_found(board) == _reference_intervals(board)


@pytest.mark.parametrize("counting_cells", [0, 1 << 23])
def test_figures_of_many_distinct_values_rank_by_sorting_as_by_counting(monkeypatch, counting_cells):
    # Continuous figures (no two alike), and any board when counting is turned off: the replicates are sorted
    # and the percentiles taken by a partial sort, with the same ranks.
    from grading.engine import ranking

    monkeypatch.setattr(ranking, "_COUNTING_CELLS", counting_cells)
    monkeypatch.setattr(ranking, "_COUNTED_RANKS", counting_cells)
    rng = np.random.default_rng(11)
    continuous = [(rng.random(int(rng.choice([1, 3, 5]))) * 100).tolist() for _ in range(80)]
    on_a_grid = _random_board(rng, 120)
    for board in (continuous, on_a_grid):
        assert _as_found(board, replicates=500) == _reference_intervals(board, replicates=500)


def test_a_negative_zero_and_a_zero_are_one_figure():
    assert _as_found([[-0.0, 0.0], [0.0, 0.0], [0.0]]) == _reference_intervals([[-0.0, 0.0], [0.0, 0.0], [0.0]])
