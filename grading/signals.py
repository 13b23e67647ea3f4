"""What grading tells the rest of the portal, without knowing who listens.

``entry_changed`` is sent (with ``submission_id``) whenever something a board shows of a submission may have
changed: it was published, it may have left published, or a decision changed a published one's
comparability. The leaderboard app listens and recomputes its rows after the transaction commits; grading never
imports the leaderboard.
"""

from django.dispatch import Signal

entry_changed = Signal()


def entry_changed_send(*, submission_id: int) -> None:
    entry_changed.send(sender=None, submission_id=submission_id)
