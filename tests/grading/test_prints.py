"""The index of what checked entries hold (grading/services/prints.py): lookups find other teams' earlier
entries only, per competition, and a code hash that many entries hold counts for nothing."""

import pytest

from competitions.models import Benchmark
from grading.models import IndexedPrint, Submission
from grading.services import prints
from tests.conftest import persona

A = "a" * 64
B = "b" * 64


@pytest.fixture
def entry(db):
    benchmark = Benchmark.objects.create(name="mle-bench", version="prints-test")

    def make(user) -> Submission:
        return Submission.objects.create(team=user.teams.get(), benchmark=benchmark)

    return make


def index(*, submissions=None, code=None, logs=None) -> dict:
    return {"submissions": submissions or {}, "code": code or {}, "logs": logs or {}}


def test_an_earlier_entry_of_another_team_is_found_by_its_hashes(entry, alice, bob):
    theirs = entry(bob)
    written = prints.prints_store(
        submission=theirs,
        index=index(submissions={A: "pizza/seed-4"}, code={"pizza": [1, 2, 3]}, logs={B: "pizza/seed-0"}),
    )
    assert written == 5 and IndexedPrint.objects.filter(submission=theirs).count() == 5
    ours = entry(alice)
    (found,) = prints.earlier_entries(
        submission=ours,
        index=index(submissions={A: "pizza/seed-0"}, code={"pizza": [2, 3, 9]}, logs={B: "pizza/seed-2"}),
    )
    assert (found.submission_id, found.team) == (theirs.pk, "Bob Works")
    assert found.submissions == {A: "pizza/seed-4"} and found.logs == {B: "pizza/seed-0"}
    assert found.code == {"pizza": frozenset({2, 3})}


def test_own_team_later_entries_and_other_competitions_are_not_found(entry, alice, bob):
    ours = entry(alice)
    own_earlier = entry(alice)
    prints.prints_store(submission=own_earlier, index=index(submissions={A: "pizza/seed-0"}))
    theirs_other_competition = entry(bob)
    prints.prints_store(submission=theirs_other_competition, index=index(submissions={A: "spooky/seed-0"}))
    assert prints.earlier_entries(submission=ours, index=index(submissions={A: "pizza/seed-0"})) == []
    later = entry(bob)
    prints.prints_store(submission=later, index=index(submissions={A: "pizza/seed-0"}))
    assert prints.earlier_entries(submission=ours, index=index(submissions={A: "pizza/seed-0"})) == []


def test_a_code_hash_many_entries_hold_is_common_and_left_out(entry, alice, bob, monkeypatch):
    monkeypatch.setattr(prints, "HOLDERS_MAX", 2)
    carol = persona("carol", team="Carol Co")
    for user in (bob, carol):
        prints.prints_store(submission=entry(user), index=index(code={"pizza": [7, 8] if user is bob else [7]}))
    found = prints.earlier_entries(submission=entry(alice), index=index(code={"pizza": [7, 8]}))
    assert [dict(o.code) for o in found] == [{"pizza": frozenset({8})}, {}]


def test_storing_again_replaces_the_entry_s_hashes(entry, bob):
    theirs = entry(bob)
    prints.prints_store(submission=theirs, index=index(code={"pizza": [1, 2, 3]}))
    prints.prints_store(submission=theirs, index=index(code={"pizza": [4]}))
    assert IndexedPrint.objects.filter(submission=theirs).count() == 1
