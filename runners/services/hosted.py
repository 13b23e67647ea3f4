"""A team's hosted runs: asking for one, cancelling it (whole or one task), and its status from its tasks."""

import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from competitions.models import Benchmark, Competition
from competitions.selectors import current_benchmark
from grading.bundles.errors import BundleError
from grading.bundles.manifest import SCHEMA, parse_manifest
from grading.engine.tiers import SPLITS
from grading.models import Registration, Submission
from grading.services.registrations import registration_create
from portal.accounts.models import Team
from portal.quotas import QUOTA_WINDOW, daily_quota_full
from portal.refusals import Refused
from runners import envnames, queue
from runners.models import HostedRun, HostedTask
from runners.secrets import env_encrypt
from runners.services.fit import available_workers, queued_reason, unfit_message
from runners.services.transitions import hosted_run_transition, hosted_tasks_transition

# Docker's reference grammar, less the registry's host:port: path components of lowercase letters and digits
# joined by one '.', one or two '_' or any '-'s, separated by single '/'; an optional tag and digest. So no
# '..', no empty component, no leading or trailing separator.
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_{1,2}|-+)[a-z0-9]+)*"
IMAGE_PATTERN = re.compile(
    rf"{_COMPONENT}(?:/{_COMPONENT})*(:[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(@sha256:[0-9a-f]{{64}})?"
)
IMAGE_MAX_CHARS = 300
MAX_ENV = 50
MAX_ENV_VALUE = 8192
MAX_SEEDS = 10


class HostedRunRefused(Refused):
    """A request that cannot be run; by default a 400 for an invalid field."""

    def __init__(self, *, status: int = 400, code: str = "invalid", message: str, field: str = "") -> None:
        super().__init__(status=status, code=code, message=message, field=field)


@dataclass(frozen=True, kw_only=True)
class HostedRunRequest:
    """What a team asks for (SPEC section 6, hosted run POST body, plus optional descriptive fields)."""

    image: str
    split: str
    seeds: int
    time_limit_hours: float
    gpus_per_run: int = 0
    env: dict[str, str] = field(default_factory=dict)
    competitions: tuple[str, ...] = ()  # a part of the split only (a trial); the entry is then incomplete
    agent: dict[str, Any] = field(default_factory=dict)
    llms: tuple[str, ...] = ()
    notes: str = ""


def _refuse(field_name: str, message: str) -> HostedRunRefused:
    return HostedRunRefused(message=f"{field_name}: {message}", field=field_name)


def _validate(request: HostedRunRequest) -> None:
    if len(request.image or "") > IMAGE_MAX_CHARS or not IMAGE_PATTERN.fullmatch(request.image or ""):
        raise _refuse(
            "image",
            "must be an image reference such as 'my-agent:1.0' or 'team/agent:1.0' (lowercase name components "
            "separated by single '/', no '..', no empty component, optional tag and @sha256 digest)",
        )
    if request.split not in SPLITS:
        raise _refuse("split", f"must be one of {', '.join(SPLITS)}")
    if not 1 <= request.seeds <= MAX_SEEDS:
        raise _refuse("seeds", f"must be a whole number from 1 to {MAX_SEEDS}")
    if not 0 < request.time_limit_hours <= settings.HOSTED_MAX_HOURS:
        raise _refuse("time_limit_hours", f"must be more than 0 and at most {settings.HOSTED_MAX_HOURS} hours")
    if not 0 <= request.gpus_per_run <= settings.HOSTED_MAX_GPUS:
        raise _refuse("gpus_per_run", f"must be a whole number from 0 to {settings.HOSTED_MAX_GPUS}")
    if len(request.env) > MAX_ENV:
        raise _refuse("env", f"holds {len(request.env)} variables; at most {MAX_ENV} are passed")
    for name, value in request.env.items():
        if (why := envnames.refusal(name)) is not None:  # the worker strips these again
            raise _refuse(f"env.{name}", why)
        if not isinstance(value, str) or len(value) > MAX_ENV_VALUE or "\x00" in value:
            raise _refuse(f"env.{name}", f"must be text of at most {MAX_ENV_VALUE} characters")
    # The descriptive fields end up in the bundle's manifest: the manifest's own rules judge them now.
    name, _, tag = request.image.partition(":")
    try:
        parse_manifest(
            data={
                "schema": SCHEMA,
                "agent": {"name": name, "version": tag or "latest", **request.agent},
                "benchmark": {"split": request.split},
                "llms": list(request.llms),
                "notes": request.notes,
            }
        )
    except BundleError as exc:
        raise HostedRunRefused(
            message=exc.message.removeprefix("manifest.json: "), field=str(exc.details.get("key", ""))
        ) from None


def _competitions(request: HostedRunRequest, benchmark: Benchmark) -> list[Competition]:
    in_split = [
        c
        for c in Competition.objects.filter(benchmark=benchmark).select_related("pack").order_by("slug")
        if request.split in c.splits
    ]
    if request.competitions:
        known = {c.slug: c for c in in_split}
        unknown = [slug for slug in request.competitions if slug not in known]
        if unknown:
            raise _refuse("competitions", f"{', '.join(unknown[:5])} is not in the {request.split} split")
        in_split = [known[slug] for slug in dict.fromkeys(request.competitions)]
    if not in_split:
        raise _refuse("split", f"the {request.split} split has no competitions on this portal")
    without = [c.slug for c in in_split if not getattr(getattr(c, "pack", None), "public_archive_path", "")]
    if without:
        raise HostedRunRefused(
            status=409,
            code="no_public_data",
            message=f"{len(without)} competitions of the request have no public data on this portal "
            f"(e.g. {', '.join(without[:3])}); an operator imports their packs with a public folder.",
            field="competitions",
        )
    return in_split


def _check_quota(team: Team, user: User) -> None:
    """The team's daily quota, and the user's across all their teams (three teams do not make three quotas).
    Runs inside the caller's transaction, which holds the team's row lock; the user's is taken here, after it."""
    counted = HostedRun.objects.filter(created_at__gte=timezone.now() - QUOTA_WINDOW).exclude(
        Q(status=HostedRun.Status.FAILED) | Q(status=HostedRun.Status.CANCELLED, started_at__isnull=True)
    )
    has_user = getattr(user, "pk", None) is not None
    if has_user:
        User.objects.select_for_update().filter(pk=user.pk).first()
    full = daily_quota_full(
        setting="HOSTED_RUNS_DAILY_QUOTA",
        team_rows=counted.filter(team=team),
        user_rows=counted.filter(created_by_id=user.pk) if has_user else None,
    )
    if full is None:
        return
    who = f"{team.name} asked" if full.limit == "team" else f"You ({user.username}) asked, across all your teams,"
    raise HostedRunRefused(
        status=429,
        code="quota_exceeded",
        message=f"{who} for {full.used} hosted runs in the last 24 hours; the limit is {full.quota} per {full.limit} "
        f"({full.setting}): {full.when(closed='hosted runs are closed')}. Failed runs, and runs cancelled before any "
        "of their tasks started, do not count.",
    )


def _registration_for(
    *, team: Team, user: User, request: HostedRunRequest, competitions: list[Competition]
) -> Registration:
    """A hosted run registers itself (SPEC section 9): the agent as its manifest will name it, its competitions
    and seeds, the image's digest when the reference pins one. Its nonce heads each task's run.log."""
    name, _, tag = request.image.partition(":")
    agent = {"name": name, "version": tag or "latest", **request.agent}
    digest = re.search(r"@(sha256:[0-9a-f]{64})$", request.image)
    try:
        return registration_create(
            team=team,
            user=user,
            agent_name=str(agent["name"]),
            agent_version=str(agent["version"]),
            seeds=request.seeds,
            # The whole split by name; a trial's part of it by its competitions.
            split="" if request.competitions else request.split,
            competitions=[c.slug for c in competitions] if request.competitions else (),
            image=digest.group(1) if digest else "",
        )
    except Refused as exc:  # e.g. more seeds than BUNDLE_MAX_SEEDS: the run could not be held to them
        raise HostedRunRefused(status=exc.status, code=exc.code, message=exc.message, field=exc.field) from None


def hosted_run_create(*, team: Team, user: User, request: HostedRunRequest) -> HostedRun:
    """Record the request and queue one task per (competition, seed). Refused requests leave nothing."""
    _validate(request)
    benchmark = current_benchmark()
    if benchmark is None:
        raise HostedRunRefused(
            status=503, code="no_benchmark", message="No benchmark is loaded yet; an operator runs load_competitions."
        )
    competitions = _competitions(request, benchmark)
    workers = available_workers()
    if (unfit := unfit_message(gpus=request.gpus_per_run, workers=workers)) is not None:
        # It would wait in the queue for nothing: refused now, before the quota counts it.
        largest = max(worker.gpus for worker in workers)
        raise HostedRunRefused(
            status=409,
            code="does_not_fit",
            message=f"gpus_per_run: {unfit}: ask for at most {largest} GPUs per run, or an operator registers a "
            "worker with more. Nothing was started and the daily quota is untouched.",
            field="gpus_per_run",
        )
    reason = queued_reason(gpus=request.gpus_per_run, workers=workers)  # "" unless no worker is registered
    with transaction.atomic():
        Team.objects.select_for_update().filter(pk=team.pk).first()  # two requests cannot both take the last slot
        _check_quota(team, user)
        run = HostedRun.objects.create(
            team=team,
            created_by=user,
            benchmark=benchmark,
            image=request.image,
            split=request.split,
            seeds=request.seeds,
            time_limit_hours=request.time_limit_hours,
            gpus_per_run=request.gpus_per_run,
            agent=dict(request.agent),
            llms=list(request.llms),
            notes=request.notes,
            env_names=sorted(request.env),
            env_encrypted=env_encrypt(dict(request.env)),
            registration=_registration_for(team=team, user=user, request=request, competitions=competitions),
        )
        now = timezone.now()
        tasks = HostedTask.objects.bulk_create(
            HostedTask(hosted_run=run, competition=competition, seed=seed, queued_at=now, reason=reason)
            for seed in range(request.seeds)
            for competition in competitions
        )
        for task in tasks:
            queue.task_enqueue_after_commit(task_id=task.pk, attempt=task.attempt)
    return run


def hosted_task_cancel(*, task: HostedTask) -> bool:
    """Cancel one (competition, seed): a queued task at once, a running one when its worker next beats."""
    if task.status == HostedTask.Status.QUEUED:
        cancelled = hosted_tasks_transition(
            tasks=HostedTask.objects.filter(pk=task.pk),
            to=HostedTask.Status.CANCELLED,
            expected=(HostedTask.Status.QUEUED,),
            reason="cancelled by the team",
        )
        if cancelled:
            hosted_run_progress(hosted_run_id=task.hosted_run_id)
            return True
    return bool(HostedTask.objects.filter(pk=task.pk, status=HostedTask.Status.RUNNING).update(cancel_requested=True))


def hosted_run_cancel(*, hosted_run: HostedRun) -> int:
    """Cancel every task not yet ended, and the run itself: nothing is assembled or graded. Returns how many
    tasks it stopped or will stop."""
    with transaction.atomic():
        run = HostedRun.objects.select_for_update().get(pk=hosted_run.pk)
        if run.status in (*HostedRun.FINAL_STATUSES, HostedRun.Status.GRADING, HostedRun.Status.COLLECTING):
            return 0
        if run.started_at is None and run.tasks.filter(Q(started_at__isnull=False) | Q(attempt__gt=1)).exists():
            # A task was claimed a moment ago (its progress not recorded yet), or ran and was queued again: it
            # used a worker, so the run counts against the quota.
            HostedRun.objects.filter(pk=run.pk).update(started_at=timezone.now())
        queued = hosted_tasks_transition(
            tasks=HostedTask.objects.filter(hosted_run=run),
            to=HostedTask.Status.CANCELLED,
            expected=(HostedTask.Status.QUEUED,),
            reason="the hosted run was cancelled",
        )
        running = HostedTask.objects.filter(hosted_run=run, status=HostedTask.Status.RUNNING).update(
            cancel_requested=True
        )
        hosted_run_transition(hosted_run_id=run.pk, to=HostedRun.Status.CANCELLED, reason="cancelled by the team")
    return queued + running


# A task succeeded when its agent ran to its end or to the time limit and its worker collected what it left;
# the assembly then also asks that it left a submission file. A run with no successful task is never published.
SUCCEEDED = (HostedTask.Status.DONE, HostedTask.Status.TIMED_OUT)


def hosted_run_progress(*, hosted_run_id: int) -> None:
    """Move the run along after one of its tasks changed: running once one started; once every task ended,
    collecting (its bundle is then assembled, failed tasks counting as runs without a submission) when a task
    may have succeeded, failed with each task's reason when none did, or cancelled when every task was
    cancelled. The first start is recorded: a run cancelled before it costs no quota."""
    with transaction.atomic():
        run = HostedRun.objects.select_for_update().get(pk=hosted_run_id)
        if run.started_at is None and run.tasks.filter(started_at__isnull=False).exists():
            HostedRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=timezone.now())
        if run.status in (*HostedRun.FINAL_STATUSES, HostedRun.Status.GRADING, HostedRun.Status.COLLECTING):
            return
        statuses = list(run.tasks.values_list("status", flat=True))
        reason = ""
        if all(status in HostedTask.FINAL_STATUSES for status in statuses):
            if all(status == HostedTask.Status.CANCELLED for status in statuses):
                to, reason = HostedRun.Status.CANCELLED, "every task was cancelled"
            elif not run.tasks.filter(status__in=SUCCEEDED).exclude(archive_path="").exists():
                # No agent ran to its end with its output collected (an image the worker lacks, a sandbox that
                # did not start, a worker lost): a bundle of such runs would be published as a verified entry.
                to, reason = HostedRun.Status.FAILED, nothing_collected_reason(run)
            else:
                to = HostedRun.Status.COLLECTING
        elif run.tasks.filter(started_at__isnull=False).exists():
            to = HostedRun.Status.RUNNING
        else:
            return
        if to != run.status and hosted_run_transition(hosted_run_id=run.pk, to=to, reason=reason):
            if to == HostedRun.Status.COLLECTING:
                queue.assemble_after_commit(hosted_run_id=run.pk)


REASON_MAX_CHARS = 2000


def nothing_collected_reason(run: HostedRun, *, what: str = "no task left any output") -> str:
    """Why a run with no successful task is not published: a summary, then each task's status and reason (as
    many as fit), and what it costs the team (nothing)."""
    tasks = list(run.tasks.select_related("competition").order_by("competition__slug", "seed"))
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task.status] = counts.get(task.status, 0) + 1
    summary = ", ".join(f"{count} {status.replace('_', ' ')}" for status, count in sorted(counts.items()))
    head = f"nothing to grade: {what} ({summary} of {len(tasks)})"
    tail = ". Nothing was published; this run does not count against the daily quota."
    room = REASON_MAX_CHARS - len(head) - len(tail) - 2
    lines: list[str] = []
    for task in tasks:
        line = f"{task.competition.slug} seed {task.seed}: {task.status.replace('_', ' ')}"
        line += f" ({task.reason})" if task.reason else ""
        if len("; ".join([*lines, line])) > room:
            lines.append(f"and {len(tasks) - len(lines)} more on the run's page")
            break
        lines.append(line)
    return f"{head}: {'; '.join(lines)}{tail}"[:REASON_MAX_CHARS]


def hosted_run_graded(*, hosted_run_id: int) -> bool:
    """Its submission reached a final status: the hosted run is done (the submission says how it went)."""
    return hosted_run_transition(
        hosted_run_id=hosted_run_id, to=HostedRun.Status.DONE, expected=(HostedRun.Status.GRADING,)
    )


def submission_status_changed_receiver(*, submission_id: int, status: str, **_: Any) -> None:
    """Grading says a submission moved (grading.signals): the hosted run it came from is done once it is final.
    In the transaction of the move, so the two commit together; the watchdog's pass is only a safety net."""
    if status not in Submission.SETTLED_STATUSES:
        return
    for hosted_run_id in HostedRun.objects.filter(
        submission_id=submission_id, status=HostedRun.Status.GRADING
    ).values_list("pk", flat=True):
        hosted_run_graded(hosted_run_id=hosted_run_id)
