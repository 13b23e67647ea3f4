"""padded_seeds, insufficient_seeds, incomplete_coverage: the table of runs per competition and seed."""

from collections import Counter
from dataclasses import replace

from grading.checks import incomplete_coverage, insufficient_seeds, padded_seeds
from grading.checks.padded_seeds import report_without_runs
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, flags_of

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
