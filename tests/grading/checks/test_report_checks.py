"""malformed_report and report_only: what the team's own grading report could not give."""

from grading.checks import malformed_report, report_only, run_checks
from grading.checks.comparability import FlagState, comparability
from tests.grading.checks.builders import PIZZA, SPOOKY, check_context

REPORT = "runs/2026-11-30T10-00-00-GMT_run-group_aide/grading_report.json"


def problems(*found):
    return check_context(report_claims={"entries_per_competition": {PIZZA: 3}, "problems": list(found)})


# malformed_report


def test_a_report_without_problems_is_not_malformed():
    assert malformed_report.check(check_context(report_claims={"entries_per_competition": {PIZZA: 3}})) == []
    assert malformed_report.check(problems({"file": REPORT, "problems": [], "total": 0})) == []


def test_a_malformed_report_names_its_file_its_first_problem_and_how_many_there_are():
    found = ["competition_reports[2]: missing field(s) score", "competition_reports[5].score: expected a number"]
    (flag,) = malformed_report.check(problems({"file": REPORT, "problems": found, "total": 2}))
    assert (flag.code, flag.severity, flag.key, flag.tiers) == ("malformed_report", "warning", REPORT, [])
    assert flag.message == (
        f"{REPORT}: 2 problem(s) in the team's own grading report, e.g. competition_reports[2]: "
        "missing field(s) score. The submissions were re-graded as usual; claims that could not "
        "be read are not compared."
    )
    assert flag.evidence == {"file": REPORT, "problems": found, "total": 2}


def test_the_count_covers_problems_beyond_those_kept():
    (flag,) = malformed_report.check(problems({"file": REPORT, "problems": ["p"] * 20, "total": 35}))
    assert "35 problem(s)" in flag.message and len(flag.evidence["problems"]) == 20


def test_each_malformed_report_of_the_bundle_is_its_own_flag():
    other = "runs/second-group/grading_report.json"
    flags = malformed_report.check(
        problems({"file": REPORT, "problems": ["a"], "total": 1}, {"file": other, "problems": ["b"], "total": 1})
    )
    assert [f.key for f in flags] == [REPORT, other]


# report_only


def test_a_bundle_with_runs_is_not_report_only():
    assert report_only.check(check_context(report_only=False)) == []


def test_a_report_only_bundle_is_blocking_for_the_whole_entry():
    (flag,) = report_only.check(check_context(report_only=True))
    assert (flag.code, flag.severity, flag.key, flag.tiers, flag.evidence) == (
        "report_only",
        "blocking",
        "bundle",
        [],
        {},
    )
    assert flag.message == "The bundle holds only grading reports: nothing could be re-graded."


def test_a_report_only_entry_is_never_comparable_even_once_its_flag_is_accepted():
    context = check_context(
        report_only=True,
        tiers={"low": [PIZZA, SPOOKY]},
        report_claims={"entries_per_competition": {PIZZA: 3, SPOOKY: 3}},
    )
    flags = run_checks(context)
    assert {f.code for f in flags} == {"report_only", "incomplete_coverage", "insufficient_seeds", "padded_seeds"}
    states = [
        FlagState(
            code=f.code,
            key=f.key,
            severity=f.severity,
            tiers=tuple(f.tiers),
            decision="accept" if f.code == "report_only" else "",
        )
        for f in flags
    ]
    result = comparability(regraded_from_submissions=not context.report_only, complete_seeds={"low": 0}, flags=states)
    assert not result.comparable
    assert result.reasons[0] == "not re-graded from submissions (the bundle holds only grading reports)"
    assert "padded_seeds (report) is blocking and not yet decided" in result.reasons
