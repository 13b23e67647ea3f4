"""A random audit's status moves (the audit itself runs in runners/services/audits.py): each one a conditional
update from the statuses that may move to the new one, so of two writers racing one wins; a final status records
when it ended."""

from typing import Any

from django.utils import timezone

from grading.models import Audit

A = Audit.Status
AUDIT_TRANSITIONS: dict[str, set[str]] = {
    A.QUEUED: {A.RUNNING, A.GRADED, A.COULD_NOT_RUN},
    A.RUNNING: {A.GRADED, A.COULD_NOT_RUN},
    A.GRADED: {A.PASSED, A.DISAGREES, A.COULD_NOT_RUN},
    A.PASSED: set(),
    A.DISAGREES: set(),
    A.COULD_NOT_RUN: set(),
}


def audit_transition(*, audit_id: int, to: str, **fields: Any) -> bool:
    """Move the audit to `to` from any status that may; False when it was elsewhere (nothing changed)."""
    sources = [source for source, targets in AUDIT_TRANSITIONS.items() if to in targets]
    if to in Audit.FINAL_STATUSES:
        fields.setdefault("finished_at", timezone.now())
    return bool(Audit.objects.filter(pk=audit_id, status__in=sources).update(status=to, **fields))
