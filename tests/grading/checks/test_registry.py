"""The registry: every check of SPEC §4 runs, and an honest bundle raises nothing in any of them."""

import pytest

from grading.checks import CHECKS, run_checks
from tests.grading.checks.builders import bundle

SPEC_CHECKS = {"test_set_feedback", "padded_seeds", "insufficient_seeds", "incomplete_coverage", "score_mismatch",
               "missing_submission", "duplicate_submissions", "implausible_score", "runtime_over_budget",
               "nonstandard_resources", "benchmark_version", "known_leaky_competition", "rule_violation",
               "grader_loophole"}


def test_every_check_of_the_spec_is_registered():
    assert SPEC_CHECKS <= set(CHECKS)


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    return bundle(tmp_path_factory.mktemp("honest"))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_an_honest_bundle_with_aide_logs_trips_no_check(honest, name):
    assert CHECKS[name](honest) == []


def test_run_checks_returns_each_code_and_key_once(tmp_path):
    context = bundle(tmp_path, manifest={**_manifest(), "runtime_hours": 48})
    flags = run_checks(context)
    assert len({(f.code, f.key) for f in flags}) == len(flags)
    assert {"runtime_over_budget", "nonstandard_resources"} <= {f.code for f in flags}


def _manifest():
    from competitions.demo.runs import default_manifest

    return default_manifest(split="low", seeds=3)
