"""score_mismatch, missing_submission, implausible_score: claimed against re-graded, with thresholds."""

import math

import pytest

from grading.checks import implausible_score, missing_submission, score_mismatch
from grading.checks.context import CheckSettings
from tests.grading.checks.builders import (
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    facts,
    flags_of,
    report,
    run_files,
    runs_without_files,
)


def test_a_claimed_score_that_differs_from_the_regrade_is_blocking(tmp_path):
    context = bundle(tmp_path, claimed={(PIZZA, 0): report(PIZZA, 0.7), (PIZZA, 1): report(PIZZA, 0.5)})
    flags = flags_of(score_mismatch.check(context), "score_mismatch")
    assert set(flags) == {f"{PIZZA}/seed-0"}
    assert flags[f"{PIZZA}/seed-0"].evidence["differences"]["score"] == {"claimed": 0.7, "regraded": 0.5}


def test_a_claimed_valid_submission_the_bundle_lacks_is_missing(tmp_path):
    from dataclasses import replace

    context = bundle(tmp_path, claimed={(PIZZA, 0): report(PIZZA, 0.5)})
    runs = tuple(replace(run, submission=None) if run.claimed else run for run in context.runs)
    flags = missing_submission.check(replace(context, runs=runs))
    assert [f.key for f in flags] == [f"{PIZZA}/seed-0"]
    assert missing_submission.check(context) == []


def test_a_score_far_beyond_gold_or_perfect_is_implausible(tmp_path):
    # pizza: higher is better, gold 0.98, median 0.6 -> beyond 1.36 is implausible; 1.0 is perfect
    # spooky: lower is better, gold 0.17, median 0.42 -> below -0.08 is implausible
    context = bundle(tmp_path, scores={(PIZZA, 0): 1.0, (PIZZA, 1): 0.99, (SPOOKY, 2): -0.5})
    flags = flags_of(implausible_score.check(context), "implausible_score")
    assert set(flags) == {f"{PIZZA}/seed-0", f"{SPOOKY}/seed-2"}
    evidence = flags[f"{SPOOKY}/seed-2"].evidence
    assert evidence["regraded"] == -0.5 and evidence["gold_threshold"] == 0.17 and evidence["is_lower_better"]
    assert "near-perfect" in flags[f"{PIZZA}/seed-0"].message


# score_mismatch (medals unknown to the portal: tests/grading/test_checks.py)


def mismatches(claimed, regraded):
    return score_mismatch.check(check_context(runs=[run_files(None, PIZZA, 1, claimed=claimed, regraded=regraded)]))


def test_a_claim_equal_to_the_regrade_is_no_mismatch():
    assert mismatches(report(PIZZA, 0.5, medal="silver"), report(PIZZA, 0.5, medal="silver")) == []


def test_a_run_without_a_claim_is_not_compared():
    assert mismatches(None, report(PIZZA, 0.9, medal="gold")) == []


@pytest.mark.parametrize(
    ("claimed", "regraded"),
    [
        (math.nan, math.nan),
        (None, None),
        (1, 1.0),
        (0.5, 0.5 + 5e-10),
    ],
)
def test_scores_that_are_the_same_number_or_both_missing_are_no_mismatch(claimed, regraded):
    assert mismatches({"score": claimed}, {"score": regraded}) == []


@pytest.mark.parametrize(
    ("claimed", "regraded"),
    [
        (math.nan, 0.5),
        (0.5, math.nan),
        (None, 0.5),
        (0.5, None),
        (0.5, 0.5 + 2e-9),
    ],
)
def test_a_score_missing_on_one_side_or_off_by_more_than_a_billionth_is_a_mismatch(claimed, regraded):
    (flag,) = mismatches({"score": claimed}, {"score": regraded})
    assert set(flag.evidence["differences"]) == {"score"}


def test_a_mismatch_names_the_run_the_fields_and_both_values():
    (flag,) = mismatches(report(PIZZA, 0.91, medal="gold"), report(PIZZA, 0.5))
    assert (flag.code, flag.severity, flag.key) == ("score_mismatch", "blocking", f"{PIZZA}/seed-1")
    assert flag.message == (
        f"{PIZZA} seed 1: score claimed 0.91, re-graded 0.5; gold_medal claimed True, re-graded "
        "False; above_median claimed True, re-graded False."
    )
    assert flag.evidence == {
        "file": f"runs/group/{PIZZA}_00000001",
        "differences": {
            "score": {"claimed": 0.91, "regraded": 0.5},
            "gold_medal": {"claimed": True, "regraded": False},
            "above_median": {"claimed": True, "regraded": False},
        },
    }


def test_a_medal_the_claim_does_not_mention_is_not_compared():
    assert mismatches({"score": 0.99}, report(PIZZA, 0.99, medal="gold")) == []


def test_medals_are_compared_by_truth_not_type():
    assert mismatches({"score": 0.5, "gold_medal": 0, "valid_submission": 1}, report(PIZZA, 0.5)) == []


def test_a_claimed_invalid_submission_the_regrade_found_valid_is_a_mismatch():
    (flag,) = mismatches({"score": 0.5, "valid_submission": False}, report(PIZZA, 0.5))
    assert flag.evidence["differences"] == {"valid_submission": {"claimed": False, "regraded": True}}


def test_a_mismatch_is_scoped_to_the_tiers_of_its_competition():
    run = run_files(None, PIZZA, 1, claimed={"score": 0.9}, regraded={"score": 0.5})
    (flag,) = score_mismatch.check(check_context(runs=[run], tiers={"low": [PIZZA], "high": ["h"]}))
    assert flag.tiers == ["low"]


def test_runs_of_unknown_medals_get_one_note_per_competition_in_order():
    unknown = {"score": 0.5, "medals_known": False}
    runs = [
        run_files(None, SPOOKY, 0, regraded=unknown),
        run_files(None, PIZZA, 2, regraded=unknown),
        run_files(None, PIZZA, 0, regraded=unknown),
        run_files(None, PIZZA, 1, regraded={"score": 0.5}),
    ]
    notes = score_mismatch.check(check_context(runs=runs))
    assert [(n.code, n.key, n.evidence["seeds"]) for n in notes] == [
        ("medals_unknown", PIZZA, [0, 2]),
        ("medals_unknown", SPOOKY, [0]),
    ]
    assert notes[0].message.endswith("until a leaderboard is imported and the submission is re-graded.")
    assert notes[0].evidence["claimed_unchecked"] == {} and "2 run(s)" in notes[0].message


# missing_submission


def test_a_claimed_valid_submission_names_the_file_the_bundle_lacks():
    (flag,) = missing_submission.check(check_context(runs=[run_files(None, SPOOKY, 2, claimed=report(SPOOKY, 0.3))]))
    assert (flag.code, flag.severity, flag.key) == ("missing_submission", "blocking", f"{SPOOKY}/seed-2")
    assert f"runs/group/{SPOOKY}_00000002/submission/submission.csv" in flag.message
    assert flag.evidence == {"file": f"runs/group/{SPOOKY}_00000002"}


def test_a_missing_submission_is_scoped_to_the_tiers_of_its_competition():
    run = run_files(None, SPOOKY, 0, claimed=report(SPOOKY, 0.3))
    (flag,) = missing_submission.check(check_context(runs=[run], tiers={"low": [SPOOKY], "high": ["h"]}))
    assert flag.tiers == ["low"]


@pytest.mark.parametrize("claimed", [None, {"score": None, "valid_submission": False}, {"score": 0.3}])
def test_no_claim_or_no_claim_of_a_valid_submission_is_nothing_missing(claimed):
    assert missing_submission.check(check_context(runs=[run_files(None, SPOOKY, 0, claimed=claimed)])) == []


def test_a_claimed_submission_that_is_there_is_not_missing(tmp_path):
    run = run_files(tmp_path, SPOOKY, 0, submission="id,EAP,HPL,MWS\n", claimed=report(SPOOKY, 0.3))
    assert missing_submission.check(check_context(runs=[run])) == []


def test_each_missing_submission_is_its_own_flag():
    runs = runs_without_files({PIZZA: 3}, claimed=report(PIZZA, 0.5))
    assert [f.key for f in missing_submission.check(check_context(runs=runs))] == [
        f"{PIZZA}/seed-{seed}" for seed in range(3)
    ]


# implausible_score: thresholds chosen so that the limits are exact in binary
HIGH = facts("high-is-better", gold=0.75, median=0.5, lower=False)  # beyond 1.0 at a margin of 1
LOW = facts("low-is-better", gold=0.25, median=0.5, lower=True)  # below 0.0 at a margin of 1


def implausible(score, competition=HIGH, *, regraded=None, claimed=None, **settings):
    run = run_files(
        None, competition.slug, 0, claimed=claimed, regraded={"score": score} if regraded is None else regraded
    )
    context = check_context(
        runs=[run],
        competitions=[competition],
        settings=CheckSettings(**settings),
        tiers={"low": [HIGH.slug, LOW.slug], "high": ["other"]},
    )
    return implausible_score.check(context)


@pytest.mark.parametrize(("score", "competition"), [(1.0, HIGH), (0.8, HIGH), (0.0, LOW), (0.2, LOW)])
def test_a_score_up_to_the_limit_is_plausible(score, competition):
    assert implausible(score, competition) == []


@pytest.mark.parametrize(("score", "competition"), [(1.001, HIGH), (-0.001, LOW)])
def test_a_score_just_beyond_the_limit_is_implausible(score, competition):
    (flag,) = implausible(score, competition)
    assert (flag.code, flag.severity, flag.key) == ("implausible_score", "warning", f"{competition.slug}/seed-0")
    assert flag.evidence["implausible_beyond"] == (1.0 if competition is HIGH else 0.0)


def test_the_flag_names_the_score_the_thresholds_and_the_file():
    (flag,) = implausible(1.5, claimed={"score": 1.5})
    assert flag.message == (
        "high-is-better seed 0: re-graded score 1.5 is beyond gold (0.75) by more than 1× the "
        "gold-median spread (limit 1)."
    )
    assert flag.evidence == {
        "file": "runs/group/high-is-better_00000000/submission/submission.csv",
        "regraded": 1.5,
        "claimed": 1.5,
        "gold_threshold": 0.75,
        "median_threshold": 0.5,
        "is_lower_better": False,
        "leaderboard_best": None,
        "margin": 1.0,
        "implausible_beyond": 1.0,
    }
    assert flag.tiers == ["low"]


def test_a_smaller_margin_setting_moves_the_limit_towards_gold():
    # CHECK_IMPLAUSIBLE_MARGIN_PERCENT=50: beyond 0.75 + 0.5 × 0.25
    assert implausible(0.9) == []
    (flag,) = implausible(0.9, implausible_margin=0.5)
    assert flag.evidence["implausible_beyond"] == 0.875 and "0.5× the gold-median spread" in flag.message
    assert implausible(0.875, implausible_margin=0.5) == []


def test_with_no_margin_anything_beyond_gold_is_implausible_but_gold_is_not():
    assert implausible(0.75, implausible_margin=0) == []
    assert len(implausible(0.7501, implausible_margin=0)) == 1


def test_the_regrades_thresholds_win_over_the_competitions():
    assert implausible(1.1, regraded={"score": 1.1, "gold_threshold": 0.9, "median_threshold": 0.5}) == []
    (flag,) = implausible(0.3, regraded={"score": 0.3, "is_lower_better": True})  # below 0.75 - 0.25
    assert flag.evidence["is_lower_better"] and flag.evidence["implausible_beyond"] == 0.5


def test_the_direction_falls_back_to_higher_is_better_when_the_leaderboard_does_not_say():
    lower = facts("no-leaderboard-direction", gold=0.25, median=0.5, lower=None, higher_is_better=False)
    assert len(implausible(-0.1, lower)) == 1 and implausible(0.9, lower) == []


@pytest.mark.parametrize("score", [None, math.nan, math.inf, -math.inf, "n/a"])
def test_a_missing_or_non_finite_score_is_never_implausible(score):
    assert implausible(score) == []


def test_equal_gold_and_median_thresholds_have_no_spread_to_measure():
    assert implausible(100.0, facts("flat", gold=0.5, median=0.5, lower=False)) == []


def test_a_competition_without_thresholds_or_facts_is_not_judged():
    assert implausible(1e9, facts("unknown")) == []
    context = check_context(runs=[run_files(None, "not-in-the-catalogue", 0, regraded={"score": 1e9})])
    assert implausible_score.check(context) == []


def test_a_perfect_score_where_kaggles_best_was_not_is_near_perfect():
    bounded = facts("bounded", lower=False, best=0.9)
    (flag,) = implausible(1.0, bounded)
    assert flag.message == (
        "bounded seed 0: re-graded score 1 is near-perfect (1, perfect is 1) where Kaggle's best was 0.9."
    )
    assert flag.evidence["leaderboard_best"] == 0.9 and "implausible_beyond" not in flag.evidence


def test_near_perfect_is_within_the_tolerance_and_no_further():
    bounded = facts("bounded", lower=False, best=0.9)
    assert len(implausible(0.99995, bounded)) == 1
    assert implausible(0.9998, bounded) == []
    assert len(implausible(0.9998, bounded, perfect_tolerance=1e-3)) == 1


def test_a_perfect_loss_where_kaggles_best_was_not_is_near_perfect():
    (flag,) = implausible(0.0, facts("loss", lower=True, best=0.05))
    assert "perfect is 0" in flag.message and flag.evidence["is_lower_better"]


def test_a_perfect_score_is_plausible_where_kaggles_best_was_perfect_too_or_unknown_or_unbounded():
    assert implausible(1.0, facts("solved", lower=False, best=1.0)) == []
    assert implausible(1.0, facts("no-board", lower=False)) == []
    assert implausible(1.0, facts("unbounded", lower=False, best=42.0)) == []
    assert implausible(0.0, facts("negative-loss", lower=True, best=-3.0)) == []


def test_beyond_gold_is_the_reason_given_when_both_apply():
    (flag,) = implausible(1.0, facts("both", gold=0.6, median=0.5, lower=False, best=0.9))
    assert "beyond gold (0.6)" in flag.message and "near-perfect" not in flag.message
