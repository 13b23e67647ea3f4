"""The registry: every check of SPEC §4 runs, and an honest bundle raises nothing in any of them."""

import dataclasses
import json
from collections import Counter
from dataclasses import replace

import pytest

import grading.checks as registry
from competitions.demo.runs import default_manifest
from grading.checks import CHECKS, FlagData, coverage, run_checks
from grading.checks.context import RegistrationFacts
from tests.grading.checks.builders import (
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    facts,
    manifest_with,
    report,
    run_files,
    runs_without_files,
)

SPEC_CHECKS = {
    "test_set_feedback",
    "padded_seeds",
    "insufficient_seeds",
    "incomplete_coverage",
    "score_mismatch",
    "missing_submission",
    "duplicate_submissions",
    "implausible_score",
    "runtime_over_budget",
    "nonstandard_resources",
    "benchmark_version",
    "known_leaky_competition",
    "rule_violation",
    "grader_loophole",
}
# The portal's own, beyond the table.
PORTAL_CHECKS = {
    "malformed_report",
    "report_only",
    "format_checks",
    "grading_error",
    "selected_seeds",
    "unscanned_evidence",
    "registration",
}
SPEC_BLOCKING = {"answer_copy"}  # named by SPEC §4's blocking findings ("answer copies"), not by its table
COPY_AGREEMENT = {
    "measured": True,
    "rows": 2,
    "rows_agree": 2,
    "rows_exact": 0,
    "agreement": 1.0,
    "agreement_low": 0.95,
}
EXTRA_CODES = {"score_mismatch": {"medals_unknown"}}  # codes a check raises besides its own


def test_every_check_of_the_spec_is_registered():
    assert SPEC_CHECKS <= set(CHECKS)


def test_every_code_is_registered_exactly_once_by_its_own_module():
    assert set(CHECKS) == SPEC_CHECKS | PORTAL_CHECKS | SPEC_BLOCKING
    assert len(set(CHECKS.values())) == len(CHECKS)
    assert {name: check.__module__ for name, check in CHECKS.items()} == {
        name: f"grading.checks.{name}" for name in CHECKS
    }


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    return bundle(tmp_path_factory.mktemp("honest"))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_an_honest_bundle_with_aide_logs_trips_no_check(honest, name):
    assert CHECKS[name](honest) == []


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_an_empty_bundle_without_a_manifest_trips_no_check(name):
    assert CHECKS[name](check_context(manifest=None)) == []


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_runs_whose_files_are_gone_trip_no_check_and_crash_none(name):
    context = check_context(runs=runs_without_files({PIZZA: 3}, regraded=report(PIZZA, 0.5)))
    assert CHECKS[name](context) == []


def test_run_checks_returns_each_code_and_key_once(tmp_path):
    context = bundle(tmp_path, manifest={**_manifest(), "runtime_hours": 48})
    flags = run_checks(context)
    assert len({(f.code, f.key) for f in flags}) == len(flags)
    assert {"runtime_over_budget", "nonstandard_resources"} <= {f.code for f in flags}


@pytest.fixture(scope="module")
def dishonest(tmp_path_factory):
    """A bundle that trips every check: each flag must be well-formed."""
    root = tmp_path_factory.mktemp("dishonest")
    shared = "id,label\n1,0.5\n2,0.5\n"
    log = (
        "[2026-11-30 00:00:00] start\nprivate leaderboard score: 0.99\nI manually wrote the predictions\n"
        "[2026-12-01 12:00:00] end\n"
    )
    runs = [
        run_files(
            root,
            PIZZA,
            0,
            submission=shared,
            run_log=log,
            code={"a.py": "import anthropic\n"},
            claimed=report(PIZZA, 0.9),
            regraded=report(PIZZA, 1.0, medal="gold"),
        ),
        run_files(root, PIZZA, 1, submission=shared, claimed=report(PIZZA, 0.5), regraded=report(PIZZA, 0.5)),
        run_files(root, SPOOKY, 0, claimed=report(SPOOKY, 0.3), regraded=report(SPOOKY, None)),
        # A run the server failed to grade (an error of ours): no re-grade, and its claim set aside.
        dataclasses.replace(
            run_files(root, SPOOKY, 1), grading_error="KeyError in grading/x.py:1 (f), after 3 attempt(s)"
        ),
    ]
    # The re-grade found the first run's file to be the answers, rounded.
    runs[0] = replace(runs[0], agreement=COPY_AGREEMENT)
    # The run group's metadata.json lists a seed the bundle leaves out (the best runs of more, kept).
    listed = {run.folder.name: {"success": True} for run in runs if run.folder is not None}
    (root / "runs" / "group" / "metadata.json").write_text(json.dumps({"runs": {**listed, f"{PIZZA}_0000000a": {}}}))
    # A hosted run's agent that used the format check as a search oracle.
    (runs[0].folder / "format_checks.jsonl").write_text('{"valid": false, "reason": "wrong columns"}\n' * 101)
    manifest = manifest_with(
        {
            "runtime_hours": 30,
            "benchmark.commit": "deadbeef",
            "hardware.vcpus": 64,
            "disclosures.test_set_feedback": True,
        }
    )
    return check_context(
        runs=runs,
        manifest=manifest,
        tiers={"low": [PIZZA, SPOOKY, "spaceship-titanic"]},
        competitions=[facts(PIZZA, gold=0.98, median=0.6, lower=False, best=0.98)],
        report_only=True,
        # Registered, but no run's log holds the nonce.
        registration=RegistrationFacts(id=7, nonce="f" * 32, competitions=(PIZZA, SPOOKY), seeds=3),
        report_claims={
            "entries_per_competition": {PIZZA: 4},
            "problems": [
                {"file": "runs/g/grading_report.json", "total": 1, "problems": ["report: missing field(s) score"]}
            ],
        },
    )


def test_the_dishonest_bundle_trips_every_check_except_those_it_cannot(dishonest):
    tripped = {name for name, check in CHECKS.items() if check(dishonest)}
    # duplicate_submissions (two seeds, one file) is tripped; grader_loophole needs the HMS loophole's data.
    assert tripped == set(CHECKS) - {"grader_loophole"}


@pytest.mark.parametrize("name", sorted(set(CHECKS) - {"grader_loophole"}))
def test_every_flag_is_well_formed_its_code_its_own_and_its_tiers_listed(dishonest, name):
    flags = CHECKS[name](dishonest)
    assert flags
    for flag in flags:
        assert flag.code in {name} | EXTRA_CODES.get(name, set())
        assert flag.severity in {"blocking", "warning", "info"}
        assert flag.key and flag.message.endswith(".")
        assert set(flag.tiers) <= set(dishonest.tier_members)
    assert len({flag.key for flag in flags if flag.code == name}) == len([f for f in flags if f.code == name])


def test_run_checks_runs_only_the_checks_named():
    context = check_context(manifest=manifest_with({"runtime_hours": 48}), report_only=True)
    assert {f.code for f in run_checks(context)} == {"report_only", "runtime_over_budget", "nonstandard_resources"}
    assert {f.code for f in run_checks(context, only=["report_only"])} == {"report_only"}
    assert run_checks(context, only=[]) == []


def test_run_checks_keeps_the_first_flag_of_a_repeated_code_and_key(monkeypatch):
    first = FlagData(code="x", key="k", severity="warning", message="first")
    later = FlagData(code="x", key="k", severity="blocking", message="later")
    other = FlagData(code="x", key="other", severity="info", message="other")
    monkeypatch.setattr(registry, "CHECKS", {"a": lambda c: [first], "b": lambda c: [later, other]})
    assert run_checks(check_context()) == [first, other]


def test_coverage_gives_the_three_seed_checks_of_each_tier():
    runs = [run.graded for run in runs_without_files({PIZZA: 2, SPOOKY: 1})]
    flags = coverage(
        runs=runs, split_members={"low": [PIZZA, SPOOKY], "medium": ["spaceship-titanic"]}, seeds_declared=3
    )
    assert Counter((f.code, f.key) for f in flags) == Counter(
        {
            ("incomplete_coverage", "medium"): 1,
            ("padded_seeds", "low"): 1,
            ("insufficient_seeds", "low"): 1,
            ("insufficient_seeds", "medium"): 1,
        }
    )


def _manifest():
    return default_manifest(split="low", seeds=3)
