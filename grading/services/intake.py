"""Intake of an uploaded bundle: everything in it is read and validated once, here, before any row exists.

The archive is unpacked safely, the manifest, layout, seeds and the team's own reports are read, and the
number of runs is checked; only then is the archive stored (in remote private storage, outside any lock)
and are the submission and its runs (with their seeds and the team's claims) written, in one transaction.
A bad bundle is a 400 that leaves no row and no file; a failure after the store removes the stored archive.
Nothing that happens after the 202 depends on reading the bundle's files again, except grading each
submission.csv.
"""

import logging
import shutil
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from competitions.models import Benchmark, Competition, CompetitionPack
from competitions.selectors import current_benchmark
from grading import queue
from grading.bundles.bundle import Bundle, read_bundle
from grading.bundles.errors import BundleError
from grading.bundles.limits import Limits
from grading.models import Registration, Run, Submission, Withdrawal
from grading.services import scheduling
from grading.services.submissions import (
    SubmissionRefused,
    private_storage_is_remote,
    quota_counted,
    submission_folder,
)
from portal.accounts.models import Team
from portal.private_files import private_opener
from portal.quotas import daily_quota_full

logger = logging.getLogger(__name__)

# Packs imported before the honest bound was recorded fall back to this many times their answers file.
LEGACY_ANSWERS_FACTOR = 2


def _submission_limits(benchmark: Benchmark) -> dict[str, int]:
    """The largest submission.csv accepted per competition slug: the largest size an honest submission to
    it can reach (rows x the widest honest row, recorded at pack import: h-and-m's twelve articles for
    each of 1.37 M customers, icecube's 13 M rows), and never less than BUNDLE_MAX_SUBMISSION_BYTES."""
    floor = settings.BUNDLE_MAX_SUBMISSION_BYTES
    sizes = CompetitionPack.objects.filter(competition__benchmark=benchmark).values_list(
        "competition__slug", "max_submission_bytes", "answers_bytes"
    )
    return {
        slug: max(floor, honest if honest is not None else LEGACY_ANSWERS_FACTOR * (answers or 0))
        for slug, honest, answers in sizes
    }


def _limits(submission_limits: dict[str, int]) -> Limits:
    return Limits(
        max_total_bytes=settings.BUNDLE_MAX_UNPACKED_BYTES,
        max_member_bytes=max(settings.BUNDLE_MAX_SUBMISSION_BYTES, 64 * 1024**2, *submission_limits.values()),
        max_files=settings.BUNDLE_MAX_FILES,
    )


def _check_submission_sizes(bundle: Bundle, submission_limits: dict[str, int]) -> None:
    for run in bundle.layout.runs:
        limit = submission_limits.get(run.competition_id, settings.BUNDLE_MAX_SUBMISSION_BYTES)
        if run.submission is not None and run.submission.stat().st_size > limit:
            where = run.submission.relative_to(bundle.layout.root)
            raise BundleError(
                "submission_too_large",
                f"{where} is {run.submission.stat().st_size} bytes; a submission.csv for {run.competition_id} may "
                f"be at most {limit} bytes.",
                {"member": str(where), "limit": limit},
            )


def _check_run_count(bundle: Bundle, competitions: dict[str, Competition]) -> None:
    """A bundle holds at most BUNDLE_MAX_SEEDS runs per competition and its split's size times that in all:
    every run is a grading task, and one bundle must not fill the queue for everyone."""
    most = settings.BUNDLE_MAX_SEEDS
    split = bundle.manifest.benchmark.split
    split_size = sum(split in c.splits for c in competitions.values()) or len(competitions)
    runs = bundle.layout.runs
    if len(runs) > split_size * most:
        raise BundleError(
            "too_many_runs",
            f"the bundle holds {len(runs)} runs; a {split} bundle may hold at most {split_size * most} "
            f"({split_size} competitions x {most} seeds)",
            {"runs": len(runs), "limit": split_size * most},
        )
    per_competition = Counter(run.competition_id for run in runs)
    competition_id, count = max(per_competition.items(), key=lambda item: item[1], default=("", 0))
    if count > most:
        raise BundleError(
            "too_many_runs",
            f"the bundle holds {count} runs of {competition_id}; at most {most} seeds of one competition are graded",
            {"competition_id": competition_id, "runs": count, "limit": most},
        )


def _registration_named(bundle: Bundle, team: Team, origin: str) -> Registration | None:
    """The registration the manifest names, which must be the uploading team's (SPEC section 9). A hosted
    run's own registration is for the bundle the portal assembles from it only, whenever its tasks end."""
    wanted = bundle.manifest.registration
    if wanted is None:
        return None
    registration = Registration.objects.filter(pk=wanted, team=team).select_related("hosted_run").first()
    if registration is None:
        raise BundleError(
            "registration_unknown",
            f"manifest.json: 'registration' is {wanted}, which is not a registration of {team.name}; use the id "
            "that POST /api/v1/registrations/ (or mleportal register) gave your team, or leave the key out",
            {"key": "registration", "got": wanted},
        )
    withdrawal = registration.withdrawals.filter(status=Withdrawal.Status.ACCEPTED).first()
    if withdrawal is not None:
        raise BundleError(
            "registration_withdrawn",
            f"manifest.json: registration {wanted} was withdrawn (a maintainer accepted your team's request on "
            f"{withdrawal.decided_at:%Y-%m-%d}), so no bundle may claim its seeds. Register again (mleportal "
            "register) before running, and name the new registration",
            {"key": "registration", "got": wanted},
        )
    hosted_run = getattr(registration, "hosted_run", None)
    if hosted_run is not None:
        if origin != Submission.Origin.HOSTED or bundle.manifest.raw.get("hosted_run", {}).get("id") != hosted_run.pk:
            raise BundleError(
                "registration_hosted",
                f"manifest.json: registration {wanted} is hosted run {hosted_run.pk}'s own: the portal grades that "
                "run's bundle itself, and no uploaded bundle may claim its seeds. Register your self-run group "
                "(POST /api/v1/registrations/ or mleportal register) and name that registration, or leave the key "
                "out",
                {"key": "registration", "got": wanted, "hosted_run": hosted_run.pk},
            )
        return registration  # hosted tasks may end past the deadline: the portal ran them as registered
    if registration.deadline < timezone.now():
        # Past its deadline a registration is public and closed: no new bundle may claim its seeds.
        raise BundleError(
            "registration_expired",
            f"manifest.json: registration {wanted} closed on {registration.deadline:%Y-%m-%d %H:%M} UTC; its "
            "registered seeds count as failures. Register again (mleportal register) before running, and name "
            "the new registration",
            {"key": "registration", "got": wanted, "deadline": registration.deadline.isoformat()},
        )
    return registration


def _runs_for(submission: Submission, bundle: Bundle, competitions: dict[str, Competition]) -> list[Run]:
    seeds = {(s.run_group, s.run_id): s.seed for s in bundle.seeds}
    return [
        Run(
            submission=submission,
            competition=competitions[run.competition_id],
            seed=seeds[(run.run_group, run.run_id)],
            run_group=run.run_group,
            run_id=run.run_id,
            # Relative to the unpacked archive, which is what submission_bundle_root gives back later
            # (the layout's root may be one wrapping folder below it).
            submission_file=str(run.submission.relative_to(bundle.archive.root)) if run.submission else "",
            claimed=bundle.claims.by_run.get((run.run_group, run.run_id)),
        )
        for run in bundle.layout.runs
    ]


def _report_claims(bundle: Bundle) -> dict:
    return {
        "entries_per_competition": dict(bundle.claims.entries_per_competition),
        "problems": [
            {"file": found.file, "problems": list(found.problems), "total": found.total}
            for found in bundle.claims.problems
        ],
    }


def _replaced(*, team: Team, replaces_id: int | None) -> Submission | None:
    """The team's submission, in changes_requested, that a new upload replaces (a maintainer asked for it)."""
    if replaces_id is None:
        return None
    replaced = Submission.objects.filter(pk=replaces_id, team=team, status=Submission.Status.CHANGES_REQUESTED).first()
    if replaced is None:
        raise SubmissionRefused(
            status=400,
            code="invalid_replaces",
            message=f"replaces={replaces_id}: only a submission of your team whose changes a "
            "maintainer requested can be replaced.",
        )
    return replaced


def submission_create(*, team: Team, user: User, upload: UploadedFile, replaces_id: int | None = None) -> Submission:
    """Check quota, extract and validate the bundle, then record the submission and queue its pipeline.

    A refused bundle raises SubmissionRefused and leaves nothing: no row, no file.
    `replaces_id` names the team's submission in changes_requested that this upload replaces.
    """
    replaces = _replaced(team=team, replaces_id=replaces_id)
    size = upload.size
    assert size is not None, "Django's upload handlers always record an upload's size"
    if size > settings.BUNDLE_MAX_BYTES:
        raise SubmissionRefused(
            status=413,
            code="too_large",
            message=f"The bundle is {size} bytes; the limit is {settings.BUNDLE_MAX_BYTES}.",
        )
    _check_quota(team, user)
    return _intake(
        team=team,
        user=user,
        keep=lambda archive: _keep_upload(upload, archive),
        size=size,
        replaces=replaces,
        origin=Submission.Origin.UPLOAD,
    )


def submission_create_hosted(*, team: Team, user: User | None, archive: Path) -> Submission:
    """A bundle the portal assembled from a hosted run's collected folders (runners/services/assembly.py):
    the same validation, grading and checks as an upload, marked hosted, outside the upload quota (the
    hosted run counted against its own). The archive is moved into place."""
    return _intake(
        team=team,
        user=user,
        keep=lambda target: shutil.move(archive, target),
        size=archive.stat().st_size,
        replaces=None,
        origin=Submission.Origin.HOSTED,
    )


def _intake(
    *,
    team: Team,
    user: User | None,
    keep: Callable[[Path], object],
    size: int,
    replaces: Submission | None,
    origin: str,
) -> Submission:
    benchmark = current_benchmark()
    if benchmark is None:
        raise SubmissionRefused(
            status=503,
            code="no_benchmark",
            message="No benchmark is loaded on this portal yet; an operator runs load_competitions.",
        )
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark)}

    staging = Path(settings.PRIVATE_ROOT) / "submissions" / f"incoming-{uuid.uuid4().hex}"
    staging.mkdir(parents=True, mode=0o700)
    archive = staging / "bundle.archive"
    stored: str | None = None  # the archive's name in remote private storage
    final: Path | None = None
    try:
        keep(archive)
        submission_limits = _submission_limits(benchmark)
        try:
            bundle = read_bundle(
                archive=archive,
                target=staging / "bundle",
                known_competition_ids=competitions.keys(),
                limits=_limits(submission_limits),
            )
            _check_submission_sizes(bundle, submission_limits)
            _check_run_count(bundle, competitions)
            registration = _registration_named(bundle, team, origin)
        except BundleError as exc:
            raise SubmissionRefused(status=400, code=exc.code, message=exc.message, details=exc.details) from exc
        if private_storage_is_remote():
            # Workers on other machines fetch the archive from the shared (S3) storage. Stored here, before
            # the transaction: a slow store must not hold the team's row lock, and so every upload of the team.
            with archive.open("rb") as handle:
                stored = storages["private"].save(f"submissions/{uuid.uuid4().hex}/bundle.archive", File(handle))

        with transaction.atomic():
            # Checked again under the team's and the user's row locks (in that order, always): two uploads at
            # once, to one team or by one user to two teams, cannot both take the last slot.
            Team.objects.select_for_update().filter(pk=team.pk).first()
            if origin == Submission.Origin.UPLOAD:
                if user is not None and user.pk is not None:
                    User.objects.select_for_update().filter(pk=user.pk).first()
                _check_quota(team, user)
            submission = Submission.objects.create(
                team=team,
                created_by=user,
                benchmark=benchmark,
                manifest=dict(bundle.manifest.raw),
                bundle_bytes=size,
                report_only=bundle.report_only,
                report_claims=_report_claims(bundle),
                progress_total=len(bundle.layout.runs),
                replaces=replaces,
                origin=origin,
                bundle_name=stored or "",
                registration=registration,
            )
            Run.objects.bulk_create(_runs_for(submission, bundle, competitions))
            final = submission_folder(submission)
            staging.rename(final)
            scheduling.runs_rank(submission_id=submission.pk)  # here, where the files are (remote storage)
            if not stored:
                submission.bundle_name = str((final / "bundle.archive").relative_to(settings.PRIVATE_ROOT))
                submission.save(update_fields=["bundle_name"])
            queue.validate_after_commit(submission_id=submission.pk)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if final is not None:
            shutil.rmtree(final, ignore_errors=True)
        if stored:
            _delete_unclaimed(stored)
        raise
    return submission


def _delete_unclaimed(name: str) -> None:
    """Remove an archive stored for a submission whose row was not written. Kept when that cannot be told
    (the database is gone): a stray archive costs space, a row whose archive is gone cannot be graded."""
    try:
        if not Submission.objects.filter(bundle_name=name).exists():
            storages["private"].delete(name)
    except Exception:
        logger.exception("intake: the archive %s of a refused upload could not be removed", name)


def _check_quota(team: Team, user: User | None) -> None:
    """The team's daily quota, and the user's across all their teams (three teams do not make three quotas)."""
    full = daily_quota_full(
        setting="SUBMISSION_DAILY_QUOTA",
        team_rows=quota_counted(team=team),
        user_rows=quota_counted(user_id=user.pk) if user is not None and user.pk is not None else None,
    )
    if full is None:
        return
    who = (
        f"{team.name} made {full.used} uploads"
        if full.limit == "team"
        else f"You ({user.username if user else ''}) made {full.used} uploads, across all your teams,"
    )
    raise SubmissionRefused(
        status=429,
        code="quota_exceeded",
        message=f"{who} in the last 24 hours; the limit is {full.quota} per {full.limit} ({full.setting}): "
        f"{full.when(closed='uploads are closed')}. Rejected and failed submissions do not count.",
        details={
            "limit": full.limit,
            "used": full.used,
            "quota": full.quota,
            "frees_at": full.frees_at.isoformat() if full.frees_at else None,
        },
    )


def _keep_upload(upload: UploadedFile, target: Path) -> None:
    """Move a streamed upload into place; copy in blocks when it came from memory or another disk."""
    temporary = getattr(upload, "temporary_file_path", None)
    if temporary is not None:
        try:
            Path(temporary()).rename(target)
            return
        except OSError:
            pass
    with open(target, "wb", opener=private_opener) as out:
        for chunk in upload.chunks(1 << 20):
            out.write(chunk)
