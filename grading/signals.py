"""What grading tells the rest of the portal, without knowing who listens.

``submission_status_changed`` is sent (with ``submission_id`` and ``status``, the new one) whenever a submission's
status moves (grading/services/submissions.py, inside the transaction of the move). The runners app listens: a
hosted run is done once its submission reaches a final status.

``entry_changed`` is sent (with ``submission_id`` and ``cause``) whenever something a board shows of a submission
may have changed: it was published, it may have left published, or a decision changed a published one's
comparability. The leaderboard app listens and recomputes its rows after the transaction commits, recording
the change in the board's history with its cause; grading never imports the leaderboard.

The cause is what the board's history says made the change: ``{"kind": "decision", "decision", "reason",
"flag"}``, ``{"kind": "regrade", "reason"}``, ``{"kind": "import", "experiment_id", "reason"}``. A service
that makes such a change runs it inside ``board_cause(...)``; every ``entry_changed`` sent inside carries it
(the outermost one: a decision that publishes a re-graded entry is the decision's). Without one, the history
tells a publication from a withdrawal by the entry's states.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.dispatch import Signal

entry_changed = Signal()
submission_status_changed = Signal()
# Sent (with ``submission_id``) inside intake's transaction once an uploaded bundle's submission and runs exist:
# the runners app chooses and queues its random audit (runners/services/audits.py).
submission_received = Signal()

_cause: ContextVar[dict[str, Any] | None] = ContextVar("board_cause", default=None)


@contextmanager
def board_cause(*, kind: str, **details: Any) -> Iterator[None]:
    """The cause of the entry changes sent inside this block (unless an outer block already gave one)."""
    token = _cause.set({"kind": kind, **details}) if _cause.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _cause.reset(token)


def entry_changed_send(*, submission_id: int) -> None:
    entry_changed.send(sender=None, submission_id=submission_id, cause=_cause.get())


def submission_status_changed_send(*, submission_id: int, status: str) -> None:
    submission_status_changed.send(sender=None, submission_id=submission_id, status=status)


def submission_received_send(*, submission_id: int) -> None:
    submission_received.send(sender=None, submission_id=submission_id)
