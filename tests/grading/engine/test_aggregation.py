import pytest
from scipy import stats

from grading.engine.aggregation import AGGREGATION_VERSION, RunOutcome, aggregate, format_mean_sem

SPLIT = ["a", "b", "c", "d"]


def run(cid, seed, *, medal=None, valid=True, exists=True, above=False):
    return RunOutcome(
        competition_id=cid,
        seed=seed,
        submission_exists=exists,
        valid_submission=valid,
        gold=medal == "gold",
        silver=medal == "silver",
        bronze=medal == "bronze",
        above_median=above,
    )


def test_per_seed_percentages_are_counts_over_the_split_size():
    runs = [
        run("a", 0, medal="gold"),
        run("b", 0, medal="bronze", above=True),
        run("c", 0, valid=False),
        run("d", 0, exists=False, valid=False),
    ]
    agg = aggregate(runs, split=SPLIT, padded=False)
    assert agg["seeds"] == 1
    assert agg["any_medal"] == {"mean": 50.0, "sem": 0.0, "ci_low": 50.0, "ci_high": 50.0}
    assert agg["gold"]["mean"] == 25.0 and agg["bronze"]["mean"] == 25.0 and agg["silver"]["mean"] == 0.0
    assert agg["valid_submission"]["mean"] == 50.0 and agg["submission_exists"]["mean"] == 75.0
    assert agg["above_median"]["mean"] == 25.0


def test_mean_and_sem_across_seeds_match_scipy_with_ddof_1():
    medals = {0: ["a"], 1: ["a", "b", "c"], 2: []}
    runs = [run(cid, seed, medal="gold" if cid in medals[seed] else None) for seed in medals for cid in SPLIT]
    agg = aggregate(runs, split=SPLIT, padded=False)
    values = [25.0, 75.0, 0.0]
    assert agg["seeds"] == 3
    assert agg["any_medal"]["mean"] == pytest.approx(sum(values) / 3)
    assert agg["any_medal"]["sem"] == pytest.approx(stats.sem(values, ddof=1))
    assert agg["any_medal"]["ci_high"] == pytest.approx(agg["any_medal"]["mean"] + 1.96 * stats.sem(values))


def test_complete_takes_only_seeds_with_every_competition_and_padded_fills_failures():
    runs = [run(cid, seed, medal="gold") for seed in (0, 1, 2) for cid in SPLIT if not (seed == 2 and cid == "d")]
    complete = aggregate(runs, split=SPLIT, padded=False)
    padded = aggregate(runs, split=SPLIT, padded=True)
    assert complete["seeds"] == 2 and complete["any_medal"]["mean"] == 100.0
    assert padded["seeds"] == 3
    assert padded["any_medal"]["mean"] == pytest.approx((100 + 100 + 75) / 3)
    assert padded["submission_exists"]["mean"] == pytest.approx((100 + 100 + 75) / 3)


def test_a_competition_without_any_run_leaves_no_complete_seed():
    runs = [run(cid, 0, medal="gold") for cid in ("a", "b", "c")]
    assert aggregate(runs, split=SPLIT, padded=False) is None
    padded = aggregate(runs, split=SPLIT, padded=True)
    assert padded["seeds"] == 1 and padded["any_medal"]["mean"] == 75.0


def test_runs_outside_the_split_do_not_count():
    runs = [run(cid, 0) for cid in SPLIT] + [run("zzz", 0, medal="gold")]
    assert aggregate(runs, split=SPLIT, padded=False)["any_medal"]["mean"] == 0.0


def test_it_formats_like_the_mlebench_readme_and_is_versioned():
    runs = [run(cid, seed, medal="gold" if (cid, seed) == ("a", 1) else None) for seed in (0, 1) for cid in SPLIT]
    assert format_mean_sem(aggregate(runs, split=SPLIT, padded=False)) == "12.5 ± 12.5"
    assert format_mean_sem(None) == "—"
    assert AGGREGATION_VERSION.count("-") == 1


def test_runs_with_unknown_medals_count_as_no_medal_and_the_aggregate_says_how_many():
    runs = [run(cid, seed, medal="gold" if cid == "a" else None) for seed in (0, 1) for cid in ("a", "b", "c")]
    runs += [
        RunOutcome(
            competition_id="d",
            seed=seed,
            submission_exists=True,
            valid_submission=True,
            gold=False,
            silver=False,
            bronze=False,
            above_median=False,
            medals_known=False,
        )
        for seed in (0, 1)
    ]
    agg = aggregate(runs, split=SPLIT, padded=False)
    assert agg["any_medal"]["mean"] == 25.0 and agg["valid_submission"]["mean"] == 100.0
    assert agg["medals_unknown_runs"] == 2 and agg["medals_unknown_competitions"] == ["d"]
    assert "medals_unknown_runs" not in aggregate([run(cid, 0) for cid in SPLIT], split=SPLIT, padded=False)


# Seeds are distinct runs: byte-identical submissions across seeds of one competition count once.


def copied(cid, seed, digest, **kw):
    from dataclasses import replace

    return replace(run(cid, seed, **kw), submission_sha256=digest)


def test_three_identical_seeds_are_one_seed_with_sem_zero():
    runs = [copied(cid, seed, f"sha-{cid}", medal="gold" if seed == 0 else None) for seed in range(3) for cid in SPLIT]
    for padded in (False, True):
        agg = aggregate(runs, split=SPLIT, padded=padded)
        assert agg["seeds"] == 1 and agg["any_medal"]["sem"] == 0.0 and agg["any_medal"]["mean"] == 100.0
        assert (agg["copies"], agg["seeds_with_copies"]) == (8, 3)


def test_a_copy_in_one_competition_leaves_its_seed_incomplete_and_fails_in_the_padded_one():
    runs = [copied(cid, seed, f"sha-{cid}-{seed}", medal="gold") for seed in range(3) for cid in SPLIT]
    runs[SPLIT.index("b") + 4] = copied("b", 1, "sha-b-0", medal="gold")  # seed 1 of b copies seed 0
    complete = aggregate(runs, split=SPLIT, padded=False)
    assert complete["seeds"] == 2 and complete["any_medal"]["mean"] == 100.0
    padded = aggregate(runs, split=SPLIT, padded=True)
    assert padded["seeds"] == 3 and padded["any_medal"]["mean"] == pytest.approx((100 + 75 + 100) / 3)
    assert (padded["copies"], padded["seeds_with_copies"]) == (1, 3)


def test_distinct_files_and_runs_without_a_file_are_never_copies():
    runs = [copied(cid, seed, "" if cid == "a" else f"sha-{cid}-{seed}") for seed in range(3) for cid in SPLIT]
    agg = aggregate(runs, split=SPLIT, padded=False)
    assert agg["seeds"] == 3 and "copies" not in agg and "seeds_with_copies" not in agg


def test_the_same_file_in_two_competitions_is_no_copy():
    runs = [copied(cid, 0, "same") for cid in SPLIT]
    assert aggregate(runs, split=SPLIT, padded=False)["seeds"] == 1 and "copies" not in aggregate(
        runs, split=SPLIT, padded=False
    )
