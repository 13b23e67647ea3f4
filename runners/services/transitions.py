"""Hosted runs' and tasks' status transitions, as grading has for submissions (grading/services/submissions.py).

Every status write of a hosted run or task goes through here: a conditional update from the statuses that may
move to the new one, so of two writers racing one wins and the other changes nothing; an illegal move raises.
A move to a final status records when it ended.
"""

import logging
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from runners.models import HostedRun, HostedTask

logger = logging.getLogger(__name__)
R = HostedRun.Status
T = HostedTask.Status

# Every legal move of a hosted run; anything else is refused.
RUN_TRANSITIONS: dict[str, set[str]] = {
    R.QUEUED: {R.RUNNING, R.COLLECTING, R.FAILED, R.CANCELLED},
    R.RUNNING: {R.COLLECTING, R.FAILED, R.CANCELLED},
    R.COLLECTING: {R.GRADING},  # claimed by the assembly
    R.GRADING: {R.DONE, R.FAILED},
    R.DONE: set(),
    R.FAILED: set(),
    R.CANCELLED: set(),
}

# Every legal move of a hosted task: a lost running task is queued again as a new attempt.
TASK_TRANSITIONS: dict[str, set[str]] = {
    T.QUEUED: {T.RUNNING, T.FAILED, T.CANCELLED},
    T.RUNNING: {T.QUEUED, T.DONE, T.TIMED_OUT, T.OVER_CAP, T.FAILED, T.CANCELLED},
    T.DONE: set(),
    T.TIMED_OUT: set(),
    T.OVER_CAP: set(),
    T.FAILED: set(),
    T.CANCELLED: set(),
}


class IllegalTransition(Exception):
    pass


def _sources(table: dict[str, set[str]], *, what: str, to: str, expected: tuple[str, ...] | None) -> tuple[str, ...]:
    sources = expected or tuple(src for src, targets in table.items() if to in targets)
    illegal = [src for src in sources if to not in table[src]]
    if illegal:
        raise IllegalTransition(f"a {what} cannot go from {', '.join(illegal)} to {to}")
    return sources


def hosted_run_transition(
    *, hosted_run_id: int, to: str, reason: str = "", expected: tuple[str, ...] | None = None, where: Q | None = None
) -> bool:
    """Move a hosted run to `to` if it is in one of `expected` (default: every status that may move there) and
    matches `where`. False when it was not (another writer got there first)."""
    sources = _sources(RUN_TRANSITIONS, what="hosted run", to=to, expected=expected)
    values: dict[str, Any] = {"status": to, "status_reason": reason}
    if to in HostedRun.FINAL_STATUSES:
        values["finished_at"] = timezone.now()
    updated = HostedRun.objects.filter(where or Q(), pk=hosted_run_id, status__in=sources).update(**values)
    if updated:
        logger.info("hosted run %s -> %s%s", hosted_run_id, to, f" ({reason})" if reason else "")
    return bool(updated)


def hosted_tasks_transition(
    *, tasks: QuerySet[HostedTask], to: str, expected: tuple[str, ...] | None = None, **values: Any
) -> int:
    """Move the tasks of `tasks` that are in one of `expected` (default: every status that may move there) to
    `to`, writing `values` with it; returns how many moved."""
    if "status" in values:
        raise TypeError("the status is `to`")
    sources = _sources(TASK_TRANSITIONS, what="hosted task", to=to, expected=expected)
    if to in HostedTask.FINAL_STATUSES:
        values.setdefault("finished_at", timezone.now())
    return tasks.filter(status__in=sources).update(status=to, **values)
