"""Maintainers' decisions on flags and whole entries, and the team's answers: the entry's public audit trail.

Every decision needs a reason (shown publicly), is recorded on the flags it settles and as a ReviewEvent,
is mailed to the team, and is followed by the publication service, which publishes the entry once nothing
blocking is left undecided and lists it comparable or not by the rule.

A maintainer never decides on (nor re-grades) an entry of a team they belong to, or one they made (SPEC
section 4). A decision is idempotent: the same decision with the same reason on the same flag (or on the
whole entry), when what it set still stands, changes nothing and writes no event; the check runs under the
submission's row lock, so two copies sent at once write one event. A different decision, or another reason,
is a new event: a maintainer may change their mind.
"""

import logging
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from grading.checks.comparability import DECISION_WORDS, not_comparable
from grading.models import Decision, Flag, ReviewEvent, Submission
from grading.selectors import is_own_entry
from grading.services.publication import submission_publish_if_ready
from grading.services.submissions import submission_transition
from grading.signals import board_cause
from portal.accounts.models import Membership
from portal.accounts.selectors import is_maintainer
from portal.accounts.services import team_mail
from portal.refusals import Refused

logger = logging.getLogger(__name__)
S = Submission.Status
DECIDABLE = (S.IN_REVIEW, S.PUBLISHED)
# Flags that wait for a maintainer; info flags are notes and need no decision.
OPEN_SEVERITIES = (Flag.Severity.BLOCKING, Flag.Severity.WARNING)


class ReviewRefused(Refused):
    """A decision or answer that cannot be made."""


def _check_decision(*, decision: str, reason: str, actor: User) -> str:
    if not is_maintainer(actor):
        raise ReviewRefused(status=403, code="permission_denied", message="Only maintainers can decide on flags.")
    if decision not in Decision.values:
        raise ReviewRefused(
            status=400,
            code="invalid_decision",
            message=f"decision must be one of {', '.join(Decision.values)}; got {decision!r}.",
        )
    reason = (reason or "").strip()
    if not reason:
        raise ReviewRefused(
            status=400,
            code="reason_required",
            message="A decision needs a reason: it is shown in the entry's public audit trail.",
        )
    return reason


def refuse_own_entry(*, submission: Submission, actor: User, doing: str = "decide on") -> None:
    """403 for a maintainer who belongs to the entry's team, or who made the entry."""
    if is_own_entry(user=actor, submission=submission):
        raise ReviewRefused(
            status=403,
            code="own_team",
            message=f"Submission {submission.pk} is an entry of {submission.team.name}, a team you belong to (or "
            f"you made it): a maintainer never decides on their own team's entries. Another maintainer must "
            f"{doing} it.",
        )


def _locked_submission(submission_id: int, *, actor: User) -> Submission:
    """The submission, locked for the decision, once the actor may decide on it (any status yet)."""
    submission = (
        Submission.objects.select_for_update(of=("self",)).select_related("team").filter(pk=submission_id).first()
    )
    if submission is None:
        raise ReviewRefused(status=404, code="not_found", message=f"No submission {submission_id}.")
    refuse_own_entry(submission=submission, actor=actor)
    return submission


def _require_decidable(submission: Submission) -> None:
    if submission.status not in DECIDABLE:
        raise ReviewRefused(
            status=409,
            code="not_reviewable",
            message=f"Submission {submission.pk} is {submission.status}; decisions are made only on "
            "submissions in review or published.",
        )


# Where a decision on the whole entry leaves it; one that still stands there is not made again.
_ENTRY_OUTCOME: dict[str, tuple[str, ...]] = {
    Decision.ACCEPT: DECIDABLE,
    Decision.NON_COMPARABLE: DECIDABLE,
    Decision.REJECT: (S.REJECTED,),
    Decision.REQUEST_CHANGES: (S.CHANGES_REQUESTED,),
}


def _entry_decision_stands(submission: Submission, *, decision: str, reason: str) -> bool:
    """The same decision and reason are the entry's, it is where that decision leaves it, and no flag waits."""
    return (
        submission.review_decision == decision
        and submission.review_reason == reason
        and submission.status in _ENTRY_OUTCOME[decision]
        and not Flag.objects.filter(submission=submission, decision="", severity__in=OPEN_SEVERITIES).exists()
    )


def _apply_to_entry(*, submission: Submission, decision: str, reason: str, whole_entry: bool) -> None:
    """What a decision does to the entry beyond its flags."""
    if decision == Decision.ACCEPT:
        if whole_entry:
            Submission.objects.filter(pk=submission.pk).update(review_decision=decision, review_reason=reason)
        return
    if decision == Decision.NON_COMPARABLE:
        # The public reason becomes the entry's footnote; reasons of several flag decisions add up.
        footnote = reason
        if not whole_entry and submission.review_decision == Decision.NON_COMPARABLE and submission.review_reason:
            kept = submission.review_reason
            footnote = kept if reason in kept.split("\n") else f"{kept}\n{reason}"
        Submission.objects.filter(pk=submission.pk).update(
            review_decision=decision, review_reason=footnote, comparability=not_comparable(submission.comparability)
        )
        return
    Submission.objects.filter(pk=submission.pk).update(
        review_decision=decision, review_reason=reason, comparability=not_comparable(submission.comparability)
    )
    if decision == Decision.REJECT:
        submission_transition(
            submission_id=submission.pk, to=S.REJECTED, expected=DECIDABLE, reason=f"rejected by a maintainer: {reason}"
        )
    else:  # request_changes: a published entry leaves the board first
        if submission.status == S.PUBLISHED:
            submission_transition(
                submission_id=submission.pk, to=S.IN_REVIEW, expected=(S.PUBLISHED,), reason="changes requested"
            )
        submission_transition(
            submission_id=submission.pk,
            to=S.CHANGES_REQUESTED,
            expected=(S.IN_REVIEW,),
            reason=f"a maintainer asks the team to upload again: {reason}",
        )


def _settle(flags: Iterable[Flag], *, decision: str, reason: str, actor: User) -> None:
    now = timezone.now()
    Flag.objects.filter(pk__in=[flag.pk for flag in flags]).update(
        decision=decision, resolution=reason, decided_by=actor, decided_at=now
    )


def _publish_if_ready(submission_id: int) -> None:
    submission_publish_if_ready(submission_id=submission_id)


def flag_decide(*, flag_id: int, decision: str, reason: str, actor: User) -> Flag:
    """Decide one flag of an entry in review or published; returns the flag as decided."""
    reason = _check_decision(decision=decision, reason=reason, actor=actor)
    with transaction.atomic():
        submission_id = Flag.objects.filter(pk=flag_id).values_list("submission_id", flat=True).first()
        if submission_id is None:
            raise ReviewRefused(status=404, code="not_found", message=f"No flag {flag_id}.")
        submission = _locked_submission(submission_id, actor=actor)
        flag = Flag.objects.select_for_update().get(pk=flag_id)
        if flag.decision == decision and flag.resolution == reason:
            logger.info("flag %s of submission %s: %s again, unchanged", flag_id, submission.pk, decision)
            return flag
        _require_decidable(submission)
        _settle([flag], decision=decision, reason=reason, actor=actor)
        ReviewEvent.objects.create(
            submission=submission,
            flag=flag,
            actor=actor,
            kind=ReviewEvent.Kind.DECISION,
            decision=decision,
            reason=reason,
        )
        with board_cause(kind="decision", decision=decision, reason=reason, flag=f"{flag.code} ({flag.key})"):
            _apply_to_entry(submission=submission, decision=decision, reason=reason, whole_entry=False)
            _publish_if_ready(submission.pk)
        transaction.on_commit(
            lambda: review_notify(submission_id=submission.pk, decision=decision, reason=reason, flag_id=flag.pk)
        )
    logger.info("flag %s of submission %s: %s by %s", flag_id, submission.pk, decision, actor)
    flag.refresh_from_db()
    return flag


def entry_decide(*, submission_id: int, decision: str, reason: str, actor: User) -> Submission:
    """Decide a whole entry: every flag still waiting for a decision gets this one, and the entry follows it."""
    reason = _check_decision(decision=decision, reason=reason, actor=actor)
    with transaction.atomic():
        submission = _locked_submission(submission_id, actor=actor)
        if _entry_decision_stands(submission, decision=decision, reason=reason):
            logger.info("submission %s: %s again, unchanged", submission_id, decision)
            return submission
        _require_decidable(submission)
        waiting = list(
            Flag.objects.select_for_update().filter(submission=submission, decision="", severity__in=OPEN_SEVERITIES)
        )
        _settle(waiting, decision=decision, reason=reason, actor=actor)
        ReviewEvent.objects.create(
            submission=submission, actor=actor, kind=ReviewEvent.Kind.DECISION, decision=decision, reason=reason
        )
        with board_cause(kind="decision", decision=decision, reason=reason, flag=None):
            _apply_to_entry(submission=submission, decision=decision, reason=reason, whole_entry=True)
            _publish_if_ready(submission.pk)
        settled = len(waiting)
        transaction.on_commit(
            lambda: review_notify(submission_id=submission.pk, decision=decision, reason=reason, settled=settled)
        )
    logger.info("submission %s: %s by %s", submission_id, decision, actor)
    return Submission.objects.select_related("team").get(pk=submission_id)


def team_answer(*, submission_id: int, user: User, text: str) -> ReviewEvent:
    """A member of the entry's team answers on its page; the answer joins the public audit trail."""
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        raise ReviewRefused(status=404, code="not_found", message=f"No submission {submission_id}.")
    if not (user.is_authenticated and Membership.objects.filter(team_id=submission.team_id, user=user).exists()):
        raise ReviewRefused(
            status=403, code="permission_denied", message="Only members of the submission's team can answer on it."
        )
    text = (text or "").strip()
    if not text:
        raise ReviewRefused(status=400, code="text_required", message="Write an answer before sending it.")
    return ReviewEvent.objects.create(submission=submission, actor=user, kind=ReviewEvent.Kind.TEAM_ANSWER, reason=text)


def _flag_words(flag: Flag) -> str:
    return f"flag {flag.code} ({flag.key})"


def decision_summary(*, submission: Submission, decision: str, flag: Flag | None, settled: int) -> str:
    """What was decided on what, and what is left: the mail's subject.

    "Submission 3: flag answer_copy (spaceship-titanic/seed-0) accepted; 2 flags still open"."""
    what = _flag_words(flag) if flag else f"the whole entry ({settled} open flag{'s' if settled != 1 else ''} settled)"
    open_flags = Flag.objects.filter(submission=submission, decision="", severity__in=OPEN_SEVERITIES).count()
    if submission.status in (S.REJECTED, S.CHANGES_REQUESTED):
        left = f"the entry is {submission.get_status_display().lower()}"
    elif open_flags:
        left = f"{open_flags} flag{'s' if open_flags != 1 else ''} still open"
    else:
        left = f"no flag left open; the entry is {submission.get_status_display().lower()}"
    return f"Submission {submission.pk}: {what} {DECISION_WORDS[decision]}; {left}"


def review_notify(
    *, submission_id: int, decision: str, reason: str, flag_id: int | None = None, settled: int = 0
) -> None:
    """Email the team a maintainer's decision (console backend by default): what was decided on which flag
    (or on the whole entry, and how many flags that settled), the reason, and which flags are still open."""
    submission = Submission.objects.select_related("team").get(pk=submission_id)
    flag = Flag.objects.get(pk=flag_id) if flag_id else None
    summary = decision_summary(submission=submission, decision=decision, flag=flag, settled=settled)
    what = f"Flag {flag.code} ({flag.key}) of submission" if flag else "The whole of submission"
    lines = [
        summary + ".",
        "",
        f"{what} {submission.pk} of {submission.team.name}: {DECISION_WORDS[decision]} by a maintainer.",
        f"Reason: {reason}",
        f"The submission is now {submission.get_status_display()}.",
    ]
    still_open = Flag.objects.filter(submission=submission, decision="", severity__in=OPEN_SEVERITIES)
    if submission.status in DECIDABLE and still_open:
        lines.append("Still waiting for a maintainer:")
        lines.extend(f"- {_flag_words(other)}, {other.severity}" for other in still_open.order_by("severity", "code"))
    if submission.status == S.CHANGES_REQUESTED:
        lines.append(
            f"Upload the bundle again, naming submission {submission.pk} as the one it replaces "
            f"(the Submit page, or the field replaces={submission.pk} of POST /api/v1/submissions/)."
        )
    lines.append(f"You can answer on the submission's page, /submissions/{submission.pk}/.")
    team_mail(team=submission.team, subject=summary, lines=lines)
