"""Rank with its 95% interval from a bootstrap over seeds, on cases computed by hand."""

import pytest

from leaderboard.ranking import rank_intervals


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
