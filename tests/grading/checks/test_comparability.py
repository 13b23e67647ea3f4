"""SPEC §4's comparability rule: results and reasons per entry and per tier."""

import pytest

from grading.checks.comparability import MIN_SEEDS, FlagState, comparability

TIERS = {"low": 3, "medium": 3, "high": 3, "all": 3}


def test_an_entry_regraded_with_enough_seeds_and_nothing_blocking_is_comparable():
    result = comparability(
        regraded_from_submissions=True,
        complete_seeds=TIERS,
        flags=[FlagState(code="benchmark_version", key="x", severity="warning")],
    )
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
    flag = FlagState(
        code="runtime_over_budget", key="logs", severity="warning", decision="non_comparable", reason="ran 40 h"
    )
    result = comparability(regraded_from_submissions=True, complete_seeds=TIERS, flags=[flag])
    assert result.reasons == ["runtime_over_budget (logs) marked non-comparable: ran 40 h"]


def test_a_maintainers_mark_and_a_report_only_entry_are_non_comparable():
    result = comparability(
        regraded_from_submissions=False,
        complete_seeds=TIERS,
        flags=[],
        review_decision="non_comparable",
        review_reason="used test labels",
    )
    assert not result.comparable and len(result.reasons) == 2
    assert all(not t["comparable"] for t in result.tiers.values())
    assert result.as_dict()["tiers"]["low"]["reasons"] == result.reasons


def rule(*, seeds=None, flags=(), regraded=True, **review):
    return comparability(
        regraded_from_submissions=regraded,
        complete_seeds=TIERS if seeds is None else seeds,
        flags=list(flags),
        **review,
    )


def blocking(key="k", *, tiers=(), **decided):
    return FlagState(code="score_mismatch", key=key, severity="blocking", tiers=tiers, **decided)


# Each reason, alone


def test_a_report_only_entry_gives_its_reason_to_the_entry_and_every_tier():
    result = rule(regraded=False)
    reason = "not re-graded from submissions (the bundle holds only grading reports)"
    assert result.reasons == [reason]
    assert {tier: t["reasons"] for tier, t in result.tiers.items()} == {tier: [reason] for tier in TIERS}


def test_an_entry_listed_in_no_tier_is_non_comparable_and_has_no_tier_rows():
    result = rule(seeds={})
    assert not result.comparable and result.reasons == ["listed in no tier"] and result.tiers == {}


def test_two_complete_seeds_are_one_too_few_and_three_are_enough():
    assert MIN_SEEDS == 3
    two, three = rule(seeds={"low": 2}), rule(seeds={"low": 3})
    assert not two.comparable and two.reasons == ["2 complete seed(s) in low; at least 3 are needed"]
    assert (
        three.comparable
        and three.reasons == []
        and three.tiers["low"] == {"comparable": True, "reasons": [], "complete_seeds": 3}
    )


def test_zero_complete_seeds_are_reported_as_zero():
    result = rule(seeds={"medium": 0})
    assert result.tiers["medium"] == {
        "comparable": False,
        "complete_seeds": 0,
        "reasons": ["0 complete seed(s) in medium; at least 3 are needed"],
    }


def test_more_seeds_than_needed_change_nothing():
    assert rule(seeds={"low": 10, "all": 4}).comparable


# Flags: which hold the entry


@pytest.mark.parametrize("severity", ["warning", "info"])
def test_an_undecided_flag_that_is_not_blocking_holds_nothing(severity):
    assert rule(flags=[FlagState(code="implausible_score", key="k", severity=severity)]).comparable


def test_an_undecided_blocking_flag_names_its_code_and_key():
    result = rule(flags=[blocking("pizza/seed-1")])
    assert result.reasons == ["score_mismatch (pizza/seed-1) is blocking and not yet decided"]


def test_an_accepted_blocking_flag_holds_nothing():
    assert rule(flags=[blocking(decision="accept", reason="the team's report rounded the score")]).comparable


@pytest.mark.parametrize(
    ("decision", "word"),
    [("non_comparable", "marked non-comparable"), ("reject", "rejected"), ("request_changes", "changes requested")],
)
def test_each_holding_decision_on_a_flag_gives_its_word_and_public_reason(decision, word):
    flag = FlagState(
        code="duplicate_submissions", key="team/7", severity="warning", decision=decision, reason="same files as team 7"
    )
    result = rule(flags=[flag])
    assert not result.comparable
    assert result.reasons == [f"duplicate_submissions (team/7) {word}: same files as team 7"]


def test_a_holding_decision_without_a_reason_has_no_trailing_colon():
    (reason,) = rule(flags=[blocking(decision="reject")]).reasons
    assert reason == "score_mismatch (k) rejected"


def test_a_decision_the_rule_does_not_know_still_holds_the_entry_under_its_own_name():
    (reason,) = rule(flags=[FlagState(code="x", key="k", severity="info", decision="escalate")]).reasons
    assert reason == "x (k) escalate"


def test_the_flags_may_be_any_iterable_read_once():
    result = comparability(regraded_from_submissions=True, complete_seeds=TIERS, flags=iter([blocking()]))
    assert not result.comparable and len(result.reasons) == 1


# Flags: which tiers they hold


def test_a_flag_scoped_to_one_tier_holds_that_tier_only():
    result = rule(flags=[blocking(tiers=("high",))])
    assert [tier for tier, t in result.tiers.items() if not t["comparable"]] == ["high"]
    assert result.tiers["low"]["reasons"] == [] and not result.comparable


def test_a_flag_in_two_tiers_is_one_reason_of_the_entry():
    result = rule(flags=[blocking(tiers=("low", "all"))])
    reason = "score_mismatch (k) is blocking and not yet decided"
    assert result.tiers["low"]["reasons"] == result.tiers["all"]["reasons"] == [reason]
    assert result.reasons == [reason]


def test_a_flag_without_tiers_holds_every_tier():
    result = rule(flags=[blocking()])
    assert not any(t["comparable"] for t in result.tiers.values())


def test_a_flag_scoped_partly_outside_the_listed_tiers_holds_the_listed_ones():
    result = rule(seeds={"low": 3, "all": 3}, flags=[blocking(tiers=("high", "low"))])
    assert not result.tiers["low"]["comparable"] and result.tiers["all"]["comparable"]


def test_a_flag_scoped_only_to_tiers_the_entry_is_not_listed_in_holds_the_whole_entry():
    # Nothing may slip through because its scope is stale: it falls back to the entry.
    result = rule(seeds={"low": 3}, flags=[blocking(tiers=("high",))])
    assert not result.comparable and not result.tiers["low"]["comparable"]


def test_tier_seed_reasons_stay_with_their_tier():
    result = rule(seeds={"low": 3, "high": 1})
    assert result.tiers["low"]["comparable"] and result.tiers["high"]["reasons"] == [
        "1 complete seed(s) in high; at least 3 are needed"
    ]


# The maintainer's mark on the entry


def test_an_accepting_review_keeps_the_entry_comparable():
    assert rule(review_decision="accept", review_reason="looks fine").comparable


@pytest.mark.parametrize(
    ("decision", "words"),
    [
        ("non_comparable", "marked the entry non-comparable"),
        ("reject", "rejected the entry"),
        ("request_changes", "requested changes to the entry"),
    ],
)
def test_each_holding_review_decision_holds_every_tier_with_its_reason(decision, words):
    result = rule(review_decision=decision, review_reason="used the public LB")
    (reason,) = result.reasons
    assert reason == f"a maintainer {words}: used the public LB"
    assert all(t["reasons"] == [reason] and not t["comparable"] for t in result.tiers.values())


def test_a_review_decision_without_a_reason_ends_with_the_entry():
    assert rule(review_decision="reject").reasons == ["a maintainer rejected the entry"]


def test_a_review_decision_the_rule_does_not_know_still_holds_the_entry_under_its_own_name():
    assert rule(review_decision="escalate").reasons == ["a maintainer decided escalate on the entry"]


# Several reasons at once


def test_entry_reasons_come_first_then_each_tiers_own_once():
    result = rule(
        regraded=False, seeds={"low": 2, "all": 2}, flags=[blocking(tiers=("low",))], review_decision="reject"
    )
    assert result.reasons == [
        "not re-graded from submissions (the bundle holds only grading reports)",
        "a maintainer rejected the entry",
        "2 complete seed(s) in low; at least 3 are needed",
        "score_mismatch (k) is blocking and not yet decided",
        "2 complete seed(s) in all; at least 3 are needed",
    ]
    assert result.tiers["all"]["reasons"] == [*result.reasons[:2], "2 complete seed(s) in all; at least 3 are needed"]


def test_as_dict_carries_the_rule_and_copies_the_reasons():
    result = rule(flags=[blocking()])
    data = result.as_dict()
    assert data["comparable"] is False and data["min_seeds"] == MIN_SEEDS and set(data["tiers"]) == set(TIERS)
    data["reasons"].append("changed")
    assert result.reasons == ["score_mismatch (k) is blocking and not yet decided"]
