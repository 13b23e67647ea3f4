"""The board's background work: recompute an entry's rows and the ranks after grading changed it, then render
the board's most visited views once, so that no visitor waits for the first render of a new version."""

import logging

from celery import shared_task
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.test import RequestFactory

from leaderboard import services
from leaderboard.apis import leaderboard_body
from leaderboard.selectors import BOARDS, OVERVIEW, TAB_CHOICES, BoardQuery
from leaderboard.views import leaderboard

logger = logging.getLogger(__name__)
# The landing view and the comparable board's tabs, and the API's default answers: what a refresh renders ahead.
WARMED_PAGES = [BoardQuery(tier=tab) for tab in TAB_CHOICES]
WARMED_ANSWERS = [*WARMED_PAGES, *(BoardQuery(board=board, tier=OVERVIEW) for board in BOARDS if board != "comparable")]


@shared_task(ignore_result=True)
def refresh_board(submission_id: int, cause: dict | None = None) -> None:
    """Safe to run twice: it rebuilds from what grading stored (and the second run finds nothing changed, so
    the board's history gets no second event). `cause` is what the history records as the change's cause."""
    services.board_refresh(submission_ids=[submission_id], cause=cause)
    board_warm()


def board_warm() -> None:
    """Fill the caches of the new board version: each page as an anonymous visitor gets it (its tables are
    cached per version), and each API answer. A failure here costs a visitor a slower first view, nothing else."""
    factory = RequestFactory()
    try:
        for query in WARMED_PAGES:
            request = factory.get("/leaderboard/", query.params())
            request.user = AnonymousUser()
            leaderboard(request)
        for query in WARMED_ANSWERS:
            leaderboard_body(query)
    except Exception:
        logger.exception("warming the board's caches failed")


def entry_changed_receiver(*, submission_id: int, cause: dict | None = None, **_: object) -> None:
    """grading.signals.entry_changed: recompute once the change is committed (a rolled-back one never is)."""

    def after_commit() -> None:
        services.board_version_bump()  # now: a page cached before the change is never served after it
        refresh_board.delay(submission_id, cause)

    transaction.on_commit(after_commit)
