"""score_mismatch, missing_submission, implausible_score: claimed against re-graded, with thresholds."""

from grading.checks import implausible_score, missing_submission, score_mismatch
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, flags_of, report


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
