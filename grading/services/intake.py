"""Intake of an uploaded bundle: safe extraction and validation before anything is written to the database."""

import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from competitions.models import CompetitionPack
from competitions.selectors import current_benchmark
from grading.bundles.bundle import Bundle, read_bundle
from grading.bundles.errors import BundleError
from grading.bundles.limits import Limits
from grading.models import Submission
from grading.services.submissions import (
    SubmissionRefused,
    archive_name,
    private_storage_is_remote,
    quota_used,
    submission_folder,
)
from portal.accounts.models import Team

# A submission has one row per answers row, so where the answers file itself is large (13 million rows
# of icecube-neutrinos-in-deep-ice) an honest submission may pass the flat limit; it may then be up to
# this many times its competition's answers file.
SUBMISSION_ANSWERS_FACTOR = 2


def _submission_limits(benchmark) -> dict[str, int]:
    """The largest submission.csv accepted per competition slug."""
    floor = settings.BUNDLE_MAX_SUBMISSION_BYTES
    sizes = CompetitionPack.objects.filter(competition__benchmark=benchmark).values_list(
        "competition__slug", "answers_bytes"
    )
    return {slug: max(floor, SUBMISSION_ANSWERS_FACTOR * (size or 0)) for slug, size in sizes}


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


def submission_create(*, team: Team, user, upload: UploadedFile) -> Submission:
    """Check quota, extract and validate the bundle, then record the submission and queue its pipeline.

    A refused bundle raises BundleError or SubmissionRefused and leaves nothing: no row, no file.
    """
    if upload.size > settings.BUNDLE_MAX_BYTES:
        raise SubmissionRefused(status=413, code="too_large",
                                message=f"The bundle is {upload.size} bytes; the limit is {settings.BUNDLE_MAX_BYTES}.")
    _check_quota(team)
    benchmark = current_benchmark()
    if benchmark is None:
        raise SubmissionRefused(status=503, code="no_benchmark",
                                message="No benchmark is loaded on this portal yet; an operator runs load_competitions.")
    known = set(benchmark.competitions.values_list("slug", flat=True))

    staging = Path(settings.PRIVATE_ROOT) / "submissions" / f"incoming-{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    archive = staging / "bundle.archive"
    try:
        _keep_upload(upload, archive)
        submission_limits = _submission_limits(benchmark)
        bundle = read_bundle(archive=archive, target=staging / "bundle", known_competition_ids=known,
                             limits=_limits(submission_limits))
        _check_submission_sizes(bundle, submission_limits)
        from grading.tasks import validate_submission

        with transaction.atomic():
            # Checked again under the team's row lock: two uploads at once cannot both take the last slot.
            Team.objects.select_for_update().filter(pk=team.pk).first()
            _check_quota(team)
            submission = Submission.objects.create(
                team=team, created_by=user, benchmark=benchmark, manifest=dict(bundle.manifest.raw),
                bundle_bytes=upload.size, report_only=bundle.report_only,
            )
            final = submission_folder(submission)
            staging.rename(final)
            if private_storage_is_remote():
                # Workers on other machines fetch the archive from the shared (S3) storage.
                with (final / "bundle.archive").open("rb") as handle:
                    submission.bundle_name = storages["private"].save(archive_name(submission), File(handle))
            else:
                submission.bundle_name = str((final / "bundle.archive").relative_to(settings.PRIVATE_ROOT))
            submission.save(update_fields=["bundle_name"])
            transaction.on_commit(lambda: validate_submission.delay(submission.pk))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if "final" in locals():
            shutil.rmtree(final, ignore_errors=True)
            if private_storage_is_remote():
                storages["private"].delete(archive_name(submission))
        raise
    return submission


def _check_quota(team: Team) -> None:
    used = quota_used(team=team)
    if used >= settings.SUBMISSION_DAILY_QUOTA:
        raise SubmissionRefused(
            status=429, code="quota_exceeded",
            message=f"{team.name} made {used} submissions in the last 24 hours; the limit is "
                    f"{settings.SUBMISSION_DAILY_QUOTA}. Rejected and failed submissions do not count.",
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
    with target.open("wb") as out:
        for chunk in upload.chunks(1 << 20):
            out.write(chunk)
