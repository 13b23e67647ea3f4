"""A finished hosted run becomes a run bundle, and that bundle a submission, exactly like an upload.

The bundle holds one run folder per task (what its worker collected: submission/, logs/, code/, run.log),
runs/<group>/metadata.json with each run's seed, and a manifest whose runtime and hardware are what the
portal measured and gave, not what anyone declared. Intake then validates it as it would an upload and
the submission goes through the same grading and checks, marked hosted.
"""

import json
import logging
import shutil
import tarfile
import tempfile
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import transaction
from django.db.models import Q

from grading.bundles.archive import extract_archive
from grading.bundles.errors import BundleError
from grading.services.intake import submission_create_hosted
from grading.services.submissions import SubmissionRefused
from runners.models import GpuWorker, HostedRun, HostedTask
from runners.redaction import redact_tree, secret_values
from runners.secrets import env_decrypt
from runners.services.fit import task_cpus, task_memory_gb
from runners.services.hosted import SUCCEEDED, nothing_collected_reason
from runners.services.transitions import hosted_run_transition

logger = logging.getLogger(__name__)
# Ids of hosted runs' folders are fixed per task, so assembling a run twice gives the same bundle.
RUN_ID_NAMESPACE = uuid.UUID("4f7d1f6e-3c39-4c4b-9a59-6f1f2c3c9e10")
COLLECTED = ("submission", "logs", "code", "run.log")
NO_SUBMISSION = "it left no /home/submission/submission.csv"


def run_group_name(hosted_run: HostedRun) -> str:
    return f"hosted-run-{hosted_run.pk}"


def run_id_for(task: HostedTask) -> str:
    return f"{task.competition.slug}_{uuid.uuid5(RUN_ID_NAMESPACE, f'{task.hosted_run_id}/{task.pk}')}"


def hosted_manifest(*, hosted_run: HostedRun, tasks: list[HostedTask]) -> dict[str, Any]:
    benchmark = hosted_run.benchmark
    workers = list(GpuWorker.objects.filter(pk__in={t.worker_id for t in tasks if t.worker_id}))
    name, _, tag = hosted_run.image.partition(":")
    agent = {"name": name, "version": tag or "latest", **hosted_run.agent}
    elapsed = [t.elapsed_seconds for t in tasks if t.elapsed_seconds is not None]
    hardware: dict[str, Any] = {}
    if workers:
        smallest = min(workers, key=lambda w: (task_cpus(w), task_memory_gb(w)))
        hardware = {"vcpus": max(1, int(task_cpus(smallest))), "ram_gb": task_memory_gb(smallest)}
        if hosted_run.gpus_per_run:
            models = sorted({(w.gpu_model or "unknown GPU", w.gpu_memory_gb) for w in workers})
            hardware["gpus"] = [
                {"model": model, "count": hosted_run.gpus_per_run, **({"memory_gb": memory} if memory else {})}
                for model, memory in models
            ]
        else:
            hardware["gpus"] = []
    return {
        "schema": "bundle-v1",
        "agent": agent,
        "llms": list(hosted_run.llms),
        "benchmark": {
            "name": benchmark.name,
            "version": benchmark.version,
            "commit": benchmark.commit,
            "split": hosted_run.split,
        },
        "seeds": hosted_run.seeds,
        # Measured: the longest run's wall time, not the limit asked for.
        "runtime_hours": round(max(elapsed) / 3600, 6) if elapsed else 0,
        "hardware": hardware,
        "internet_access": settings.HOSTED_ALLOW_NETWORK,
        # By construction: the agent's only oracle was the format check, nobody intervened.
        "disclosures": {"test_set_feedback": False, "human_assistance": False},
        "notes": hosted_run.notes,
        # The registration the run made for itself: every (competition, seed) of it counts (SPEC section 9).
        **({"registration": hosted_run.registration_id} if hosted_run.registration_id else {}),
        "hosted_run": {
            "id": hosted_run.pk,
            "image": hosted_run.image,
            "time_limit_hours": hosted_run.time_limit_hours,
            "gpus_per_run": hosted_run.gpus_per_run,
            "workers": sorted(w.name for w in workers),
            "tasks": {run_id_for(t): {"status": t.status, "reason": t.reason} for t in tasks},
        },
    }


def _write_bundle(*, hosted_run: HostedRun, tasks: list[HostedTask], root: Path) -> set[int]:
    """Write the bundle under root; the ids of the tasks that succeeded: their agent ran to its end (or to the
    time limit), and what it left unpacked and holds a submission file."""
    group = root / "runs" / run_group_name(hosted_run)
    group.mkdir(parents=True)
    metadata_runs = {}
    succeeded: set[int] = set()
    for task in tasks:
        run_id = run_id_for(task)
        folder = group / run_id
        folder.mkdir()
        unpacked = bool(task.archive_path) and _unpack_collected(task=task, into=folder)
        _write_format_checks(task=task, into=folder)
        _write_nonce_log(task=task, into=folder)
        made = (folder / "submission" / "submission.csv").is_file()
        if unpacked and made and task.status in SUCCEEDED:
            succeeded.add(task.pk)
        metadata_runs[run_id] = {"seed": task.seed, "success": made and task.status == HostedTask.Status.DONE}
    (group / "metadata.json").write_text(
        json.dumps(
            {
                "run_group": run_group_name(hosted_run),
                "created_at": hosted_run.created_at.isoformat(),
                "runs": metadata_runs,
            },
            indent=2,
        )
    )
    (root / "manifest.json").write_text(json.dumps(hosted_manifest(hosted_run=hosted_run, tasks=tasks), indent=2))
    return succeeded


def _write_nonce_log(*, task: HostedTask, into: Path) -> None:
    """A task that left no run.log (it never started, or its archive was unusable) is still one of the
    registered runs, a failed one: its run.log is the portal's, the nonce first and why nothing is there."""
    registration = task.hosted_run.registration
    if registration is None or (into / "run.log").exists():
        return
    why = f"[the portal collected no output of this run: {task.status}{': ' + task.reason if task.reason else ''}]"
    (into / "run.log").write_text(f"{registration.nonce}\n{why}\n")


def _write_format_checks(*, task: HostedTask, into: Path) -> None:
    """Every format check the portal answered for this task's last attempt, beside the collected folders
    (grading/checks/format_checks.py counts them): the portal's record, not the agent's."""
    calls = task.format_checks.filter(attempt=task.attempt).order_by("at", "pk")
    lines = [
        json.dumps({"at": call.at.isoformat(), "valid": call.valid, "reason": call.reason or None, "bytes": call.bytes})
        for call in calls
    ]
    (into / "format_checks.jsonl").write_text("".join(line + "\n" for line in lines))


def _unpack_collected(*, task: HostedTask, into: Path) -> bool:
    """Only the collected folders and run.log are kept, with the bundle reader's safety checks (no links,
    no paths outside, size limits)."""
    with tempfile.TemporaryDirectory(dir=into.parent) as scratch:
        archive = Path(scratch) / "collected.tar.gz"
        with storages["private"].open(task.archive_path, "rb") as source, archive.open("wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        try:
            extracted = extract_archive(archive=archive, target=Path(scratch) / "out")
        except BundleError as exc:
            logger.warning("task %s: its collected archive is unusable: %s", task.pk, exc)
            return False
        for name in COLLECTED:
            found = extracted.root / name
            if found.exists():
                shutil.move(str(found), str(into / name))
    # The worker blanked the team's secrets in what it sent; this holds even if a worker did not.
    env = env_decrypt(task.hosted_run.env_encrypted)
    redact_tree([into], secret_values(env, env))
    return True


def hosted_run_assemble(*, hosted_run_id: int) -> HostedRun:
    """Build the bundle and hand it to intake. Claimed by a conditional update, so a second delivery of the
    message does nothing; a bundle intake refuses fails the run with intake's reason."""
    claimed = hosted_run_transition(
        hosted_run_id=hosted_run_id,
        to=HostedRun.Status.GRADING,
        reason="assembling the bundle",
        where=Q(submission__isnull=True),
    )
    run = HostedRun.objects.select_related("team", "benchmark", "created_by", "registration").get(pk=hosted_run_id)
    if not claimed:
        return run
    try:
        return _assemble(run)
    except Exception as exc:
        # Not the team's doing (storage, a bug): the run ends failed with the reason rather than hang in grading.
        logger.exception("hosted run %s: the assembly failed", run.pk)
        _assembly_failed(run, f"the portal could not assemble the bundle: {exc}")
        run.refresh_from_db()
        return run


def _assembly_failed(run: HostedRun, reason: str) -> None:
    """The run the assembly claimed ends failed, unless it became a submission meanwhile."""
    hosted_run_transition(
        hosted_run_id=run.pk,
        to=HostedRun.Status.FAILED,
        reason=reason,
        expected=(HostedRun.Status.GRADING,),
        where=Q(submission__isnull=True),
    )


def _assemble(run: HostedRun) -> HostedRun:
    tasks = list(
        run.tasks.select_related("competition", "hosted_run__registration").order_by("competition__slug", "seed")
    )
    with tempfile.TemporaryDirectory(prefix=f"hosted-{run.pk}-") as scratch:
        root = Path(scratch) / "bundle"
        if not _write_bundle(hosted_run=run, tasks=tasks, root=root):
            # No agent left a submission (it exited at once, timed out before writing one, its archive was
            # unusable): runs without one are not published as a verified entry, and cost no quota.
            for task in tasks:
                if task.status in SUCCEEDED:
                    HostedTask.objects.filter(pk=task.pk).update(
                        reason=f"{task.reason}; {NO_SUBMISSION}" if task.reason else NO_SUBMISSION
                    )
            _assembly_failed(run, nothing_collected_reason(run, what="no task left a submission"))
            run.refresh_from_db()
            return run
        archive = Path(scratch) / "bundle.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for path in sorted(root.rglob("*")):
                tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
        try:
            with transaction.atomic():
                submission = submission_create_hosted(team=run.team, user=run.created_by, archive=archive)
                HostedRun.objects.filter(pk=run.pk).update(submission=submission, status_reason="")
        except SubmissionRefused as exc:
            _assembly_failed(run, f"what the runs left is not a valid bundle: {exc.message}")
            logger.warning("hosted run %s: bundle refused: %s", run.pk, exc.message)
            run.refresh_from_db()
            return run
    hosted_files_delete(hosted_run=run)
    run.refresh_from_db()
    logger.info("hosted run %s became submission %s", run.pk, run.submission_id)
    return run


def hosted_files_delete(*, hosted_run: HostedRun) -> None:
    """The collected archives, once they are inside the submission's bundle."""
    for name in hosted_run.tasks.exclude(archive_path="").values_list("archive_path", flat=True):
        try:
            storages["private"].delete(name)
        except OSError:
            pass
    shutil.rmtree(Path(settings.PRIVATE_ROOT) / "hosted" / str(hosted_run.pk), ignore_errors=True)
