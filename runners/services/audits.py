"""Random audits of self-run entries (SPEC section 9, README "Audits").

On upload (grading.signals.submission_received, inside intake's transaction) an entry gets its Audit: k of its
bundle's competitions chosen from the board history's head and the submission's id (grading/audit_choice.py),
re-run with AUDIT_SEEDS seeds each on the hosted workers as the tasks of a hosted run that names the audit.
That run costs the team no quota, is not listed among the team's hosted runs, and its tasks wait below every
team's: a worker's claim of an audit task is refused while a team's task that could run on that worker waits
(runners/services/workers.py), and its queue messages go at the broker's lowest priority.

When its tasks end, the audit's runs are graded here (not assembled into an entry), and once the entry's own
grading has settled the two are compared (grading/audit_test.py). A disagreement is a blocking `audit` flag
with both sets of numbers; a pass lets a registered entry with complete logs reach `audited`.
"""

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import transaction
from django.utils import timezone

from competitions.models import Competition
from grading.audit_choice import audit_choice, audit_seed
from grading.audit_test import audit_compare
from grading.bundles.archive import extract_archive
from grading.bundles.errors import BundleError
from grading.checks.base import FlagData
from grading.engine.tiers import tiers_of_split
from grading.models import Audit, Flag, Run, Submission
from grading.selectors import tier_members
from grading.services.audits import audit_transition
from grading.services.finish import flag_fingerprint
from grading.services.grade_file import grade_file
from grading.services.publication import submission_publish_if_ready
from grading.services.submissions import submission_transition
from leaderboard.history import board_head
from runners import queue
from runners.models import HostedRun, HostedTask
from runners.services.fit import available_workers, queued_reason, unfit_message
from runners.services.transitions import hosted_run_transition

logger = logging.getLogger(__name__)
A = Audit.Status
FLAG_CODE, FLAG_KEY = "audit", "disagrees"
NO_IMAGE = (
    "the manifest names no agent image (agent.image), so the portal's hosted workers have nothing to re-run; "
    "name a hosted-runnable image in the next upload to be audited"
)


def _gpus_asked(manifest: dict[str, Any]) -> int:
    gpus = (manifest.get("hardware") or {}).get("gpus") if isinstance(manifest.get("hardware"), dict) else None
    if not isinstance(gpus, list):
        return 0
    return sum(g.get("count", 0) for g in gpus if isinstance(g, dict) and isinstance(g.get("count"), int))


def could_not_run(*, audit_id: int, reason: str) -> bool:
    """The audit ends without a result: the entry stays at its lower level and its page says why."""
    return audit_transition(audit_id=audit_id, to=A.COULD_NOT_RUN, reason=reason[:2000])


def audit_create(*, submission_id: int, **_: Any) -> Audit | None:
    """Choose and queue an uploaded entry's audit (the receiver of grading.signals.submission_received, inside
    intake's transaction). Entries run by the portal or imported are not audited."""
    submission = Submission.objects.select_related("team", "benchmark").get(pk=submission_id)
    if submission.origin != Submission.Origin.UPLOAD:
        return None
    head = board_head()
    seed = audit_seed(head_hash=head.hash, submission_id=submission.pk)
    candidates = sorted(set(Run.objects.filter(submission=submission).values_list("competition__slug", flat=True)))
    chosen = audit_choice(seed=seed, candidates=candidates, k=settings.AUDIT_COMPETITIONS)
    found = submission.manifest.get("agent")
    agent: dict[str, Any] = found if isinstance(found, dict) else {}
    image = str(agent.get("image") or "")
    audit = Audit.objects.create(
        submission=submission,
        image=image,
        head_seq=head.seq,
        head_hash=head.hash,
        seed=seed,
        candidates=candidates,
        competitions=chosen,
        seeds=settings.AUDIT_SEEDS,
    )
    if not image:
        could_not_run(audit_id=audit.pk, reason=NO_IMAGE)
        return audit
    if not chosen:
        could_not_run(audit_id=audit.pk, reason="no competition to audit (AUDIT_COMPETITIONS is 0 on this portal)")
        return audit
    gpus = _gpus_asked(submission.manifest)
    workers = available_workers()
    unfit = (
        f"the manifest declares {gpus} GPUs per run, more than a hosted run may have ({settings.HOSTED_MAX_GPUS})"
        if gpus > settings.HOSTED_MAX_GPUS
        else unfit_message(gpus=gpus, workers=workers)
    )
    if unfit is not None:
        could_not_run(audit_id=audit.pk, reason=f"no worker able to run it: {unfit}")
        return audit
    runtime = submission.manifest.get("runtime_hours")
    limit = float(min(settings.AUDIT_TIME_LIMIT_HOURS, settings.HOSTED_MAX_HOURS))
    if isinstance(runtime, int | float) and not isinstance(runtime, bool) and runtime > 0:
        limit = min(limit, max(float(runtime) * 2, 0.25))  # twice what the team's runs took, at least 15 min
    image_name, _colon, tag = image.partition(":")
    run = HostedRun.objects.create(
        team=submission.team,
        created_by=None,
        benchmark=submission.benchmark,
        image=image,
        split=submission.split,
        seeds=settings.AUDIT_SEEDS,
        time_limit_hours=limit,
        gpus_per_run=gpus,
        agent={"name": str(agent.get("name") or image_name), "version": str(agent.get("version") or tag or "latest")},
        notes=f"random audit of submission {submission.pk}",
        audit=audit,
    )
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=submission.benchmark, slug__in=chosen)}
    now = timezone.now()
    reason = queued_reason(gpus=gpus, workers=workers)
    tasks = HostedTask.objects.bulk_create(
        HostedTask(hosted_run=run, competition=competitions[slug], seed=seed_number, queued_at=now, reason=reason)
        for slug in chosen
        for seed_number in range(settings.AUDIT_SEEDS)
    )
    for task in tasks:
        queue.task_enqueue_after_commit(task_id=task.pk, attempt=task.attempt, audit=True)
    return audit


def audit_follow(*, hosted_run: HostedRun, to: str, reason: str) -> None:
    """Its hosted run moved: running once a task started; failed or cancelled ends the audit as could not run."""
    if hosted_run.audit_id is None:
        return
    if to == HostedRun.Status.RUNNING:
        audit_transition(audit_id=hosted_run.audit_id, to=A.RUNNING)
    elif to in (HostedRun.Status.FAILED, HostedRun.Status.CANCELLED):
        could_not_run(audit_id=hosted_run.audit_id, reason=f"its re-runs on the hosted workers ended {to}: {reason}")


def _collected_submission(task: HostedTask, scratch: Path) -> Path | None:
    """The submission.csv the task's worker collected, unpacked with the bundle reader's safety checks."""
    archive = scratch / "collected.tar.gz"
    with storages["private"].open(task.archive_path, "rb") as source, archive.open("wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)
    try:
        extracted = extract_archive(archive=archive, target=scratch / "out")
    except BundleError as exc:
        logger.warning("audit task %s: its collected archive is unusable: %s", task.pk, exc)
        return None
    found = extracted.root / "submission" / "submission.csv"
    return found if found.is_file() else None


def _grade_task(task: HostedTask) -> dict[str, Any]:
    row: dict[str, Any] = {
        "competition": task.competition.slug,
        "seed": task.seed,
        "task": task.pk,
        "status": task.status,
        "score": None,
        "valid": False,
        "lower_is_better": task.competition.is_lower_better,
        "elapsed_seconds": task.elapsed_seconds,
        "reason": task.reason,
    }
    if not task.archive_path:
        row["reason"] = task.reason or "nothing was collected"
        return row
    with tempfile.TemporaryDirectory(prefix=f"audit-{task.pk}-") as scratch:
        path = _collected_submission(task, Path(scratch))
        if path is None:
            row["reason"] = "the agent left no submission/submission.csv"
            return row
        try:
            report = grade_file(competition=task.competition, submission_path=path, display_path="submission.csv")
        except Exception as exc:  # noqa: BLE001 - one ungradable run is the audit's finding, not a crash
            logger.warning("audit task %s: not graded: %s", task.pk, exc)
            row["reason"] = f"the portal could not grade it: {type(exc).__name__}"
            return row
    row.update(
        score=report.score if report.valid_submission else None,
        valid=report.valid_submission,
        lower_is_better=report.is_lower_better,
        reason=report.reason or "",
    )
    return row


def audit_grade(*, hosted_run: HostedRun) -> None:
    """Grade what the audit's tasks left (the assembly's step for an audit's hosted run), then compare."""
    assert hosted_run.audit_id is not None
    tasks = list(hosted_run.tasks.select_related("competition__pack").order_by("competition__slug", "seed"))
    try:
        runs = [_grade_task(task) for task in tasks]
    except Exception as exc:
        logger.exception("audit %s: grading its runs failed", hosted_run.audit_id)
        could_not_run(audit_id=hosted_run.audit_id, reason=f"the portal could not grade the audit's runs: {exc}")
        hosted_run_transition(hosted_run_id=hosted_run.pk, to=HostedRun.Status.FAILED, reason=str(exc)[:500])
        return
    with transaction.atomic():
        audit_transition(audit_id=hosted_run.audit_id, to=A.GRADED, runs=runs)
        hosted_run_transition(hosted_run_id=hosted_run.pk, to=HostedRun.Status.DONE, reason="audit graded")
    for name in [t.archive_path for t in tasks if t.archive_path]:
        try:
            storages["private"].delete(name)
        except OSError:
            pass
    audit_compare_if_ready(audit_id=hosted_run.audit_id)


def audit_compare_if_ready(*, audit_id: int) -> str | None:
    """Compare once both sides are in: the audit graded and the entry's own grading settled (in review or
    published). Returns the audit's new status, or None when it waits or was compared already."""
    with transaction.atomic():
        audit = Audit.objects.select_for_update().select_related("submission").filter(pk=audit_id).first()
        if audit is None or audit.status != A.GRADED:
            return None
        submission = audit.submission
        if submission.status not in (Submission.Status.IN_REVIEW, Submission.Status.PUBLISHED):
            return None
        verdicts = _verdicts(audit)
        disagreeing = [v for v in verdicts if v["disagrees"]]
        test = {
            "alpha": settings.AUDIT_ALPHA_PERMILLE / 1000,
            "tolerance": settings.AUDIT_TOLERANCE_PERMILLE / 1000,
            "rule": "per competition, disagrees when the bundle's mean beats the audit's by more than "
            "max(t(1-alpha; n_a+n_b-2) * pooled sd * sqrt(1/n_a+1/n_b), tolerance * max(|means|))",
        }
        status = A.DISAGREES if disagreeing else A.PASSED
        reason = (
            "; ".join(f"{v['competition']}: {v['why']}" for v in disagreeing)
            if disagreeing
            else f"the re-runs agree with the bundle on {', '.join(v['competition'] for v in verdicts)}"
        )
        audit_transition(
            audit_id=audit.pk, to=status, reason=reason[:2000], comparison={"test": test, "competitions": verdicts}
        )
        if disagreeing:
            _flag(audit=audit, verdicts=disagreeing, test=test)
            if submission.status == Submission.Status.PUBLISHED:
                submission_transition(
                    submission_id=submission.pk,
                    to=Submission.Status.IN_REVIEW,
                    expected=(Submission.Status.PUBLISHED,),
                    reason="its random audit disagrees with its numbers",
                )
        # Stores comparability (the flag now counts), says why it is held, or has the board recompute its level.
        submission_publish_if_ready(submission_id=submission.pk)
    logger.info("audit %s of submission %s: %s", audit.pk, audit.submission_id, status)
    return status


def _verdicts(audit: Audit) -> list[dict[str, Any]]:
    bundle: dict[str, list[float]] = {slug: [] for slug in audit.competitions}
    for slug, score in Run.objects.filter(
        submission_id=audit.submission_id,
        competition__slug__in=audit.competitions,
        outside_registration=False,
        grading_error="",
        valid_submission=True,
        score__isnull=False,
    ).values_list("competition__slug", "score"):
        if score is not None:
            bundle[slug].append(score)
    lower = dict(
        Competition.objects.filter(benchmark_id=audit.submission.benchmark_id, slug__in=audit.competitions).values_list(
            "slug", "is_lower_better"
        )
    )
    ran: dict[str, list[float]] = {slug: [] for slug in audit.competitions}
    for row in audit.runs:
        if row.get("valid") and isinstance(row.get("score"), int | float) and row["competition"] in ran:
            ran[row["competition"]].append(float(row["score"]))
            if row.get("lower_is_better") is not None:
                lower[row["competition"]] = row["lower_is_better"]
    return [
        audit_compare(
            competition=slug,
            bundle=bundle[slug],
            audit=ran[slug],
            lower_is_better=bool(lower.get(slug)),
            alpha=settings.AUDIT_ALPHA_PERMILLE / 1000,
            tolerance=settings.AUDIT_TOLERANCE_PERMILLE / 1000,
        ).as_dict()
        for slug in audit.competitions
    ]


def _flag(*, audit: Audit, verdicts: list[dict[str, Any]], test: dict[str, Any]) -> None:
    members = tier_members(benchmark_id=audit.submission.benchmark_id, tiers=tiers_of_split(audit.submission.split))
    wanted = {v["competition"] for v in verdicts}
    tiers = [tier for tier, slugs in members.items() if wanted & set(slugs)]
    message = (
        f"The portal re-ran the agent image {audit.image} on {len(audit.competitions)} competitions chosen at "
        f"random ({', '.join(audit.competitions)}); on {', '.join(v['competition'] for v in verdicts)} the "
        "bundle's scores are better than the re-runs reach by more than the spread between seeds allows."
    )
    evidence = {"image": audit.image, "test": test, "competitions": verdicts, "audit_runs": audit.runs}
    data = FlagData(
        code=FLAG_CODE, key=FLAG_KEY, severity=Flag.Severity.BLOCKING, tiers=tiers, message=message, evidence=evidence
    )
    Flag.objects.update_or_create(
        submission_id=audit.submission_id,
        code=FLAG_CODE,
        key=FLAG_KEY,
        defaults={
            "severity": data.severity,
            "tiers": data.tiers,
            "message": data.message,
            "evidence": data.evidence,
            "fingerprint": flag_fingerprint(data),
        },
    )


def submission_settled_receiver(*, submission_id: int, status: str, **_: Any) -> None:
    """The entry's own grading settled: compare with its audit if that is graded already (after the commit)."""
    if status not in (Submission.Status.IN_REVIEW, Submission.Status.PUBLISHED):
        return
    graded = Audit.objects.filter(submission_id=submission_id).exclude(status__in=Audit.FINAL_STATUSES)
    audit_id = graded.values_list("pk", flat=True).first()
    if audit_id is not None:
        transaction.on_commit(lambda: audit_compare_if_ready(audit_id=audit_id))
