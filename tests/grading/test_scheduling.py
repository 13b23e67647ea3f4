"""The grading queue: a bounded number of runs in the broker, chosen fairly across teams and submissions.

Dispatch order is checked against the database, with the broker stood in for by the list of ids the
scheduler sends (in order), and a simulated worker that takes them first in, first out through the real
run_grade (its grader replaced by one that answers at once). One test then runs it all on a real worker.
"""

import threading
import time
from collections import deque
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from competitions.selectors import NotGradable
from grading import queue
from grading.models import Run, Submission
from grading.services import pipeline, scheduling
from grading.services.submissions import submission_folder
from tests.conftest import persona
from tests.grading.builders import grading_submission, lite_submission
from tests.lite import LITE_SEEDS

R = Run.Status


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


class Broker:
    """What the scheduler sends, in order, and a worker that takes it first in, first out."""

    def __init__(self, monkeypatch, capture):
        self.sent: list[int] = []
        self.waiting: deque[int] = deque()
        self.claimed: list[int] = []
        self.capture = capture
        monkeypatch.setattr(queue, "send", self._send)
        monkeypatch.setattr(pipeline, "grade_run_file", self._grade_at_once)

    def _send(self, task: str, pk: int) -> None:
        if task != queue.GRADE_RUN:
            return
        self.sent.append(pk)
        self.waiting.append(pk)

    @staticmethod
    def _grade_at_once(**_):
        raise NotGradable("graded at once by the test")

    def dispatch(self) -> list[int]:
        with self.capture(execute=True):
            return scheduling.runs_dispatch()

    def work(self, count: int = 1) -> None:
        for _ in range(count):
            pk = self.waiting.popleft()
            self.claimed.append(pk)
            with self.capture(execute=True):
                pipeline.run_grade(run_id=pk)


@pytest.fixture
def broker(monkeypatch, django_capture_on_commit_callbacks):
    return Broker(monkeypatch, django_capture_on_commit_callbacks)


def team_of(user):
    return user.teams.get()


def test_it_keeps_at_most_grading_max_queued_runs_in_the_broker(registry, alice, broker, settings):
    settings.GRADING_MAX_QUEUED = 5
    submission = grading_submission(team_of(alice), runs=30)
    assert len(broker.dispatch()) == 5
    assert broker.dispatch() == []
    assert Run.objects.filter(status=R.QUEUED).count() == 5 and Run.objects.filter(status=R.PENDING).count() == 25
    broker.work(3)  # each claim frees a place, which the next run takes
    assert Run.objects.filter(status=R.QUEUED).count() == 5
    assert Run.objects.filter(submission=submission, status=R.DONE).count() == 3
    assert len(broker.sent) == len(set(broker.sent)) == 8


def test_a_small_submission_of_another_team_is_sent_long_before_a_big_backlog_drains(
    registry, alice, bob, broker, settings
):
    settings.GRADING_MAX_QUEUED = 4
    big = grading_submission(team_of(alice), runs=300)
    broker.dispatch()
    broker.work(10)
    small = grading_submission(team_of(bob), runs=6)
    assert broker.dispatch() == []  # the queue is full; bob's runs take the next places that free
    small_ids = set(Run.objects.filter(submission=small).values_list("pk", flat=True))
    before = len(broker.claimed)
    while not small_ids <= set(broker.claimed):
        broker.work()
    # Bob's 6 runs were behind the 4 already queued, then took every other place.
    assert len(broker.claimed) - before <= 4 + 2 * 6
    assert Run.objects.filter(submission=big, status=R.PENDING).count() > 250
    assert Submission.objects.get(pk=small.pk).status == Submission.Status.CHECKING


def test_the_team_with_fewest_runs_in_flight_goes_first(registry, alice, bob, broker, settings):
    carol = persona("carol", team="Carol Co")
    settings.GRADING_MAX_QUEUED = 6
    busy = grading_submission(team_of(alice), runs=20)
    Run.objects.filter(pk__in=Run.objects.filter(submission=busy).values("pk")[:3]).update(
        status=R.GRADING, claimed_at=timezone.now(), worker="elsewhere"
    )
    one = grading_submission(team_of(bob), runs=20)
    Run.objects.filter(pk=Run.objects.filter(submission=one).first().pk).update(status=R.GRADING, worker="elsewhere")
    idle = grading_submission(team_of(carol), runs=20)
    teams = {busy.pk: "alice", one.pk: "bob", idle.pk: "carol"}
    order = [teams[Run.objects.get(pk=pk).submission_id] for pk in broker.dispatch()]
    # In flight before: alice 3, bob 1, carol 0. Carol goes first, then carol and bob take turns until
    # they have as many as alice; then all three take turns.
    assert order == ["carol", "bob", "carol", "bob", "carol", "alice"]


def test_a_teams_oldest_submission_goes_first(registry, alice, broker, settings):
    settings.GRADING_MAX_QUEUED = 10
    older = grading_submission(team_of(alice), runs=6)
    newer = grading_submission(team_of(alice), runs=6)
    sent = broker.dispatch()
    by_submission = [Run.objects.get(pk=pk).submission_id for pk in sent]
    assert by_submission == [older.pk] * 6 + [newer.pk] * 4


def test_only_runs_of_submissions_being_graded_are_sent(registry, alice, broker, settings):
    failed = grading_submission(team_of(alice), runs=4, status=Submission.Status.FAILED)
    grading = grading_submission(team_of(alice), runs=2)
    sent = broker.dispatch()
    assert {Run.objects.get(pk=pk).submission_id for pk in sent} == {grading.pk}
    assert not Run.objects.filter(submission=failed).exclude(status=R.PENDING).exists()


def test_within_a_submission_the_biggest_competitions_go_first_with_each_competitions_seeds_together(
    registry_with_packs, alice, lite_bundle, broker, settings, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading.services.intake import submission_create

    received = submission_create(
        team=team_of(alice), user=alice, upload=SimpleUploadedFile("lite.tar.gz", lite_bundle.read_bytes())
    )
    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=received.pk)
    Run.objects.filter(submission=received).update(status=R.PENDING)  # whatever validation sent: start here
    settings.GRADING_MAX_QUEUED = 1000
    queued = broker.dispatch()
    root = submission_folder(received) / "bundle"
    runs = Run.objects.in_bulk(queued)
    order = [runs[pk] for pk in queued]
    assert sorted(queued) == sorted(Run.objects.filter(submission=received).values_list("pk", flat=True))
    slugs = [run.competition.slug for run in order]
    seeds = len(LITE_SEEDS)
    assert all(slugs[i : i + seeds] == [slugs[i]] * seeds for i in range(0, len(slugs), seeds))
    biggest = [
        max((root / r.submission_file).stat().st_size for r in order[i : i + seeds])
        for i in range(0, len(order), seeds)
    ]
    assert biggest == sorted(biggest, reverse=True) and biggest[0] > biggest[-1]
    assert [r.queue_rank for r in order] == list(range(len(order)))


def test_a_run_is_claimed_once_and_a_second_message_changes_nothing(registry, alice, broker):
    submission = grading_submission(team_of(alice), runs=1)
    run = Run.objects.get(submission=submission)
    broker.dispatch()
    assert scheduling.run_claim(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(worker="another-host:1:abcdef")
    assert not scheduling.run_claim(run_id=run.pk)  # another live process has it
    assert scheduling.run_claim(run_id=run.pk, redelivered=True)  # the broker gave it back: its holder died
    Run.objects.filter(pk=run.pk).update(status=R.DONE)
    assert not scheduling.run_claim(run_id=run.pk) and not scheduling.run_claim(run_id=run.pk, redelivered=True)
    assert Run.objects.get(pk=run.pk).attempts == 2


@pytest.mark.django_db(transaction=True)
def test_dispatchers_running_at_once_send_each_run_once_and_never_overfill_the_queue(monkeypatch, settings):
    from competitions.services import competitions_load

    competitions_load()
    settings.GRADING_MAX_QUEUED = 7
    grading_submission(team_of(persona("alice", team="Alice Lab")), runs=40)
    grading_submission(team_of(persona("bob", team="Bob Works")), runs=40)
    sent: list[int] = []
    monkeypatch.setattr(queue, "send", lambda task, pk: sent.append(pk) if task == queue.GRADE_RUN else None)
    start = threading.Barrier(8)

    def dispatcher() -> None:
        try:
            start.wait()
            for _ in range(5):
                scheduling.runs_dispatch()
        finally:
            connection.close()

    threads = [threading.Thread(target=dispatcher) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sent) == len(set(sent)) == 7
    assert set(sent) == set(Run.objects.filter(status=R.QUEUED).values_list("pk", flat=True))


# --- the watchdog: runs of dead workers, lost messages --------------------------------------------


def test_a_run_whose_worker_stopped_beating_is_queued_again_and_one_on_a_live_worker_is_left(
    registry, alice, settings, broker
):
    from grading.models import WorkerHeartbeat
    from grading.tasks import watchdog

    submission = grading_submission(team_of(alice), runs=3)
    now = timezone.now()
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    dead, slow, fresh = Run.objects.filter(submission=submission).order_by("pk")
    WorkerHeartbeat.objects.create(name="host:1:dead", beat_at=ago(settings.WORKER_LOST_SECONDS + 5))
    WorkerHeartbeat.objects.create(name="host:2:live", beat_at=ago(2))
    Run.objects.filter(pk=dead.pk).update(status=R.GRADING, worker="host:1:dead", claimed_at=ago(60), attempts=1)
    Run.objects.filter(pk=slow.pk).update(status=R.GRADING, worker="host:2:live", claimed_at=ago(300), attempts=1)
    # Claimed moments ago by a process that has not beaten yet: not dead.
    Run.objects.filter(pk=fresh.pk).update(status=R.GRADING, worker="host:3:new", claimed_at=ago(1), attempts=1)
    with broker.capture(execute=True):
        result = watchdog.apply().get()
    assert result["requeued"] == 1 and result["given_up"] == 0
    assert Run.objects.get(pk=dead.pk).status == R.QUEUED and broker.sent == [dead.pk]
    assert {Run.objects.get(pk=pk).status for pk in (slow.pk, fresh.pk)} == {R.GRADING}


def test_a_queued_run_whose_message_was_lost_is_sent_again(registry, alice, settings, broker):
    from grading.models import WorkerHeartbeat
    from grading.tasks import watchdog

    settle = settings.WORKER_LOST_SECONDS
    submission = grading_submission(team_of(alice), runs=4)
    now = timezone.now()
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    lost, witness, waiting, forgotten = Run.objects.filter(submission=submission).order_by("pk")
    # `lost` was sent before `witness`, which a worker claimed a while ago: lost's message is gone.
    Run.objects.filter(pk=lost.pk).update(status=R.QUEUED, queued_at=ago(settle + 20))
    Run.objects.filter(pk=witness.pk).update(
        status=R.GRADING, queued_at=ago(settle + 15), claimed_at=ago(settle + 10), worker="host:1:live"
    )
    WorkerHeartbeat.objects.create(name="host:1:live", beat_at=now)
    # `waiting` was sent after the last claim: it may just be waiting for a free worker.
    Run.objects.filter(pk=waiting.pk).update(status=R.QUEUED, queued_at=ago(settle + 5))
    # `forgotten` has no witness but has waited longer than GRADING_RESEND_SECONDS.
    Run.objects.filter(pk=forgotten.pk).update(status=R.QUEUED, queued_at=ago(settings.GRADING_RESEND_SECONDS + 1))
    with broker.capture(execute=True):
        result = watchdog.apply().get()
    assert result["runs_resent"] == 2 and sorted(broker.sent) == sorted([lost.pk, forgotten.pk])
    assert Run.objects.get(pk=lost.pk).queued_at > now - timedelta(seconds=5)
    assert Run.objects.get(pk=waiting.pk).queued_at == ago(settle + 5)
    with broker.capture(execute=True):
        assert watchdog.apply().get()["runs_resent"] == 0  # sent again once, not at every round


def test_queued_runs_of_a_submission_that_failed_go_back_to_pending(registry, alice, settings, broker):
    from grading.tasks import watchdog

    submission = grading_submission(team_of(alice), runs=2, status=Submission.Status.FAILED)
    Run.objects.filter(submission=submission).update(
        status=R.QUEUED, queued_at=timezone.now() - timedelta(seconds=settings.GRADING_RESEND_SECONDS + 1)
    )
    with broker.capture(execute=True):
        result = watchdog.apply().get()
    assert result["released"] == 2 and result["runs_resent"] == 0 and broker.sent == []
    assert set(Run.objects.filter(submission=submission).values_list("status", flat=True)) == {R.PENDING}


# --- on a real worker -------------------------------------------------------------------------------


@pytest.mark.worker
def test_on_a_real_worker_another_teams_small_submission_finishes_while_a_big_one_has_most_runs_left(
    registry_with_packs, alice, bob, start_worker, lite_run_group, settings
):
    settings.GRADING_MAX_QUEUED = 2
    worker = start_worker(GRADING_MAX_QUEUED="2")
    run_dirs = sorted(p for p in lite_run_group.iterdir() if p.is_dir())
    big = lite_submission(team_of(alice), run_dirs)
    scheduling.runs_dispatch()
    deadline = time.monotonic() + 60
    while Run.objects.filter(submission=big, status=R.DONE).count() < 3:
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.1)
    small = lite_submission(team_of(bob), run_dirs[:3])
    arrived = timezone.now()
    scheduling.runs_dispatch()  # as intake does; the queue is full, so the worker's next claims pick bob
    deadline = time.monotonic() + 120
    while Submission.objects.get(pk=small.pk).status == Submission.Status.GRADING:
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.1)
    small_runs = list(Run.objects.filter(submission=small))
    assert all(run.status == R.DONE and run.regraded["score"] is not None for run in small_runs)
    # Between bob's runs' arrival and his last run's claim, alice's runs took the 2 places queued before them
    # and then every other place: 4 claims (6 allows for a claim racing the arrival).
    last_small_claim = max(run.claimed_at for run in small_runs)
    big_between = Run.objects.filter(submission=big, claimed_at__gt=arrived, claimed_at__lt=last_small_claim).count()
    assert big_between <= 6, big_between
    assert Run.objects.filter(submission=big).exclude(status=R.DONE).count() > len(run_dirs) // 2
