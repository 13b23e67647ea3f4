"""Publication: comparability from the flags and decisions, and the move to published when nothing blocks.

Called by the checking step and after each maintainer decision (grading/services/review.py).
"""

import logging
from contextlib import nullcontext

from django.db import transaction

from grading.checks.comparability import FlagState, comparability
from grading.models import Flag, ReviewEvent, Run, Submission, TierAggregate
from grading.services.submissions import submission_transition
from grading.signals import board_cause, entry_changed_send

logger = logging.getLogger(__name__)
S = Submission.Status
PUBLISHABLE_FROM = (S.CHECKING, S.IN_REVIEW)
HOLDING_DECISIONS = ("reject", "request_changes")  # their own services move the submission


def submission_publish_if_ready(*, submission_id: int) -> bool:
    """Store the entry's comparability; publish it when no blocking flag is undecided (True when it was
    published now), else leave or put it in review with a reason."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None:
            return False
        flags = list(Flag.objects.filter(submission_id=submission_id))
        complete = {
            agg.tier: (agg.data or {}).get("seeds", 0)
            for agg in TierAggregate.objects.filter(submission_id=submission_id, kind=TierAggregate.Kind.COMPLETE)
        }
        result = comparability(
            regraded_from_submissions=not submission.report_only,
            complete_seeds=complete,
            flags=[
                FlagState(
                    code=f.code,
                    key=f.key,
                    severity=f.severity,
                    tiers=tuple(f.tiers or ()),
                    decision=f.decision,
                    reason=f.resolution,
                )
                for f in flags
            ],
            review_decision=submission.review_decision,
            review_reason=submission.review_reason,
        )
        Submission.objects.filter(pk=submission_id).update(comparability=result.as_dict())
        if submission.status == S.PUBLISHED:  # a decision on a listed entry may move it between the boards
            entry_changed_send(submission_id=submission_id)
        if submission.status not in PUBLISHABLE_FROM:
            return False
        undecided = [f for f in flags if f.severity == Flag.Severity.BLOCKING and not f.decision]
        held = [f for f in flags if f.decision in HOLDING_DECISIONS]
        # A run we failed to grade has no result to publish, whatever was decided on its flag: only a re-grade.
        errors = Run.objects.filter(submission_id=submission_id).exclude(grading_error="").count()
        if errors or undecided or held or submission.review_decision in HOLDING_DECISIONS:
            if errors:
                reason = (
                    f"{errors} run(s) could not be graded because of an error of the portal (not of the submission); "
                    "a maintainer re-grades it once the error is fixed"
                )
            elif undecided:
                reason = f"{len(undecided)} blocking flag(s) await a maintainer's decision"
            else:
                reason = "a maintainer's decision holds the entry"
            if submission.status == S.CHECKING:
                submission_transition(
                    submission_id=submission_id, to=S.IN_REVIEW, reason=reason, expected=(S.CHECKING,)
                )
            else:
                Submission.objects.filter(pk=submission_id, status=S.IN_REVIEW).update(status_reason=reason)
            return False
        # Published before: it comes back after a re-grade (the only way back onto the board), which the board's
        # history records as the re-grade's result (unless a decision published it: the decision's own cause).
        again = ReviewEvent.objects.filter(submission_id=submission_id, kind=ReviewEvent.Kind.PUBLISHED).exists()
        with board_cause(kind="regrade", reason="published again after a re-grade") if again else nullcontext():
            if not submission_transition(
                submission_id=submission_id,
                to=S.PUBLISHED,
                expected=PUBLISHABLE_FROM,
                reason="" if result.comparable else "published as non-comparable",
            ):
                return False
        ReviewEvent.objects.create(
            submission_id=submission_id,
            kind=ReviewEvent.Kind.PUBLISHED,
            reason="comparable" if result.comparable else "non-comparable: " + "; ".join(result.reasons),
        )
        return True
