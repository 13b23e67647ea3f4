"""known_leaky_competition and grader_loophole: known issues are data per benchmark version."""

from grading.checks import grader_loophole, known_leaky_competition
from tests.grading.checks.builders import HMS, PIZZA, SPOOKY, bundle, flags_of


def test_medals_on_a_leaky_competition_are_flagged(tmp_path):
    context = bundle(tmp_path, medals={(PIZZA, 0): "gold", (PIZZA, 2): "bronze", (SPOOKY, 0): "gold"})
    flags = flags_of(known_leaky_competition.check(context), "known_leaky_competition")
    assert set(flags) == {PIZZA}
    assert [m["medal"] for m in flags[PIZZA].evidence["medals"]] == ["gold", "bronze"]


def test_no_medal_on_a_leaky_competition_is_no_flag(tmp_path):
    assert known_leaky_competition.check(bundle(tmp_path)) == []


def test_empty_cells_in_hms_predictions_use_the_kl_loophole(tmp_path):
    context = bundle(tmp_path, competitions=(HMS,), defects={(HMS, 1): ["nan_values"]}, tiers={"high": [HMS]})
    flags = flags_of(grader_loophole.check(context), "grader_loophole")
    assert set(flags) == {f"{HMS}/seed-1"}
    evidence = flags[f"{HMS}/seed-1"].evidence
    assert evidence["empty_cells"] >= 1 and evidence["per_column"] == {"seizure_vote": evidence["empty_cells"]}
    assert evidence["first_lines"][0] >= 2 and flags[f"{HMS}/seed-1"].severity == "blocking"


def test_complete_hms_predictions_are_not_a_loophole(tmp_path):
    assert grader_loophole.check(bundle(tmp_path, competitions=(HMS,), tiers={"high": [HMS]})) == []
