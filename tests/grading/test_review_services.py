"""Maintainers' decisions (grading/services/review.py): each decision, its reason, the audit trail, the mail."""

import pytest

from competitions.services import competitions_load
from grading.models import Flag, ReviewEvent, Submission
from grading.services.review import ReviewRefused, entry_decide, flag_decide, team_answer
from tests.grading.builders import flagged_submission

S = Submission.Status


@pytest.fixture
def entry(db, alice):
    competitions_load()
    return flagged_submission(
        alice.teams.get(),
        user=alice,
        flags=[
            {"code": "test_set_feedback", "severity": "blocking", "key": "log"},
            {"code": "insufficient_seeds", "severity": "warning", "key": "low"},
        ],
    )


def _flag(entry, code):
    return entry.flags.get(code=code)


def test_accepting_the_only_blocking_flag_publishes_the_entry(
    entry, maintainer, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        flag = flag_decide(
            flag_id=_flag(entry, "test_set_feedback").pk,
            decision="accept",
            reason="Only the validation score was printed.",
            actor=maintainer,
        )
    assert flag.decision == "accept" and flag.decided_by == maintainer and flag.decided_at is not None
    assert flag.resolution == "Only the validation score was printed."
    entry.refresh_from_db()
    assert entry.status == S.PUBLISHED
    assert list(entry.review_events.values_list("kind", flat=True)) == ["decision", "published"]
    event = ReviewEvent.objects.get(kind="decision")
    assert (event.kind, event.decision, event.actor, event.flag, event.reason) == (
        "decision",
        "accept",
        maintainer,
        flag,
        "Only the validation score was printed.",
    )
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["alice@example.org"]
    assert f"Flag test_set_feedback ({flag.key}) of submission" in mailoutbox[0].body
    assert "accepted by a maintainer" in mailoutbox[0].body and "validation score" in mailoutbox[0].body


def test_a_decision_needs_a_reason(entry, maintainer):
    for reason in ("", "   "):
        with pytest.raises(ReviewRefused, match="needs a reason") as refused:
            flag_decide(
                flag_id=_flag(entry, "test_set_feedback").pk, decision="accept", reason=reason, actor=maintainer
            )
        assert refused.value.status == 400 and refused.value.code == "reason_required"
    assert not ReviewEvent.objects.exists() and _flag(entry, "test_set_feedback").decision == ""


def test_an_unknown_decision_is_refused(entry, maintainer):
    with pytest.raises(ReviewRefused, match="decision must be one of"):
        entry_decide(submission_id=entry.pk, decision="approve", reason="fine", actor=maintainer)


def test_only_maintainers_decide(entry, alice, bob):
    for user in (alice, bob):
        with pytest.raises(ReviewRefused, match="Only maintainers") as refused:
            flag_decide(flag_id=_flag(entry, "test_set_feedback").pk, decision="accept", reason="mine", actor=user)
        assert refused.value.status == 403
    assert not ReviewEvent.objects.exists()


@pytest.mark.parametrize("status", [S.GRADING, S.REJECTED, S.CHANGES_REQUESTED, S.FAILED])
def test_decisions_are_made_only_on_entries_in_review_or_published(entry, maintainer, status):
    Submission.objects.filter(pk=entry.pk).update(status=status)
    with pytest.raises(ReviewRefused, match=f"is {status}; decisions are made only") as refused:
        entry_decide(submission_id=entry.pk, decision="accept", reason="fine", actor=maintainer)
    assert refused.value.status == 409 and not ReviewEvent.objects.exists()


def test_a_non_comparable_flag_decision_marks_the_entry_with_its_reason(entry, maintainer):
    flag_decide(
        flag_id=_flag(entry, "test_set_feedback").pk,
        decision="non_comparable",
        reason="The agent saw its test accuracy.",
        actor=maintainer,
    )
    entry.refresh_from_db()
    assert entry.review_decision == "non_comparable" and entry.review_reason == "The agent saw its test accuracy."
    assert entry.status == S.PUBLISHED and entry.comparable is False
    flag_decide(
        flag_id=_flag(entry, "insufficient_seeds").pk,
        decision="non_comparable",
        reason="Two seeds only.",
        actor=maintainer,
    )
    entry.refresh_from_db()
    assert entry.review_reason == "The agent saw its test accuracy.\nTwo seeds only."


def test_an_entry_decision_settles_every_waiting_flag(
    entry, maintainer, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        decided = entry_decide(
            submission_id=entry.pk,
            decision="non_comparable",
            reason="Test-set feedback during the run.",
            actor=maintainer,
        )
    assert decided.status == S.PUBLISHED and decided.review_decision == "non_comparable"
    assert decided.review_reason == "Test-set feedback during the run."
    assert set(Flag.objects.values_list("decision", "resolution", "decided_by")) == {
        ("non_comparable", "Test-set feedback during the run.", maintainer.pk)
    }
    event = ReviewEvent.objects.get(kind="decision")
    assert event.flag is None and event.decision == "non_comparable"
    assert "The whole of submission" in mailoutbox[0].body
    assert "marked non-comparable by a maintainer" in mailoutbox[0].body


def test_rejecting_a_flag_rejects_the_entry(entry, maintainer):
    flag_decide(
        flag_id=_flag(entry, "test_set_feedback").pk,
        decision="reject",
        reason="Answers were read from the private folder.",
        actor=maintainer,
    )
    entry.refresh_from_db()
    assert entry.status == S.REJECTED and entry.review_decision == "reject"
    assert "Answers were read" in entry.status_reason


def test_a_published_entry_can_be_rejected_later(entry, maintainer):
    entry_decide(submission_id=entry.pk, decision="accept", reason="Looks fine.", actor=maintainer)
    entry.refresh_from_db()
    assert entry.status == S.PUBLISHED
    entry_decide(submission_id=entry.pk, decision="reject", reason="A leak was found after all.", actor=maintainer)
    entry.refresh_from_db()
    assert entry.status == S.REJECTED
    assert list(entry.review_events.filter(kind="decision").values_list("decision", flat=True)) == ["accept", "reject"]
    assert list(entry.review_events.values_list("kind", flat=True)) == ["decision", "published", "decision"]


def test_requesting_changes_asks_the_team_to_upload_again(
    entry, maintainer, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        entry_decide(
            submission_id=entry.pk, decision="request_changes", reason="Include the logs of seed 2.", actor=maintainer
        )
    entry.refresh_from_db()
    assert entry.status == S.CHANGES_REQUESTED and entry.review_reason == "Include the logs of seed 2."
    body = mailoutbox[0].body
    assert "Include the logs of seed 2." in body and f"replaces={entry.pk}" in body


def test_requesting_changes_on_a_published_entry_takes_it_off_the_board(entry, maintainer):
    entry_decide(submission_id=entry.pk, decision="accept", reason="ok", actor=maintainer)
    entry_decide(submission_id=entry.pk, decision="request_changes", reason="Upload seed 3 too.", actor=maintainer)
    entry.refresh_from_db()
    assert entry.status == S.CHANGES_REQUESTED


def test_a_team_member_answers_and_the_answer_joins_the_trail(entry, alice, bob, maintainer):
    flag_decide(
        flag_id=_flag(entry, "test_set_feedback").pk, decision="non_comparable", reason="Feedback.", actor=maintainer
    )
    answer = team_answer(submission_id=entry.pk, user=alice, text="  The score printed was the validation one.  ")
    assert answer.kind == "team_answer" and answer.actor == alice
    assert answer.reason == "The score printed was the validation one."
    # The non-comparable decision left nothing blocking, so the entry was published (non-comparable).
    assert list(entry.review_events.values_list("kind", flat=True)) == ["decision", "published", "team_answer"]
    with pytest.raises(ReviewRefused, match="Only members") as refused:
        team_answer(submission_id=entry.pk, user=bob, text="I object")
    assert refused.value.status == 403
    with pytest.raises(ReviewRefused, match="Write an answer"):
        team_answer(submission_id=entry.pk, user=alice, text=" ")
    assert entry.review_events.count() == 3  # nothing was added by the refused answers
