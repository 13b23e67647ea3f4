"""The evidence level of an entry from its facts (leaderboard/levels.py), without a database."""

import pytest

from leaderboard.levels import (
    AUDITED,
    REGISTERED,
    REPORTED,
    VERIFIED,
    LevelFacts,
    evidence_level,
    levels_at_least,
    next_level_steps,
)


@pytest.mark.parametrize(
    ("facts", "level"),
    [
        (LevelFacts(hosted=True), VERIFIED),
        (LevelFacts(hosted=True, has_logs=False), VERIFIED),  # a hosted run's log is the worker's own capture
        (LevelFacts(hosted=False), REPORTED),
        (LevelFacts(hosted=False, imported=True), REPORTED),
        (LevelFacts(hosted=False, registered=True), REGISTERED),
        (LevelFacts(hosted=False, registered=True, has_logs=False), REPORTED),
        (LevelFacts(hosted=False, registered=True, has_nonce=False), REPORTED),
        (LevelFacts(hosted=False, registered=True, audit_passed=True), AUDITED),
        (LevelFacts(hosted=False, registered=True, has_nonce=False, audit_passed=True), REPORTED),
        (LevelFacts(hosted=False, registered=False, audit_passed=True), REPORTED),
    ],
)
def test_the_level_is_the_strongest_whose_conditions_hold(facts, level):
    assert evidence_level(facts) == level


def test_a_minimum_level_keeps_itself_and_the_stronger_ones():
    assert levels_at_least(REPORTED) == (REPORTED, REGISTERED, AUDITED, VERIFIED)
    assert levels_at_least(REGISTERED) == (REGISTERED, AUDITED, VERIFIED)
    assert levels_at_least(VERIFIED) == (VERIFIED,)


def test_an_unregistered_upload_gets_one_sentence_per_missing_step():
    steps = next_level_steps(LevelFacts(hosted=False, has_logs=False))
    assert len(steps) == 2
    assert steps[0].startswith("Register the run group before running (mleportal register)")
    assert "run.log" in steps[1]
    assert all(step.endswith("to reach registered.") for step in steps)


def test_a_registered_run_without_the_nonce_is_told_to_write_it():
    assert next_level_steps(LevelFacts(hosted=False, registered=True, has_nonce=False)) == [
        "Write the registration's nonce into each run's log before its submission is written to reach registered."
    ]


def test_the_next_steps_of_the_stronger_levels():
    assert "agent.image" in next_level_steps(LevelFacts(hosted=False, registered=True))[0]
    assert "hosted workers" in next_level_steps(LevelFacts(hosted=False, registered=True, audit_passed=True))[0]
    assert next_level_steps(LevelFacts(hosted=True)) == []
    assert "imported from MLE-bench" in next_level_steps(LevelFacts(hosted=False, imported=True))[0]
