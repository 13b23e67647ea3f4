"""The audit's choice and its test, as plain functions (grading/audit_choice.py, grading/audit_test.py)."""

import hashlib

import pytest

from grading.audit_choice import audit_choice, audit_seed
from grading.audit_test import audit_compare


def test_the_seed_is_sha256_of_the_head_and_the_id_and_the_choice_follows_it():
    seed = audit_seed(head_hash="ab" * 32, submission_id=17)
    assert seed == hashlib.sha256(f"{'ab' * 32}:17".encode()).hexdigest()
    candidates = [f"comp-{n}" for n in range(20)]
    chosen = audit_choice(seed=seed, candidates=candidates, k=2)
    assert len(chosen) == 2 and set(chosen) <= set(candidates)
    assert chosen == audit_choice(seed=seed, candidates=list(reversed(candidates)) + candidates, k=2)
    # Another head or another id chooses otherwise (over many, not always the same pair).
    others = {tuple(audit_choice(seed=audit_seed(head_hash="cd" * 32, submission_id=n), candidates=candidates, k=2))
              for n in range(30)}  # fmt: skip
    assert len(others) > 10
    assert audit_choice(seed=seed, candidates=["a"], k=2) == ["a"]
    assert audit_choice(seed=seed, candidates=candidates, k=0) == []


def _compare(bundle, audit, *, lower=False, alpha=0.01, tolerance=0.02):
    return audit_compare(
        competition="c", bundle=bundle, audit=audit, lower_is_better=lower, alpha=alpha, tolerance=tolerance
    )


def test_equal_numbers_pass_and_unreachable_ones_disagree():
    assert not _compare([0.8, 0.8], [0.8, 0.8]).disagrees
    verdict = _compare([0.99, 0.99], [0.8, 0.8])
    assert verdict.disagrees and verdict.excess == pytest.approx(0.19)
    assert verdict.margin == pytest.approx(0.02 * 0.99)  # no spread: the minimum tolerance
    # Worse than the audit is never a disagreement.
    assert not _compare([0.5, 0.5], [0.8, 0.8]).disagrees


def test_lower_is_better_turns_the_direction():
    assert _compare([0.1, 0.1], [0.5, 0.5], lower=True).disagrees
    assert not _compare([0.5, 0.5], [0.1, 0.1], lower=True).disagrees


def test_the_spread_between_seeds_widens_the_margin():
    noisy = _compare([0.70, 0.80, 0.90], [0.60, 0.75])
    assert noisy.pooled_sd > 0 and noisy.margin > 0.02 * 0.8
    assert not noisy.disagrees
    assert _compare([0.80, 0.81, 0.80], [0.60, 0.61]).disagrees


def test_no_valid_audit_run_disagrees_and_no_valid_bundle_run_is_not_tested():
    verdict = _compare([0.8], [])
    assert verdict.disagrees and "no valid submission" in verdict.why
    assert not _compare([], [0.8]).disagrees


def test_a_manifest_names_its_agent_image_as_hosted_runs_do_and_a_bad_one_is_refused_with_the_key():
    from grading.bundles.errors import BundleError
    from grading.bundles.manifest import parse_manifest

    base = {"schema": "bundle-v1", "benchmark": {"split": "low"}}
    assert parse_manifest(data={**base, "agent": {"name": "a", "image": "team/agent:1.0"}}).agent.image == (
        "team/agent:1.0"
    )
    assert parse_manifest(data={**base, "agent": {"name": "a"}}).agent.image is None
    for bad in ("Team/Agent", "a..b:1", "agent:1 ; rm -rf /", 7):
        with pytest.raises(BundleError) as refused:
            parse_manifest(data={**base, "agent": {"name": "a", "image": bad}})
        assert refused.value.details.get("key") == "agent.image", refused.value.message
        assert "agent.image" in refused.value.message
