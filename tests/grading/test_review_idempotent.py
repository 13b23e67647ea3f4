"""Decisions are idempotent: the same decision with the same reason, sent again (or twice at once), writes one
audit event and changes nothing; another decision or another reason later is a new event."""

import threading

import pytest
from django.db import connection

from competitions.services import competitions_load
from grading.models import Flag, ReviewEvent, Submission
from grading.services.review import entry_decide, flag_decide
from tests.grading.builders import flagged_submission

BODY = {"decision": "non_comparable", "reason": "The agent saw its test score."}


def decisions(entry: Submission) -> list[tuple]:
    return list(
        ReviewEvent.objects.filter(submission=entry, kind=ReviewEvent.Kind.DECISION).values_list("decision", "reason")
    )


def test_the_same_flag_decision_twice_writes_one_event_and_changes_nothing(
    entry, maintainer_api, django_capture_on_commit_callbacks
):
    flag = entry.flags.get()
    url = f"/api/v1/review/flags/{flag.pk}/decision/"
    first = maintainer_api.post(url, BODY, format="json")
    assert first.status_code == 200
    flag.refresh_from_db()
    entry.refresh_from_db()
    before = (flag.decided_at, entry.status, entry.status_changed_at, entry.review_reason)
    with django_capture_on_commit_callbacks() as callbacks:
        again = maintainer_api.post(url, {**BODY, "reason": f"  {BODY['reason']}\n"}, format="json")
    assert again.status_code == 200 and again.json() == first.json()
    assert callbacks == []  # no mail, no board refresh
    flag.refresh_from_db()
    entry.refresh_from_db()
    assert (flag.decided_at, entry.status, entry.status_changed_at, entry.review_reason) == before
    assert decisions(entry) == [("non_comparable", BODY["reason"])]


def test_a_changed_mind_or_reason_is_a_new_event(entry, maintainer):
    flag = entry.flags.get()
    flag_decide(flag_id=flag.pk, decision="non_comparable", reason="Saw the score.", actor=maintainer)
    flag_decide(flag_id=flag.pk, decision="non_comparable", reason="Saw the score in step 12.", actor=maintainer)
    flag_decide(flag_id=flag.pk, decision="accept", reason="It was the validation score.", actor=maintainer)
    assert decisions(entry) == [
        ("non_comparable", "Saw the score."),
        ("non_comparable", "Saw the score in step 12."),
        ("accept", "It was the validation score."),
    ]
    flag.refresh_from_db()
    assert (flag.decision, flag.resolution) == ("accept", "It was the validation score.")


@pytest.mark.parametrize(
    ("decision", "status"), [("reject", "rejected"), ("request_changes", "changes_requested"), ("accept", "published")]
)
def test_the_same_entry_decision_twice_answers_200_with_one_event(entry, maintainer_api, decision, status):
    url = f"/api/v1/review/submissions/{entry.pk}/decision/"
    body = {"decision": decision, "reason": "Decided once."}
    first = maintainer_api.post(url, body, format="json")
    again = maintainer_api.post(url, body, format="json")
    assert first.status_code == again.status_code == 200, again.content
    assert again.json()["status"] == status and again.json()["review_trail"] == first.json()["review_trail"]
    assert decisions(entry) == [(decision, "Decided once.")]
    # Once rejected or sent back, a different decision is refused as before: the model allows none.
    if status != "published":
        other = maintainer_api.post(url, {"decision": "accept", "reason": "Changed my mind."}, format="json")
        assert other.status_code == 409 and other.json()["error"]["code"] == "not_reviewable"


def test_an_entry_accepted_again_after_a_new_flag_settles_it(entry, maintainer):
    entry_decide(submission_id=entry.pk, decision="accept", reason="Fine.", actor=maintainer)
    entry_decide(submission_id=entry.pk, decision="accept", reason="Fine.", actor=maintainer)
    assert len(decisions(entry)) == 1
    new = Flag.objects.create(submission=entry, code="score_mismatch", severity="warning", key="k", message="m")
    entry_decide(submission_id=entry.pk, decision="accept", reason="Fine.", actor=maintainer)
    new.refresh_from_db()
    assert new.decision == "accept" and len(decisions(entry)) == 2


def _at_once(count: int, call) -> list:
    barrier = threading.Barrier(count)
    outcomes: list = []

    def run() -> None:
        try:
            barrier.wait()
            outcomes.append(call())
        except Exception as exc:  # noqa: BLE001 - the test reports what each thread met
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_the_same_decisions_sent_at_once_write_one_event_each(alice, maintainer):
    competitions_load()
    entry = flagged_submission(alice.teams.get(), user=alice)
    flag = entry.flags.get()
    outcomes = _at_once(
        8, lambda: flag_decide(flag_id=flag.pk, decision="accept", reason="At once.", actor=maintainer).decision
    )
    assert outcomes == ["accept"] * 8
    assert decisions(entry) == [("accept", "At once.")]

    other = flagged_submission(alice.teams.get(), user=alice)
    outcomes = _at_once(
        8, lambda: entry_decide(submission_id=other.pk, decision="reject", reason="At once.", actor=maintainer).status
    )
    assert outcomes == ["rejected"] * 8
    assert decisions(other) == [("reject", "At once.")]
