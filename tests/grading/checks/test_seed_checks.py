"""padded_seeds, insufficient_seeds, incomplete_coverage: the table of runs per competition and seed."""

from collections import Counter
from dataclasses import replace

from grading.checks import incomplete_coverage, insufficient_seeds, padded_seeds
from grading.checks.padded_seeds import report_without_runs
from tests.grading.checks.builders import (
    HMS,
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    flags_of,
    manifest_with,
    report,
    run_files,
    runs_without_files,
)

MEMBERS = {"low": [PIZZA, SPOOKY]}


def test_a_competition_with_fewer_runs_than_seeds_is_padding_and_too_few_seeds(tmp_path):
    context = bundle(tmp_path, tiers=MEMBERS)
    context = replace(context, runs=tuple(r for r in context.runs if not (r.competition_id == SPOOKY and r.seed == 2)))
    padded = flags_of(padded_seeds.check(context), "padded_seeds")["low"]
    assert padded.evidence["seeds"] == {SPOOKY: [0, 1]} and padded.evidence["runs_per_competition"] == {SPOOKY: 2}
    few = flags_of(insufficient_seeds.check(context), "insufficient_seeds")["low"]
    assert few.evidence["complete_seeds"] == 2 and few.evidence["seeds_per_competition"] == {SPOOKY: [0, 1]}
    assert incomplete_coverage.check(context) == []


def test_report_entries_without_runs_are_blocking_padding():
    (flag,) = report_without_runs(claimed_ids=Counter({PIZZA: 4}), runs=[])
    assert flag.severity == "blocking" and flag.evidence["entries_without_runs"] == {PIZZA: 4}


def test_a_competition_of_the_split_without_runs_is_incomplete_coverage(tmp_path):
    context = bundle(tmp_path, competitions=(PIZZA,), tiers=MEMBERS)
    flags = flags_of(incomplete_coverage.check(context), "incomplete_coverage")
    assert flags["low"].evidence["missing"] == [SPOOKY]
    assert padded_seeds.check(context) == []


def seeds_context(counts: dict[str, int], *, tiers=None, seeds=3, manifest=True, **rest):
    return check_context(
        runs=runs_without_files(counts),
        tiers=tiers or MEMBERS,
        manifest=manifest_with(seeds=seeds) if manifest else None,
        **rest,
    )


# incomplete_coverage


def test_every_competition_with_a_run_is_complete_coverage():
    assert incomplete_coverage.check(seeds_context({PIZZA: 1, SPOOKY: 1})) == []


def test_missing_competitions_are_listed_in_the_splits_order_per_tier():
    tiers = {"low": [PIZZA, SPOOKY, "spaceship-titanic"], "all": [PIZZA, SPOOKY, "spaceship-titanic", HMS]}
    flags = flags_of(incomplete_coverage.check(seeds_context({SPOOKY: 3}, tiers=tiers)), "incomplete_coverage")
    assert set(flags) == {"low", "all"}
    low = flags["low"]
    assert (low.severity, low.tiers, low.evidence) == ("warning", ["low"], {"missing": [PIZZA, "spaceship-titanic"]})
    assert low.message == f"2 of the 3 competitions of low have no run, e.g. {PIZZA}."
    assert flags["all"].evidence["missing"] == [PIZZA, "spaceship-titanic", HMS]


def test_runs_of_competitions_outside_the_split_cover_nothing():
    flags = incomplete_coverage.check(seeds_context({HMS: 3, SPOOKY: 3}))
    assert [f.evidence["missing"] for f in flags] == [[PIZZA]]


def test_a_run_that_made_no_submission_still_covers_its_competition(tmp_path):
    runs = [run_files(tmp_path, PIZZA, 0), run_files(tmp_path, SPOOKY, 0, submission="id\n")]
    assert runs[0].submission is None
    assert incomplete_coverage.check(check_context(runs=runs, tiers=MEMBERS)) == []


# insufficient_seeds


def test_three_complete_seeds_are_sufficient():
    assert insufficient_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 4})) == []


def test_two_complete_seeds_are_one_too_few():
    (flag,) = insufficient_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 2}))
    assert (flag.code, flag.severity, flag.key, flag.tiers) == ("insufficient_seeds", "warning", "low", ["low"])
    assert flag.message == "low has 2 complete seed(s); a comparable entry needs at least 3."
    assert flag.evidence == {"complete_seeds": 2, "min_seeds": 3, "seeds_per_competition": {SPOOKY: [0, 1]}}


def test_a_competition_without_runs_leaves_no_complete_seed():
    (flag,) = insufficient_seeds.check(seeds_context({PIZZA: 5}))
    assert flag.evidence["complete_seeds"] == 0 and flag.evidence["seeds_per_competition"] == {SPOOKY: []}


def test_runs_outside_the_tier_do_not_make_up_its_seeds():
    tiers = {"low": [PIZZA], "high": [HMS]}
    flags = flags_of(insufficient_seeds.check(seeds_context({PIZZA: 2, HMS: 3}, tiers=tiers)), "insufficient_seeds")
    assert set(flags) == {"low"} and flags["low"].evidence["seeds_per_competition"] == {PIZZA: [0, 1]}


def test_the_seed_count_is_not_what_the_manifest_claims_but_what_the_runs_show():
    assert insufficient_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3}, seeds=1)) == []
    assert len(insufficient_seeds.check(seeds_context({PIZZA: 2, SPOOKY: 2}, seeds=10))) == 1


# padded_seeds


def test_as_many_runs_as_declared_seeds_everywhere_is_no_padding():
    assert padded_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3})) == []


def test_fewer_runs_than_the_declared_seeds_everywhere_is_padding():
    (flag,) = padded_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3}, seeds=5))
    assert (flag.code, flag.severity, flag.key, flag.tiers) == ("padded_seeds", "warning", "low", ["low"])
    assert flag.evidence == {
        "runs_per_competition": {PIZZA: 3, SPOOKY: 3},
        "seeds_declared": 5,
        "seeds": {PIZZA: [0, 1, 2], SPOOKY: [0, 1, 2]},
    }
    assert flag.message == (
        "In low, 2 competitions have fewer runs than seeds, so a padded aggregate would count "
        "missing runs as failures; the board uses 3 complete seed(s)."
    )


def test_more_runs_than_declared_in_one_competition_makes_the_others_padding():
    (flag,) = padded_seeds.check(seeds_context({PIZZA: 4, SPOOKY: 3}))
    assert flag.evidence["runs_per_competition"] == {SPOOKY: 3} and "the board uses 3 complete" in flag.message


def test_without_a_manifest_the_most_runs_of_any_competition_are_the_seeds():
    assert padded_seeds.check(seeds_context({PIZZA: 2, SPOOKY: 2}, manifest=False)) == []
    (flag,) = padded_seeds.check(seeds_context({PIZZA: 2, SPOOKY: 1}, manifest=False))
    assert flag.evidence["seeds_declared"] == 0 and flag.evidence["runs_per_competition"] == {SPOOKY: 1}


def test_extra_runs_of_a_competition_outside_the_tier_are_no_padding_in_it():
    tiers = {"low": [PIZZA, SPOOKY], "high": [HMS]}
    flags = flags_of(padded_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3, HMS: 5}, tiers=tiers)), "padded_seeds")
    assert "low" not in flags


# padded_seeds: the team's own report holds entries with no run behind them


def test_report_entries_beyond_the_runs_are_blocking_padding_with_the_count_per_competition():
    context = seeds_context({PIZZA: 3, SPOOKY: 3}, report_claims={"entries_per_competition": {PIZZA: 5, SPOOKY: 3}})
    (flag,) = padded_seeds.check(context)
    assert (flag.key, flag.severity, flag.evidence) == ("report", "blocking", {"entries_without_runs": {PIZZA: 2}})
    assert flag.message == (f"The team's grading report has 2 entries with no run in the bundle, e.g. {PIZZA}.")


def test_report_entries_for_competitions_without_any_run_are_padding():
    context = seeds_context({PIZZA: 3, SPOOKY: 3}, report_claims={"entries_per_competition": {"spaceship-titanic": 3}})
    assert flags_of(padded_seeds.check(context), "padded_seeds")["report"].evidence == {
        "entries_without_runs": {"spaceship-titanic": 3}
    }


def test_a_report_with_as_many_or_fewer_entries_than_runs_is_no_padding():
    claims = {"entries_per_competition": {PIZZA: 3, SPOOKY: 1}}
    assert padded_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3}, report_claims=claims)) == []


def test_without_the_counted_entries_the_runs_claims_are_counted_and_match():
    runs = [run_files(None, cid, seed, claimed=report(cid, 0.5)) for cid in (PIZZA, SPOOKY) for seed in range(3)]
    assert padded_seeds.check(check_context(runs=runs, tiers=MEMBERS, report_claims={})) == []


def test_report_without_runs_counts_only_what_exceeds():
    runs = [run.graded for run in runs_without_files({PIZZA: 2})]
    assert report_without_runs(claimed_ids=Counter({PIZZA: 2}), runs=runs) == []
    (flag,) = report_without_runs(claimed_ids=Counter({PIZZA: 3, SPOOKY: 1}), runs=runs)
    assert flag.evidence["entries_without_runs"] == {PIZZA: 1, SPOOKY: 1} and "has 2 entries" in flag.message


# Seeds are distinct runs: byte-identical submission files across seeds of one competition count once.


def copied_seeds(tmp_path, *, files: dict[tuple[str, int], str], seeds: int = 3):
    runs = [run_files(tmp_path, cid, seed, submission=body) for (cid, seed), body in files.items()]
    return check_context(runs=runs, tiers=MEMBERS, manifest=manifest_with(seeds=seeds))


def test_three_byte_identical_seeds_are_one_seed(tmp_path):
    same = "id,target\n1,0.25\n2,0.75\n"
    files = {(cid, seed): same for cid in (PIZZA, SPOOKY) for seed in range(3)}
    context = copied_seeds(tmp_path, files=files)
    few = flags_of(insufficient_seeds.check(context), "insufficient_seeds")["low"]
    assert few.evidence["complete_seeds"] == 1
    assert few.evidence["copied_seeds"] == {PIZZA: [1, 2], SPOOKY: [1, 2]}
    assert few.evidence["seeds_per_competition"] == {PIZZA: [0], SPOOKY: [0]}
    assert "4 run(s) submitted a copy of an earlier seed's file (the same once normalised)" in few.message
    padded = flags_of(padded_seeds.check(context), "padded_seeds")["low"]
    assert padded.evidence["runs_per_competition"] == {PIZZA: 1, SPOOKY: 1}
    assert padded.evidence["copied_seeds"] == {PIZZA: [1, 2], SPOOKY: [1, 2]}


def test_three_distinct_seeds_are_three_even_when_two_competitions_share_a_file(tmp_path):
    files = {(cid, seed): f"id,target\n1,0.{seed}\n" for cid in (PIZZA, SPOOKY) for seed in range(3)}
    context = copied_seeds(tmp_path, files=files)
    assert insufficient_seeds.check(context) == [] and padded_seeds.check(context) == []


def test_one_copied_seed_of_one_competition_leaves_two_complete_seeds(tmp_path):
    files = {(cid, seed): f"id,target\n1,0.{seed}\n" for cid in (PIZZA, SPOOKY) for seed in range(3)}
    files[(SPOOKY, 2)] = files[(SPOOKY, 0)]
    few = flags_of(insufficient_seeds.check(copied_seeds(tmp_path, files=files)), "insufficient_seeds")["low"]
    assert few.evidence["complete_seeds"] == 2 and few.evidence["copied_seeds"] == {SPOOKY: [2]}


def test_runs_without_a_submission_are_runs_not_copies():
    assert insufficient_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3})) == []


def test_padding_is_raised_even_when_another_competition_has_no_run():
    # The case: five seeds claimed, two competitions with two runs and one, a third with none.
    tiers = {"low": [PIZZA, SPOOKY, "spaceship-titanic"]}
    context = seeds_context({PIZZA: 2, SPOOKY: 1}, tiers=tiers, seeds=5)
    (flag,) = padded_seeds.check(context)
    assert (flag.key, flag.severity) == ("low", "warning")
    assert flag.evidence["runs_per_competition"] == {PIZZA: 2, SPOOKY: 1}
    assert flag.evidence["seeds_declared"] == 5 and flag.evidence["competitions_without_runs"] == 1
    assert flag.evidence["seeds"] == {PIZZA: [0, 1], SPOOKY: [0]}
    assert "the board uses 0 complete seed(s)" in flag.message
    coverage = flags_of(incomplete_coverage.check(context), "incomplete_coverage")["low"]
    assert coverage.evidence["missing"] == ["spaceship-titanic"]


def test_a_competition_without_runs_alone_is_coverage_not_padding():
    tiers = {"low": [PIZZA, SPOOKY, "spaceship-titanic"]}
    assert padded_seeds.check(seeds_context({PIZZA: 3, SPOOKY: 3}, tiers=tiers)) == []
