"""Publication and review decisions reach the board through grading's signal and a real Celery worker."""

import time

import pytest

from grading.models import Submission
from grading.services.publication import submission_publish_if_ready
from grading.services.review import entry_decide
from leaderboard.models import Entry
from tests.leaderboard.builders import entry, split_members


def wait_for(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.django_db(transaction=True)
def test_a_publication_and_a_later_decision_reach_the_board_through_the_worker(celery_worker, team, maintainer):
    low = split_members("low")
    submission = entry(
        team,
        agent="Through the worker",
        medals={s: low[:3] for s in range(3)},
        status=Submission.Status.CHECKING,
        refresh=False,
    )
    assert submission_publish_if_ready(submission_id=submission.pk)
    assert wait_for(lambda: Entry.objects.filter(submission=submission).exists()), celery_worker.output()
    assert Entry.objects.get(submission=submission).board == "comparable"

    entry_decide(
        submission_id=submission.pk, decision="non_comparable", reason="the agent saw test labels", actor=maintainer
    )
    assert wait_for(lambda: Entry.objects.filter(submission=submission, board="non_comparable").exists()), (
        celery_worker.output()
    )
    notes = Entry.objects.get(submission=submission).footnotes
    assert any("the agent saw test labels" in note for note in notes)

    entry_decide(submission_id=submission.pk, decision="reject", reason="withdrawn", actor=maintainer)
    assert wait_for(lambda: not Entry.objects.filter(submission=submission).exists()), celery_worker.output()
