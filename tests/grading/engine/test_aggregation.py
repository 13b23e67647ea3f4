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
