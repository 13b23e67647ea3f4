"""Registering a run group before running it (SPEC section 9)."""

import re
import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Final

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from competitions.selectors import competition_list
from grading.bundles.manifest import NAME_TEXT, SHORT_TEXT
from grading.checks.registration import unnamed_flag
from grading.engine.tiers import SPLITS, tiers_of_split
from grading.models import Registration, Run, Submission, Withdrawal
from grading.selectors import (
    own_team_ids,
    submission_agent,
    submission_outcomes,
    tier_members,
    unnamed_as_stored,
    unnamed_registration_facts,
)
from grading.services.finish import aggregates_store, flags_store
from grading.services.publication import submission_publish_if_ready
from grading.signals import board_cause
from portal.accounts.models import Team
from portal.accounts.selectors import is_maintainer
from portal.refusals import Refused

IMAGE_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
MAX_COMPETITIONS: Final = 200
MAX_REASON: Final = 2000
RECHECKED: Final = (Submission.Status.IN_REVIEW, Submission.Status.PUBLISHED)
LAPSE_BATCH: Final = 100


def _refuse(field: str, message: str) -> Refused:
    return Refused(status=400, code="invalid", message=message, field=field)


def registration_create(
    *,
    team: Team,
    user: User | None,
    agent_name: str,
    agent_version: str,
    seeds: int,
    split: str = "",
    competitions: Sequence[str] = (),
    image: str = "",
) -> Registration:
    """Register a run group; refuse, naming the field, anything that could not be checked against a bundle."""
    agent_name, agent_version = agent_name.strip(), agent_version.strip()
    if not agent_name or len(agent_name) > NAME_TEXT:
        raise _refuse("agent.name", f"agent.name is required: the agent's name, at most {NAME_TEXT} characters.")
    if not agent_version or len(agent_version) > SHORT_TEXT:
        raise _refuse(
            "agent.version", f"agent.version is required: the agent's version, at most {SHORT_TEXT} characters."
        )
    most = settings.BUNDLE_MAX_SEEDS  # a bundle holds at most this many runs per competition
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= most:
        raise _refuse("seeds", f"seeds must be a whole number from 1 to {most} (BUNDLE_MAX_SEEDS); got {seeds!r}.")
    if image and not IMAGE_DIGEST.fullmatch(image):
        raise _refuse("image", "image must be the agent image's digest, sha256: followed by 64 lowercase hex digits.")
    if bool(split) == bool(competitions):
        raise _refuse("split", f"Give either split (one of {', '.join(SPLITS)}) or competitions, not both or neither.")
    if split:
        if split not in SPLITS:
            raise _refuse("split", f"split must be one of {', '.join(SPLITS)}; got {split[:40]!r}.")
        slugs = list(competition_list(split=split).values_list("slug", flat=True))
        if not slugs:
            raise _refuse("split", f"The current benchmark has no competitions in split {split!r}.")
    else:
        if len(competitions) > MAX_COMPETITIONS or len(set(competitions)) != len(competitions):
            raise _refuse("competitions", f"competitions must list at most {MAX_COMPETITIONS} distinct ids.")
        known = set(competition_list().filter(slug__in=list(competitions)).values_list("slug", flat=True))
        unknown = [slug for slug in competitions if slug not in known]
        if unknown:
            shown = ", ".join(repr(slug[:60]) for slug in unknown[:5])
            raise _refuse("competitions", f"Unknown competitions in the current benchmark: {shown}.")
        slugs = list(competitions)
    return Registration.objects.create(
        team=team,
        created_by=user,
        agent_name=agent_name,
        agent_version=agent_version,
        split=split,
        competitions=slugs,
        seeds=seeds,
        image=image,
        nonce=secrets.token_hex(16),
        deadline=timezone.now() + timedelta(days=settings.REGISTRATION_DEADLINE_DAYS),
    )


# --- withdrawals: a team asks, a maintainer decides ---------------------------------------------------------------


def _named(registration: Registration) -> bool:
    """Whether a bundle names it (a failed upload does not: nothing of it is on any board)."""
    return registration.submissions.exclude(status=Submission.Status.FAILED).exists()


def withdrawal_request(*, team: Team, user: User | None, registration_id: int, reason: str) -> Withdrawal:
    """The team asks to withdraw its registration, saying why (public once a maintainer accepts). 404 for
    another team's registration; 409 for one a bundle names (its seeds are that entry's) or one already
    withdrawn or waiting for a decision."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise _refuse(
            "reason",
            f"reason is required: why the team withdraws it, at most {MAX_REASON} characters; it "
            "is public once a maintainer accepts the withdrawal.",
        )
    with transaction.atomic():
        registration = Registration.objects.select_for_update().filter(pk=registration_id, team=team).first()
        if registration is None:
            raise Refused(status=404, code="not_found", message=f"Your team has no registration {registration_id}.")
        if getattr(registration, "hosted_run", None) is not None:
            raise Refused(
                status=409,
                code="registration_hosted",
                message=f"Registration {registration_id} is a hosted run's own: the portal runs it as registered, "
                "and it never counts as unreported seeds. There is nothing to withdraw.",
            )
        if _named(registration):
            raise Refused(
                status=409,
                code="registration_named",
                message=f"Registration {registration_id} is named by an uploaded bundle: its registered seeds are "
                "that entry's and cannot be withdrawn.",
            )
        open_one = registration.withdrawals.filter(status__in=(Withdrawal.Status.PENDING, Withdrawal.Status.ACCEPTED))
        if (found := open_one.first()) is not None:
            raise Refused(
                status=409,
                code="withdrawal_exists",
                message=f"Registration {registration_id} already has a withdrawal that is {found.status}.",
            )
        try:
            with transaction.atomic():
                return Withdrawal.objects.create(registration=registration, reason=reason, requested_by=user)
        except IntegrityError:  # a second request sent at the same time
            raise Refused(
                status=409, code="withdrawal_exists", message=f"Registration {registration_id} already has one."
            ) from None


def withdrawal_decide(*, withdrawal_id: int, accept: bool, reason: str, actor: User) -> Withdrawal:
    """A maintainer accepts or refuses a pending withdrawal, with a reason. Never one of their own team's. An
    accepted one stops the registration's seeds counting as failures: the entries it counted against are
    checked again."""
    if not is_maintainer(actor):
        raise Refused(status=403, code="permission_denied", message="Only maintainers decide on withdrawals.")
    reason = (reason or "").strip()
    if not reason:
        raise Refused(status=400, code="reason_required", message="A decision on a withdrawal needs a reason.")
    with transaction.atomic():
        withdrawal = (
            Withdrawal.objects.select_for_update(of=("self",))
            .select_related("registration__team")
            .filter(pk=withdrawal_id)
            .first()
        )
        if withdrawal is None:
            raise Refused(status=404, code="not_found", message=f"No withdrawal {withdrawal_id}.")
        registration = withdrawal.registration
        if registration.team_id in own_team_ids(actor) or withdrawal.requested_by_id == actor.pk:
            raise Refused(
                status=403,
                code="own_team",
                message=f"Withdrawal {withdrawal_id} is {registration.team.name}'s, a team you belong to (or you "
                "asked for it): another maintainer must decide it.",
            )
        if withdrawal.status != Withdrawal.Status.PENDING:
            raise Refused(
                status=409, code="decided", message=f"Withdrawal {withdrawal_id} is already {withdrawal.status}."
            )
        if accept and _named(registration):
            raise Refused(
                status=409,
                code="registration_named",
                message=f"Registration {registration.pk} is named by an uploaded bundle since the request: its "
                "seeds are that entry's and cannot be withdrawn. Refuse the withdrawal.",
            )
        withdrawal.status = Withdrawal.Status.ACCEPTED if accept else Withdrawal.Status.REFUSED
        withdrawal.decided_by, withdrawal.decided_at, withdrawal.decision_reason = actor, timezone.now(), reason
        withdrawal.save(update_fields=["status", "decided_by", "decided_at", "decision_reason"])
        if accept:
            why = f"registration {registration.pk} was withdrawn: {withdrawal.reason}"
            for submission_id in affected_submissions(registration):
                submission_registrations_recheck(submission_id=submission_id, reason=why)
    return withdrawal


# --- entries checked again when a registration lapses or is withdrawn ----------------------------------------------


def affected_submissions(registration: Registration) -> list[int]:
    """The team's settled entries (in review or published) of the registration's agent and version."""
    wanted = (registration.agent_name, registration.agent_version)
    found = Submission.objects.filter(team_id=registration.team_id, status__in=RECHECKED).exclude(
        origin=Submission.Origin.IMPORT
    )
    return [s.pk for s in found.only("pk", "manifest").order_by("pk") if submission_agent(s) == wanted]


def submission_registrations_recheck(*, submission_id: int, reason: str) -> bool:
    """Count a settled entry's unnamed registrations again (grading.selectors.unnamed_registrations): its stored
    list, its tier aggregates, its ``registration`` ``unnamed_registrations`` flag and its comparability, so the
    board changes without a new upload (the board's history gives ``reason``). False when nothing changed, or
    for an entry that is not settled (its checking step counts them) or waits for a re-grade."""
    with transaction.atomic(), board_cause(kind="registration", reason=reason):
        submission = Submission.objects.select_for_update(of=("self",)).filter(pk=submission_id).first()
        if submission is None or submission.status not in RECHECKED:
            return False
        if Run.objects.filter(submission_id=submission_id).exclude(grading_error="").exists():
            return False  # its re-grade's checking step counts them
        unnamed = unnamed_registration_facts(submission)
        stored = unnamed_as_stored(unnamed)
        if stored == (submission.unnamed_registrations or []):
            return False
        Submission.objects.filter(pk=submission_id).update(unnamed_registrations=stored)
        submission.unnamed_registrations = stored
        members = tier_members(benchmark_id=submission.benchmark_id, tiers=tiers_of_split(submission.split))
        outcomes = submission_outcomes(submission_id=submission_id, claimed=submission.report_only)
        aggregates_store(submission_id=submission_id, outcomes=outcomes, members=members)

        def tiers_of_all(ids: Iterable[str]) -> list[str]:
            wanted = set(ids)
            return [tier for tier, split in members.items() if wanted & set(split)]

        flag = unnamed_flag(unnamed, tiers_of_all=tiers_of_all)
        flags_store(
            submission_id=submission_id,
            flags=[flag] if flag is not None else [],
            only=("registration", "unnamed_registrations"),
        )
        submission_publish_if_ready(submission_id=submission_id)
    return True


def registrations_lapse(*, now: datetime | None = None) -> int:
    """Registrations whose deadline passed since the last call: each is marked (so this is done once) and, when no
    bundle names it, the entries of its team, agent and version are checked again. The watchdog calls it. The
    count of registrations handled."""
    now = now or timezone.now()
    due = list(
        Registration.objects.filter(deadline__lt=now, lapse_checked_at__isnull=True)
        .order_by("deadline", "pk")
        .values_list("pk", flat=True)[:LAPSE_BATCH]
    )
    handled = 0
    for registration_id in due:
        with transaction.atomic():
            if not Registration.objects.filter(pk=registration_id, lapse_checked_at__isnull=True).update(
                lapse_checked_at=now
            ):
                continue  # another watchdog took it
            registration = Registration.objects.get(pk=registration_id)
            handled += 1
            why = f"registration {registration_id}'s deadline passed: its unreported seeds count as failures"
            for submission_id in affected_submissions(registration):
                submission_registrations_recheck(submission_id=submission_id, reason=why)
    return handled
