"""SPEC §4's comparability rule: results and reasons per entry and per tier."""

from grading.checks.comparability import MIN_SEEDS, FlagState, comparability

TIERS = {"low": 3, "medium": 3, "high": 3, "all": 3}


def test_an_entry_regraded_with_enough_seeds_and_nothing_blocking_is_comparable():
    result = comparability(regraded_from_submissions=True, complete_seeds=TIERS,
                           flags=[FlagState(code="benchmark_version", key="x", severity="warning")])
    assert result.comparable and result.reasons == [] and all(t["comparable"] for t in result.tiers.values())


def test_too_few_seeds_in_one_tier_makes_that_tier_and_the_entry_non_comparable():
    result = comparability(regraded_from_submissions=True, complete_seeds={**TIERS, "high": 2}, flags=[])
    assert not result.comparable and MIN_SEEDS == 3
    assert result.tiers["low"]["comparable"] and not result.tiers["high"]["comparable"]
    assert result.tiers["high"]["reasons"] == ["2 complete seed(s) in high; at least 3 are needed"]


def test_an_undecided_blocking_flag_holds_its_tiers_and_an_accepted_one_does_not():
    flag = FlagState(code="score_mismatch", key="pizza/seed-0", severity="blocking", tiers=("low", "all"))
    held = comparability(regraded_from_submissions=True, complete_seeds=TIERS, flags=[flag])
    assert not held.comparable and held.tiers["medium"]["comparable"] and not held.tiers["low"]["comparable"]
    accepted = FlagState(code=flag.code, key=flag.key, severity=flag.severity, tiers=flag.tiers, decision="accept")
    assert comparability(regraded_from_submissions=True, complete_seeds=TIERS, flags=[accepted]).comparable


def test_decisions_other_than_accept_give_their_reason():
    flag = FlagState(code="runtime_over_budget", key="logs", severity="warning", decision="non_comparable",
                     reason="ran 40 h")
    result = comparability(regraded_from_submissions=True, complete_seeds=TIERS, flags=[flag])
    assert result.reasons == ["runtime_over_budget (logs) marked non-comparable: ran 40 h"]


def test_a_maintainers_mark_and_a_report_only_entry_are_non_comparable():
    result = comparability(regraded_from_submissions=False, complete_seeds=TIERS, flags=[],
                           review_decision="non_comparable", review_reason="used test labels")
    assert not result.comparable and len(result.reasons) == 2
    assert all(not t["comparable"] for t in result.tiers.values())
    assert result.as_dict()["tiers"]["low"]["reasons"] == result.reasons
