"""The checks made after grading, on plain data: claims against a re-grade whose medals are unknown."""

from grading.checks import GradedRun, score_mismatches

MELANOMA = "siim-isic-melanoma-classification"


def report(score, *, medals_known=True, **flags):
    data = {
        "competition_id": MELANOMA,
        "score": score,
        "valid_submission": score is not None,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "any_medal": False,
        **flags,
    }
    if not medals_known:
        data.update(
            medals_known=False, gold_threshold=None, silver_threshold=None, bronze_threshold=None, median_threshold=None
        )
    return data


def graded(seed, *, claimed, regraded):
    return GradedRun(
        competition_id=MELANOMA,
        seed=seed,
        run_path=f"runs/g/{MELANOMA}_{seed}",
        has_file=True,
        claimed=claimed,
        regraded=regraded,
    )


def test_claimed_medals_are_not_flagged_against_unknown_ones_but_the_score_still_is():
    runs = [
        graded(
            1,
            claimed=report(0.95, gold_medal=True, any_medal=True, above_median=True),
            regraded=report(0.95, medals_known=False),
        ),
        graded(2, claimed=report(0.91, silver_medal=True, any_medal=True), regraded=report(0.90, medals_known=False)),
        graded(3, claimed=report(0.9), regraded=report(None, medals_known=False)),
    ]
    flags = {(flag.code, flag.key): flag for flag in score_mismatches(runs)}
    assert set(flags) == {
        ("medals_unknown", MELANOMA),
        ("score_mismatch", f"{MELANOMA}/seed-2"),
        ("score_mismatch", f"{MELANOMA}/seed-3"),
    }
    assert set(flags[("score_mismatch", f"{MELANOMA}/seed-2")].evidence["differences"]) == {"score"}
    assert set(flags[("score_mismatch", f"{MELANOMA}/seed-3")].evidence["differences"]) == {"score", "valid_submission"}

    note = flags[("medals_unknown", MELANOMA)]
    assert note.severity == "info" and note.evidence["seeds"] == [1, 2, 3]
    assert "count as none in the aggregates" in note.message
    assert "seed 1: gold_medal, above_median; seed 2: silver_medal could not be checked" in note.message


def test_known_medals_are_compared_as_before():
    runs = [graded(1, claimed=report(0.95, gold_medal=True, any_medal=True), regraded=report(0.95))]
    (flag,) = score_mismatches(runs)
    assert flag.code == "score_mismatch" and set(flag.evidence["differences"]) == {"gold_medal"}
