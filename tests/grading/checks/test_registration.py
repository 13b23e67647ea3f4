"""registration: runs without the nonce, registered seeds not reported, and what the aggregation counts."""

from grading.checks import registration
from grading.checks.context import RegistrationFacts
from grading.engine.aggregation import RunOutcome, aggregate
from tests.grading.checks.builders import PIZZA, SPOOKY, check_context, run_files

NONCE = "0123456789abcdef" * 2


def _facts(seeds: int = 3) -> RegistrationFacts:
    return RegistrationFacts(id=5, nonce=NONCE, competitions=(PIZZA, SPOOKY), seeds=seeds)


def test_runs_with_the_nonce_in_run_log_or_logs_are_part_of_the_registration(tmp_path):
    runs = [
        run_files(tmp_path, PIZZA, 0, run_log=f"start\nnonce {NONCE}\n"),
        run_files(tmp_path, SPOOKY, 0, run_log="start\n", logs={"agent.log": f"x{NONCE}y"}),
    ]
    flags = registration.check(check_context(runs=runs, registration=_facts(seeds=1)))
    assert flags == []


def test_a_run_without_the_nonce_is_flagged_blocking_and_its_seed_unreported(tmp_path):
    runs = [
        run_files(tmp_path, PIZZA, 0, run_log=f"{NONCE}\n"),
        run_files(tmp_path, PIZZA, 1, run_log="no nonce here\n"),
        run_files(tmp_path, SPOOKY, 0, run_log=f"{NONCE}\n"),
    ]
    flags = {f.key: f for f in registration.check(check_context(runs=runs, registration=_facts(seeds=2)))}
    assert flags["no_nonce"].severity == "blocking"
    assert flags["no_nonce"].evidence["runs"] == [runs[1].run_path]
    assert flags["unreported_seeds"].severity == "warning"
    assert flags["unreported_seeds"].message == (
        "2 seeds registered, 1 reported; the 1 seed(s) not reported (2 run(s) in all) count as failures."
    )


def test_the_nonce_is_found_across_a_block_boundary(tmp_path, monkeypatch):
    monkeypatch.setattr(registration, "CHUNK", 7)
    run = run_files(tmp_path, PIZZA, 0, run_log="abcdefghij" + NONCE + "k")
    assert registration.has_nonce(run, NONCE)
    assert not registration.has_nonce(run, NONCE[::-1])


def _won(cid: str, seed: int) -> RunOutcome:
    return RunOutcome(
        competition_id=cid,
        seed=seed,
        submission_exists=True,
        valid_submission=True,
        gold=True,
        silver=False,
        bronze=False,
        above_median=True,
    )


def test_registered_seeds_never_reported_count_as_failures_in_both_aggregates():
    # The best three of ten, under their original seed numbers: each competition's own.
    reported = [_won(PIZZA, seed) for seed in (0, 4, 7)] + [_won(SPOOKY, seed) for seed in (2, 5, 9)]
    counted = registration.outcomes_as_registered(reported, registration=_facts(seeds=10))
    assert len(counted) == 20
    for padded in (False, True):
        result = aggregate(counted, split=[PIZZA, SPOOKY], padded=padded)
        assert result is not None and result["seeds"] == 10
        assert result["any_medal"]["mean"] == 30.0


def test_runs_waiting_for_a_regrade_are_not_padded_over_and_other_competitions_are_left():
    other = _won("spaceship-titanic", 4)
    counted = registration.outcomes_as_registered(
        [_won(PIZZA, 3), other], registration=_facts(seeds=3), ungraded={PIZZA: 1}
    )
    assert other in counted
    assert sorted((o.competition_id, o.seed) for o in counted if o.competition_id == PIZZA) == [(PIZZA, 0), (PIZZA, 2)]
    assert sum(o.competition_id == SPOOKY for o in counted) == 3


def test_an_unnamed_registrations_seeds_are_failures_numbered_after_the_highest_seed():
    reported = [_won(PIZZA, seed) for seed in (0, 1, 2)] + [_won(SPOOKY, seed) for seed in (0, 1, 2)]
    first = RegistrationFacts(id=7, nonce="", competitions=(PIZZA, SPOOKY), seeds=2)
    second = RegistrationFacts(id=9, nonce="", competitions=(PIZZA,), seeds=1)
    counted = registration.outcomes_with_unnamed(reported, [first, second])
    added = sorted((o.competition_id, o.seed) for o in counted[len(reported) :])
    assert added == [(PIZZA, 3), (PIZZA, 4), (PIZZA, 5), (SPOOKY, 3), (SPOOKY, 4)]
    assert not any(o.submission_exists or o.any_medal for o in counted[len(reported) :])
    # Two complete seeds of failures; the padded aggregate counts the lone PIZZA seed too.
    complete = aggregate(counted, split=[PIZZA, SPOOKY], padded=False)
    padded = aggregate(counted, split=[PIZZA, SPOOKY], padded=True)
    assert complete is not None and complete["seeds"] == 5 and complete["any_medal"]["mean"] == 60.0
    assert padded is not None and padded["seeds"] == 6 and padded["any_medal"]["mean"] == 50.0
    assert registration.outcomes_with_unnamed(reported, []) == reported


def test_the_unnamed_registrations_flag_names_each_and_counts_the_runs():
    flag = registration.check(
        check_context(
            unnamed_registrations=(RegistrationFacts(id=7, nonce="", competitions=(PIZZA, SPOOKY), seeds=10),)
        )
    )[0]
    assert (flag.code, flag.key, flag.severity) == ("registration", "unnamed_registrations", "warning")
    assert flag.message.startswith("10 seeds registered in registration 7 (2 competition(s)), never reported: ")
    assert "counted as failures (20 run(s) in all)" in flag.message
    assert flag.evidence["registrations"] == [{"id": 7, "seeds": 10, "competitions": [PIZZA, SPOOKY]}]
