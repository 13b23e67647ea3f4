"""The grading queue: which runs go to the broker, in what order, and how lost ones come back.

Runs are created `pending`. `runs_dispatch` keeps at most GRADING_MAX_QUEUED of them `queued` (sent to the
broker, not yet claimed) and picks the next ones fairly: the team with the fewest runs queued or grading goes
first, then that team's oldest submission, then within a submission the biggest competitions first. So a
bundle of 20,000 runs holds at most that many places in the broker, and another team's runs are sent as soon
as one frees. It runs after runs are created, when a run is claimed or finished, after a re-grade and in the
watchdog; concurrent callers are serialized by a lock, and each run moves pending -> queued by a conditional
update, so it is sent once per dispatch (a second delivery is harmless anyway: see `run_claim`).

The watchdog brings back what is lost: a run `grading` on a process that stopped beating (workers.py), and a
run `queued` whose message never reached a worker (the filesystem broker deletes a message when a worker
fetches it, so a worker killed right then takes it along).
"""

import logging
from collections import Counter, deque
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q
from django.utils import timezone

from grading import queue
from grading.models import Run, Submission
from grading.selectors import submission_folder
from grading.services.workers import worker_name, workers_alive

logger = logging.getLogger(__name__)
R = Run.Status
MAX_RUN_ATTEMPTS = 3
# Any constant: the key of the PostgreSQL advisory lock that serializes dispatchers.
_DISPATCH_LOCK = 0x6D6C6570


def queue_order(runs: list[Run], root: Path) -> list[int]:
    """Run ids in the order their grading is queued: biggest competitions first, each one's seeds together.

    With several workers the submission is done when the last run is: a big file queued last keeps one worker
    busy while the others wait, so the largest submissions go first and the small ones fill in at the end.
    The seeds of a competition stay next to each other, so a worker often finds its answers still loaded.
    """
    sizes: dict[int, int] = {}
    for run in runs:
        try:
            size = (root / run.submission_file).stat().st_size if run.submission_file else 0
        except OSError:  # its grading will say what is wrong with the file; the order only needs a number
            size = 0
        sizes[run.competition_id] = max(sizes.get(run.competition_id, 0), size)
    ordered = sorted(runs, key=lambda run: (-sizes[run.competition_id], run.competition_id, run.seed, run.pk))
    return [run.pk for run in ordered]


def runs_rank(*, submission_id: int) -> None:
    """Record each run's place in `queue_order`, once per submission (dispatch does it when one is missing).

    Sizes are read from the unpacked bundle on this machine; where it is not here (remote storage), every file
    counts as empty and the order falls back to competition and seed.
    """
    runs = list(Run.objects.filter(submission_id=submission_id).only("pk", "competition_id", "seed", "submission_file"))
    root = submission_folder(Submission(pk=submission_id)) / "bundle"
    rank = {pk: place for place, pk in enumerate(queue_order(runs, root))}
    for run in runs:
        run.queue_rank = rank[run.pk]
    Run.objects.bulk_update(runs, ["queue_rank"], batch_size=500)


def runs_dispatch() -> list[int]:
    """Send the next runs, fairly chosen, until GRADING_MAX_QUEUED are queued; returns the ids sent.

    Call it outside a transaction, or from `transaction.on_commit`: the runs it sends must be visible to the
    worker that claims them, and it takes a lock that a long transaction would hold.
    """
    limit = settings.GRADING_MAX_QUEUED
    if Run.objects.filter(status=R.QUEUED).count() >= limit:
        return []
    with transaction.atomic():
        _dispatch_lock()
        free = limit - Run.objects.filter(status=R.QUEUED).count()
        if free <= 0:
            return []
        now = timezone.now()
        # Each gets its own time, in the order sent: runs_resend_lost reads the broker's order from it.
        sent = [
            pk
            for place, pk in enumerate(_fair_picks(free))
            if Run.objects.filter(pk=pk, status=R.PENDING).update(
                status=R.QUEUED, queued_at=now + timedelta(microseconds=place)
            )
        ]
        if sent:
            transaction.on_commit(partial(_send, sent))
    return sent


def _dispatch_lock() -> None:
    """One dispatcher at a time, so two cannot both fill the last free places. SQLite needs no lock: its
    transactions begin IMMEDIATE (settings), which already lets one writer in at a time."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_DISPATCH_LOCK])


def _fair_picks(free: int) -> list[int]:
    """Up to `free` pending runs of grading submissions: the team with the fewest runs queued or grading first
    (between equals, the one whose last run was sent longest ago, then the one waiting longest), then the
    team's oldest submission, then the submission's queue order."""
    busy: Counter = Counter()
    last_sent: dict[int, float] = {}
    for team_id, count, latest in (
        Run.objects.filter(status__in=(R.QUEUED, R.GRADING))
        .order_by()
        .values_list("submission__team_id")
        .annotate(count=Count("pk"), latest=Max("queued_at"))
    ):
        busy[team_id], last_sent[team_id] = count, latest.timestamp() if latest else 0.0
    waiting = list(
        Submission.objects.filter(status=Submission.Status.GRADING)
        .filter(Exists(Run.objects.filter(submission=OuterRef("pk"), status=R.PENDING)))
        .order_by("created_at", "pk")
        .values_list("pk", "team_id")
    )
    age = {submission_id: place for place, (submission_id, _) in enumerate(waiting)}
    by_team: dict[int, deque[int]] = {}
    for submission_id, team_id in waiting:
        by_team.setdefault(team_id, deque()).append(submission_id)
    upcoming: dict[int, deque[int]] = {}
    picks: list[int] = []
    clock = timezone.now().timestamp()
    while len(picks) < free and by_team:
        team = min(by_team, key=lambda t: (busy[t], last_sent.get(t, 0.0), age[by_team[t][0]]))
        submission_id = by_team[team][0]
        if submission_id not in upcoming:
            upcoming[submission_id] = deque(_next_runs(submission_id, free))
        if not upcoming[submission_id]:
            by_team[team].popleft()
            if not by_team[team]:
                del by_team[team]
            continue
        picks.append(upcoming[submission_id].popleft())
        busy[team] += 1
        clock += 1e-3
        last_sent[team] = clock
    return picks


def _next_runs(submission_id: int, count: int) -> list[int]:
    def pending() -> list[tuple[int, int | None]]:
        return list(
            Run.objects.filter(submission_id=submission_id, status=R.PENDING)
            .order_by(F("queue_rank").asc(nulls_first=True), "pk")
            .values_list("pk", "queue_rank")[:count]
        )

    rows = pending()
    if rows and rows[0][1] is None:
        runs_rank(submission_id=submission_id)
        rows = pending()
    return [pk for pk, _ in rows]


def _send(run_ids: list[int]) -> None:
    queue.grade_now(run_ids=run_ids)


def run_claim(*, run_id: int, redelivered: bool = False) -> bool:
    """Claim a run for this process; False when it is done or another process is grading it.

    A message for a pending run (sent before a re-grade reset it) is honoured too, and a run this very process
    had claimed is its own retry. A message the broker gave back (`redelivered`: the process that held it died
    before acknowledging it) takes over the run from that process; otherwise a run claimed by a dead process
    comes back through the watchdog.
    """
    me = worker_name()
    claimable = Q(status__in=(R.PENDING, R.QUEUED)) | Q(status=R.GRADING, worker=me)
    if redelivered:
        claimable |= Q(status=R.GRADING)
    return bool(
        Run.objects.filter(pk=run_id)
        .filter(claimable)
        .update(status=R.GRADING, worker=me, attempts=F("attempts") + 1, claimed_at=timezone.now())
    )


def run_release(*, run_id: int) -> bool:
    """Put a run this process claimed back in the queue (its task is retried after a passing failure)."""
    return bool(
        Run.objects.filter(pk=run_id, status=R.GRADING, worker=worker_name()).update(
            status=R.QUEUED, queued_at=timezone.now()
        )
    )


def runs_requeue_lost(*, now: datetime | None = None) -> tuple[int, list[tuple[int, int]]]:
    """Re-queue runs whose worker process stopped beating (or that outlived the hard time limit by a minute).
    Returns how many were re-queued, and (run id, attempts) of those lost MAX_RUN_ATTEMPTS times, which the
    pipeline gives up (pipeline.runs_requeue_lost)."""
    now = now or timezone.now()
    silent = now - timedelta(seconds=settings.WORKER_LOST_SECONDS)
    overdue = now - timedelta(seconds=settings.GRADING_HARD_TIME_LIMIT + 60)
    dead_worker = Q(claimed_at__lt=silent) & ~Q(worker="") & ~Q(worker__in=workers_alive(now=now))
    lost = Run.objects.filter(status=R.GRADING).filter(dead_worker | Q(claimed_at__lt=overdue))
    requeued = 0
    hopeless = []
    for run in lost.order_by("pk").only("pk", "attempts", "worker", "claimed_at"):
        if run.attempts >= MAX_RUN_ATTEMPTS:
            hopeless.append((run.pk, run.attempts))
        elif Run.objects.filter(pk=run.pk, status=R.GRADING, worker=run.worker, claimed_at=run.claimed_at).update(
            status=R.QUEUED, queued_at=timezone.now()
        ):
            logger.warning("run %s: worker %s lost while grading it; queued again", run.pk, run.worker or "?")
            transaction.on_commit(partial(_send, [run.pk]))
            requeued += 1
    return requeued, hopeless


def runs_resend_lost(*, now: datetime | None = None) -> tuple[int, int]:
    """Send again the queued runs whose message is gone; returns (resent, released).

    The broker hands messages out in order and a worker claims what it fetched at once (one message per free
    process), so a run still queued WORKER_LOST_SECONDS after a run queued later was claimed lost its message.
    Without such a witness a run is sent again after GRADING_RESEND_SECONDS. A second message is harmless.
    Queued runs of a submission that stopped grading (failed) are released to pending instead.
    """
    now = now or timezone.now()
    settle = now - timedelta(seconds=settings.WORKER_LOST_SECONDS)
    backstop = now - timedelta(seconds=settings.GRADING_RESEND_SECONDS)
    witness = (
        Run.objects.filter(claimed_at__gte=backstop, claimed_at__lt=settle)
        .filter(claimed_at__gte=F("queued_at"))
        .aggregate(latest=Max("queued_at"))["latest"]
    )
    stale = Q(queued_at__lt=backstop) | Q(queued_at__isnull=True)
    if witness is not None:
        stale |= Q(queued_at__lt=min(witness, settle))
    resent = released = 0
    rows = Run.objects.filter(status=R.QUEUED).filter(stale).order_by("queued_at", "pk")
    for pk, queued_at, submission_status in rows.values_list("pk", "queued_at", "submission__status"):
        still = Run.objects.filter(pk=pk, status=R.QUEUED, queued_at=queued_at)
        if submission_status != Submission.Status.GRADING:
            released += still.update(status=R.PENDING)
        elif still.update(queued_at=timezone.now()):
            logger.warning("run %s: queued since %s, not claimed; its message is sent again", pk, queued_at)
            transaction.on_commit(partial(_send, [pk]))
            resent += 1
    return resent, released
