"""Each pipeline step run twice, out of order, or after a lost worker: the outcome is the same as once.

The steps are called in-process here (the worker tests drive them through Celery); their follow-up tasks
are captured from transaction.on_commit instead of being sent."""

from datetime import timedelta

import pytest
from django.utils import timezone

from grading.models import Flag, Run, Submission, TierAggregate
from grading.services import finish, pipeline
from grading.services.submissions import IllegalTransition, submission_transition
from tests.lite import LITE_SEEDS


@pytest.fixture
def received(registry_with_packs, alice, lite_bundle):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading.services.intake import submission_create

    upload = SimpleUploadedFile("lite.tar.gz", lite_bundle.read_bytes())
    return submission_create(team=alice.teams.get(), user=alice, upload=upload)


def test_validating_twice_makes_the_runs_once(received, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        pipeline.submission_validate(submission_id=received.pk)
        pipeline.submission_validate(submission_id=received.pk)
    received.refresh_from_db()
    assert received.status == "grading" and received.progress_total == 22 * len(LITE_SEEDS)
    assert Run.objects.filter(submission=received).count() == 66
    assert len(callbacks) == 1  # the second call found nothing to claim and queued nothing


def test_grading_a_run_twice_counts_it_once_and_keeps_the_first_result(received, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=received.pk)
    run = Run.objects.filter(submission=received).first()
    pipeline.run_grade(run_id=run.pk)
    first = Run.objects.get(pk=run.pk)
    pipeline.run_grade(run_id=run.pk)
    again = Run.objects.get(pk=run.pk)
    assert again.graded_at == first.graded_at and again.regraded == first.regraded
    assert Submission.objects.get(pk=received.pk).progress_done == 1


def test_the_last_run_hands_over_to_checking_once_and_checking_twice_changes_nothing(
    received, django_capture_on_commit_callbacks, monkeypatch
):
    from grading import queue

    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=received.pk)
    finishing = []
    # The finishing step is recorded; the scheduler's sends of grade_run are dropped.
    monkeypatch.setattr(queue, "send", lambda task, pk: task == queue.FINISH_SUBMISSION and finishing.append(pk))
    with django_capture_on_commit_callbacks(execute=True):
        for run in Run.objects.filter(submission=received):
            pipeline.run_grade(run_id=run.pk)
        pipeline.submission_maybe_finish(submission_id=received.pk)
    assert Submission.objects.get(pk=received.pk).status == "checking"
    assert finishing == [received.pk]
    finish.submission_finish(submission_id=received.pk)
    state = (Submission.objects.get(pk=received.pk).status, Flag.objects.count(), TierAggregate.objects.count())
    finish.submission_finish(submission_id=received.pk)
    assert (Submission.objects.get(pk=received.pk).status, Flag.objects.count(), TierAggregate.objects.count()) == state
    assert state[0] in ("published", "in_review") and state[2] == 2


def test_an_illegal_transition_is_refused(received):
    with pytest.raises(IllegalTransition, match="cannot go from received to published"):
        submission_transition(submission_id=received.pk, to="published", expected=("received",))
    assert not submission_transition(submission_id=received.pk, to="grading", expected=("validating",))


def test_the_watchdog_requeues_a_run_whose_worker_vanished_and_fails_a_stuck_submission(
    received, settings, django_capture_on_commit_callbacks
):
    from grading.tasks import watchdog

    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=received.pk)
    run = Run.objects.filter(submission=received).first()
    long_ago = timezone.now() - timedelta(seconds=settings.GRADING_HARD_TIME_LIMIT + 120)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADING, claimed_at=long_ago, attempts=1)
    assert watchdog.apply().get()["requeued"] == 1
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED

    Submission.objects.filter(pk=received.pk).update(
        status_changed_at=timezone.now() - timedelta(minutes=settings.SUBMISSION_DEADLINE_MINUTES + 1)
    )
    assert watchdog.apply().get()["failed"] == 1
    received.refresh_from_db()
    assert received.status == "failed" and "stayed in 'grading'" in received.status_reason


def test_a_run_lost_three_times_is_given_up_with_a_reason(received, settings, django_capture_on_commit_callbacks):
    from grading.tasks import watchdog

    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=received.pk)
    run = Run.objects.filter(submission=received).first()
    long_ago = timezone.now() - timedelta(seconds=settings.GRADING_HARD_TIME_LIMIT + 120)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADING, claimed_at=long_ago, attempts=3)
    assert watchdog.apply().get()["given_up"] == 1
    run.refresh_from_db()
    assert run.status == "done" and not run.valid_submission
    assert "worker was lost 3 times" in run.regraded["reason"]
