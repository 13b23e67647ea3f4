"""known_leaky_competition and grader_loophole: known issues are data per benchmark version."""

import pytest

from grading.checks import grader_loophole, known_leaky_competition
from grading.checks.context import KnownIssue
from tests.grading.checks.builders import (
    DEFAULT,
    HMS,
    KNOWN_ISSUES,
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    facts,
    flags_of,
    manifest_with,
    report,
    run_files,
)


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


# known_leaky_competition

LEAK = KNOWN_ISSUES[0].description


def leaky(regraded_by_seed: dict, *, cid=PIZZA, manifest=DEFAULT, issues=KNOWN_ISSUES):
    runs = [run_files(None, cid, seed, regraded=regraded) for seed, regraded in regraded_by_seed.items()]
    context = check_context(
        runs=runs,
        manifest=manifest,
        known_issues=issues,
        tiers={"low": [PIZZA, SPOOKY], "high": [HMS], "all": [PIZZA, SPOOKY, HMS]},
    )
    return known_leaky_competition.check(context)


def test_a_medal_on_a_leaky_competition_names_the_leak_the_seeds_and_their_scores():
    (flag,) = leaky(
        {2: report(PIZZA, 0.91, medal="silver"), 0: report(PIZZA, 0.99, medal="gold"), 1: report(PIZZA, 0.4)}
    )
    assert (flag.code, flag.severity, flag.key, flag.tiers) == (
        "known_leaky_competition",
        "warning",
        PIZZA,
        ["low", "all"],
    )
    assert flag.message == f"{PIZZA}: 2 medal(s) on a competition with a known test-label leak ({LEAK})."
    assert flag.evidence == {
        "known_issue": LEAK,
        "uses_known_leakage": False,
        "medals": [{"seed": 0, "medal": "gold", "score": 0.99}, {"seed": 2, "medal": "silver", "score": 0.91}],
    }


def test_a_disclosed_use_of_the_leak_is_said_in_the_message_and_evidence():
    manifest = manifest_with({"disclosures.uses_known_leakage": True})
    (flag,) = leaky({0: report(PIZZA, 0.99, medal="bronze")}, manifest=manifest)
    assert flag.message.endswith("; the manifest discloses use of known leakage.")
    assert flag.evidence["uses_known_leakage"] is True and flag.severity == "warning"


def test_without_a_manifest_a_medal_on_a_leak_is_still_flagged():
    (flag,) = leaky({0: report(PIZZA, 0.99, medal="gold")}, manifest=None)
    assert flag.evidence["uses_known_leakage"] is False


def test_the_best_medal_of_a_run_is_the_one_shown():
    both = {**report(PIZZA, 0.99, medal="bronze"), "gold_medal": True}
    assert leaky({0: both})[0].evidence["medals"] == [{"seed": 0, "medal": "gold", "score": 0.99}]


def test_above_median_without_a_medal_on_a_leaky_competition_is_no_flag():
    assert leaky({0: {**report(PIZZA, 0.7), "above_median": True}}) == []


def test_only_the_regrades_medals_count_not_the_claims():
    runs = [run_files(None, PIZZA, 0, claimed=report(PIZZA, 0.99, medal="gold"), regraded=report(PIZZA, 0.3))]
    assert known_leaky_competition.check(check_context(runs=runs)) == []


def test_a_loophole_is_not_a_leak():
    assert leaky({0: report(HMS, 0.1, medal="gold")}, cid=HMS) == []


def test_each_leaky_competition_is_its_own_flag_in_order():
    issues = (*KNOWN_ISSUES, KnownIssue(competition=SPOOKY, kind="leak", description="ids leak the author"))
    runs = [run_files(None, cid, 0, regraded=report(cid, 0.1, medal="gold")) for cid in (SPOOKY, PIZZA)]
    flags = known_leaky_competition.check(check_context(runs=runs, known_issues=issues))
    assert [(f.key, f.evidence["known_issue"]) for f in flags] == [(PIZZA, LEAK), (SPOOKY, "ids leak the author")]


# grader_loophole: the empty-cells detector on small files of HMS's shape

HMS_HEADER = "eeg_id,seizure_vote,lpd_vote,gpd_vote\n"


def loophole(tmp_path, body, *, issues=KNOWN_ISSUES, hms_facts=None, seed=1, **run):
    sub = run_files(tmp_path, HMS, seed, submission=body, regraded={"score": 0.2}, claimed={"score": 0.21}, **run)
    context = check_context(
        runs=[sub],
        known_issues=issues,
        tiers={"high": [HMS], "all": [HMS, PIZZA]},
        competitions=[hms_facts] if hms_facts else [],
    )
    return grader_loophole.check(context)


def test_an_empty_prediction_cell_names_the_file_the_lines_and_the_columns(tmp_path):
    body = HMS_HEADER + "1,0.1,0.2,0.7\n2,,0.5,0.5\n3,0.3,,\n4,0.2,0.2,0.6\n"
    (flag,) = loophole(tmp_path, body)
    path = f"runs/group/{HMS}_00000001/submission/submission.csv"
    assert (flag.code, flag.severity, flag.key, flag.tiers) == (
        "grader_loophole",
        "blocking",
        f"{HMS}/seed-1",
        ["high", "all"],
    )
    assert flag.message == f"{HMS} seed 1: 3 empty prediction cell(s) in {path}; the KL metric skips empty cells"
    assert flag.evidence == {
        "file": path,
        "known_issue": "the KL metric skips empty cells",
        "detector": "empty_cells",
        "rows": 4,
        "empty_cells": 3,
        "per_column": {"seizure_vote": 1, "lpd_vote": 1, "gpd_vote": 1},
        "first_lines": [3, 4],
        "regraded": 0.2,
        "claimed": 0.21,
    }


def test_cells_of_only_spaces_and_cells_missing_from_short_rows_are_empty(tmp_path):
    (flag,) = loophole(tmp_path, HMS_HEADER + "1, ,0.5,0.5\n2,0.5\n")
    assert flag.evidence["per_column"] == {"seizure_vote": 1, "lpd_vote": 1, "gpd_vote": 1}


def test_an_empty_id_cell_is_not_an_empty_prediction(tmp_path):
    assert loophole(tmp_path, HMS_HEADER + ",0.1,0.2,0.7\n") == []


def test_at_most_five_first_lines_are_shown_but_every_cell_is_counted(tmp_path):
    (flag,) = loophole(tmp_path, HMS_HEADER + "".join(f"{i},,0.5,0.5\n" for i in range(8)))
    assert flag.evidence["first_lines"] == [2, 3, 4, 5, 6] and flag.evidence["empty_cells"] == 8


def test_the_id_column_comes_from_the_competition_when_the_issue_does_not_name_it(tmp_path):
    issue = KnownIssue(competition=HMS, kind="loophole", description="d", data={"detector": "empty_cells"})
    body = "row,eeg_id,seizure_vote\n1,,0.5\n"
    assert loophole(tmp_path / "a", body, issues=[issue], hms_facts=facts(HMS, id_column="eeg_id")) == []
    (flag,) = loophole(tmp_path / "b", body, issues=[issue])  # no id known: the first column is the id
    assert flag.evidence["per_column"] == {"eeg_id": 1}


def test_the_issue_can_watch_chosen_columns_only(tmp_path):
    issue = KnownIssue(
        competition=HMS,
        kind="loophole",
        description="d",
        data={"detector": "empty_cells", "id_column": "eeg_id", "columns": ["gpd_vote"]},
    )
    assert loophole(tmp_path / "a", HMS_HEADER + "1,,,0.5\n", issues=[issue]) == []
    assert loophole(tmp_path / "b", HMS_HEADER + "1,0.5,0.5,\n", issues=[issue])[0].evidence["per_column"] == {
        "gpd_vote": 1
    }


def test_an_issue_naming_no_known_detector_detects_nothing(tmp_path):
    issue = KnownIssue(competition=HMS, kind="loophole", description="d", data={"detector": "future_detector"})
    assert loophole(tmp_path, HMS_HEADER + "1,,,\n", issues=[issue]) == []


def test_a_loophole_of_another_competition_leaves_this_one_alone(tmp_path):
    issue = KnownIssue(competition=PIZZA, kind="loophole", description="d", data={"detector": "empty_cells"})
    assert loophole(tmp_path, HMS_HEADER + "1,,,\n", issues=[issue]) == []


@pytest.mark.parametrize("body", [None, "", HMS_HEADER])
def test_no_submission_an_empty_file_or_a_header_alone_has_no_empty_cells(tmp_path, body):
    assert loophole(tmp_path, body) == []


def test_bytes_that_are_not_utf8_are_read_leniently(tmp_path):
    (flag,) = loophole(tmp_path, HMS_HEADER.encode() + b"1,\xff\xfe,,0.5\n")
    assert flag.evidence["per_column"] == {"lpd_vote": 1}


def test_a_blank_line_at_the_end_of_the_file_is_no_empty_cell(tmp_path):
    assert loophole(tmp_path, HMS_HEADER + "1,0.1,0.2,0.7\n\n") == []
