"""Submissions: status transitions, quota, where their files live."""

import logging
import shutil
import uuid
from pathlib import Path

from django.core.files.storage import storages
from django.db.models import QuerySet
from django.utils import timezone

from grading.bundles.archive import extract_archive
from grading.models import Submission
from grading.selectors import private_storage_is_remote, submission_folder
from grading.signals import entry_changed_send, submission_status_changed_send
from portal.accounts.models import Team
from portal.private_files import private_folder, private_opener
from portal.quotas import QUOTA_WINDOW
from portal.refusals import Refused

logger = logging.getLogger(__name__)
S = Submission.Status

# Every legal move of the pipeline; anything else is refused.
TRANSITIONS: dict[str, set[str]] = {
    S.RECEIVED: {S.VALIDATING, S.REJECTED, S.FAILED},
    S.VALIDATING: {S.GRADING, S.CHECKING, S.REJECTED, S.FAILED, S.RECEIVED},
    S.GRADING: {S.CHECKING, S.FAILED},
    S.CHECKING: {S.IN_REVIEW, S.PUBLISHED, S.FAILED},
    S.IN_REVIEW: {S.PUBLISHED, S.GRADING, S.REJECTED, S.CHANGES_REQUESTED},
    S.PUBLISHED: {S.GRADING, S.IN_REVIEW, S.REJECTED},
    S.REJECTED: set(),
    S.CHANGES_REQUESTED: set(),
    S.FAILED: {S.GRADING, S.RECEIVED},
}


class IllegalTransition(Exception):
    pass


class SubmissionRefused(Refused):
    """Refused at intake: a bundle that is not valid, over quota or too large."""


def submission_transition(
    *, submission_id: int, to: str, reason: str = "", expected: tuple[str, ...] | None = None
) -> bool:
    """Move a submission to `to` if it is in one of `expected` (default: every status that may move there).

    A conditional update: of two workers racing, one wins and the other gets False. An illegal move raises.
    """
    sources = expected or tuple(src for src, targets in TRANSITIONS.items() if to in targets)
    illegal = [src for src in sources if to not in TRANSITIONS[src]]
    if illegal:
        raise IllegalTransition(f"a submission cannot go from {', '.join(illegal)} to {to}")
    updated = Submission.objects.filter(pk=submission_id, status__in=sources).update(
        status=to, status_reason=reason, status_changed_at=timezone.now()
    )
    if updated:
        logger.info("submission %s -> %s%s", submission_id, to, f" ({reason})" if reason else "")
        submission_status_changed_send(submission_id=submission_id, status=to)
        if to == S.PUBLISHED or S.PUBLISHED in sources:  # onto the board, or maybe off it
            entry_changed_send(submission_id=submission_id)
    return bool(updated)


def quota_counted(*, team: Team | None = None, user_id: int | None = None) -> QuerySet[Submission]:
    """The uploads of the last 24 hours that count against a daily quota: the team's, or the user's in any of
    their teams. Rejected and failed ones do not count, nor what a hosted run or an import brought in."""
    queryset = Submission.objects.filter(
        origin=Submission.Origin.UPLOAD, created_at__gte=timezone.now() - QUOTA_WINDOW
    ).exclude(status__in=Submission.NOT_COUNTED)
    if team is not None:
        queryset = queryset.filter(team=team)
    if user_id is not None:
        queryset = queryset.filter(created_by_id=user_id)
    return queryset


def quota_used(*, team: Team) -> int:
    return quota_counted(team=team).count()


def submission_bundle_root(submission: Submission) -> Path:
    """The unpacked bundle on this machine. With remote private storage (S3), a worker that does not have
    it yet downloads the archive and unpacks it again, with the same safety checks as at intake."""
    root = submission_folder(submission) / "bundle"
    if root.is_dir() or not private_storage_is_remote():
        return root
    scratch = submission_folder(submission).with_name(f"{submission.pk}.{uuid.uuid4().hex}")
    private_folder(scratch)
    try:
        archive = scratch / "bundle.archive"
        with (
            storages["private"].open(submission.bundle_name, "rb") as source,
            open(archive, "wb", opener=private_opener) as target,
        ):
            shutil.copyfileobj(source, target, 1 << 20)
        extract_archive(archive=archive, target=scratch / "bundle")
        try:
            scratch.rename(submission_folder(submission))
        except OSError:
            pass  # another process on this machine got there first; its copy is the same
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return root


def submission_files_delete(submission: Submission) -> None:
    shutil.rmtree(submission_folder(submission), ignore_errors=True)
    if private_storage_is_remote() and submission.bundle_name:
        storages["private"].delete(submission.bundle_name)
