"""The board's background work: recompute an entry's rows and the ranks after grading changed it."""

from celery import shared_task
from django.db import transaction

from leaderboard import services


@shared_task(ignore_result=True)
def refresh_board(submission_id: int) -> None:
    """Safe to run twice: it rebuilds from what grading stored."""
    services.board_refresh(submission_ids=[submission_id])


def entry_changed_receiver(*, submission_id: int, **_) -> None:
    """grading.signals.entry_changed: recompute once the change is committed (a rolled-back one never is)."""

    def after_commit() -> None:
        services.board_version_bump()  # now: a page cached before the change is never served after it
        refresh_board.delay(submission_id)

    transaction.on_commit(after_commit)
