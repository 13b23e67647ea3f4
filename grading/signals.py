"""What grading tells the rest of the portal, without knowing who listens.

``submission_status_changed`` is sent (with ``submission_id`` and ``status``, the new one) whenever a submission's
status moves (grading/services/submissions.py, inside the transaction of the move). The runners app listens: a
hosted run is done once its submission reaches a final status.

``entry_changed`` is sent (with ``submission_id``) whenever something a board shows of a submission may have
changed: it was published, it may have left published, or a decision changed a published one's
comparability. The leaderboard app listens and recomputes its rows after the transaction commits; grading never
imports the leaderboard.
"""

from django.dispatch import Signal

entry_changed = Signal()
submission_status_changed = Signal()


def entry_changed_send(*, submission_id: int) -> None:
    entry_changed.send(sender=None, submission_id=submission_id)


def submission_status_changed_send(*, submission_id: int, status: str) -> None:
    submission_status_changed.send(sender=None, submission_id=submission_id, status=status)
