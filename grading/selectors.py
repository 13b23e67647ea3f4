import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby
from operator import attrgetter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.files.storage import FileSystemStorage, storages
from django.db.models import Exists, Expression, OuterRef, Q, QuerySet
from django.db.models.fields.json import KeyTransform
from django.http import Http404
from django.utils import timezone

from competitions.models import Competition
from grading.checks.context import RegistrationFacts
from grading.checks.registration import outcomes_as_registered, outcomes_with_unnamed
from grading.engine.aggregation import RunOutcome, outcome_from_report
from grading.engine.report import CompetitionReport, build_run_group_report
from grading.engine.report_parser import parse_competition_report
from grading.engine.safe_json import restored_report
from grading.engine.tiers import TIER_SPLITS
from grading.models import (
    Decision,
    Flag,
    Registration,
    ReviewEvent,
    Run,
    Submission,
    TierAggregate,
    Withdrawal,
)
from portal.accounts.models import Membership, Team
from portal.accounts.selectors import is_maintainer
from portal.ids import parse_id

# What the board needs of grading (leaderboard/services.py), and the checking step too.


def tier_members(*, benchmark_id: int, tiers: Iterable[str]) -> dict[str, list[str]]:
    competitions = list(Competition.objects.filter(benchmark_id=benchmark_id).values_list("slug", "splits"))
    return {tier: sorted(slug for slug, splits in competitions if TIER_SPLITS[tier] in splits) for tier in tiers}


def run_outcome(run: Run, *, claimed: bool = False) -> RunOutcome:
    """What the aggregation counts of a run: the server's re-grade, or (report-only entries, whose numbers
    are self-reported) the team's own report. The engine's outcome_from_report reads it, as verify does."""
    report = (run.claimed if claimed else run.regraded) or {}
    return outcome_from_report(
        report,
        seed=run.seed,
        submission_sha256=run.copy_key or run.submission_sha256,
        competition_id=run.competition.slug,
    )


def report_fields(source: str | Expression, keys: Sequence[str]) -> list[KeyTransform]:
    """Expressions that pick `keys` out of a stored report (a JSON column, or an expression giving one), each
    decoded by the database's JSON field: a report holds far more than most readers need. One per key, not one
    JSON object of them: inside an object SQLite writes a boolean as the text "true" or "false"."""
    return [KeyTransform(key, source) for key in keys]


def picked_report(keys: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """The report the picked `values` stand for; a field the report lacks (or holds as null) is left out."""
    return {key: value for key, value in zip(keys, values, strict=True) if value is not None}


# What the aggregation reads of a run's report (outcome_from_report).
_OUTCOME_KEYS = (
    "submission_exists",
    "valid_submission",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "medals_known",
)


def submission_outcomes(*, submission_id: int, claimed: bool = False) -> list[RunOutcome]:
    """run_outcome of every run of a submission, in one query that loads no run: only the fields of each report
    that the aggregation counts (medals_known, the one read with a default, is a boolean or absent)."""
    picked = report_fields("claimed" if claimed else "regraded", _OUTCOME_KEYS)
    rows = Run.objects.filter(submission_id=submission_id, outside_registration=False).values_list(
        "seed", "submission_sha256", "copy_key", "competition__slug", *picked
    )
    outcomes = [
        outcome_from_report(
            picked_report(_OUTCOME_KEYS, values), seed=seed, submission_sha256=copy_key or sha256, competition_id=slug
        )
        for seed, sha256, copy_key, slug, *values in rows
    ]
    submission = Submission.objects.filter(pk=submission_id).select_related("registration").first()
    if submission is None:
        return outcomes
    registration = registration_facts(submission)
    # Under a registration every registered (competition, seed) counts, a missing one as a failure (SPEC §9).
    if registration is not None:
        outcomes = outcomes_as_registered(outcomes, registration=registration)
    # So does every seed of a lapsed registration of the same agent and version that no bundle named, as the
    # entry's last check counted them.
    return outcomes_with_unnamed(outcomes, counted_unnamed_registrations(submission))


def _facts(registration: Registration) -> RegistrationFacts:
    return RegistrationFacts(
        id=registration.pk,
        nonce=registration.nonce,
        competitions=tuple(registration.competitions),
        seeds=registration.seeds,
    )


def registration_facts(submission: Submission) -> RegistrationFacts | None:
    """The registration the submission's bundle names, as the checks and the aggregation read it."""
    registration = submission.registration
    return None if registration is None else _facts(registration)


def submission_agent(submission: Submission) -> tuple[str, str] | None:
    """(agent name, version) as the submission's manifest gives them (stripped, as a registration stores them);
    None when it gives no name."""
    agent = (submission.manifest or {}).get("agent")
    if not isinstance(agent, dict) or not isinstance(agent.get("name"), str) or not agent["name"].strip():
        return None
    version = agent.get("version")
    return agent["name"].strip(), version.strip() if isinstance(version, str) else ""


def unnamed_registrations(
    *, team_id: int, agent_name: str, agent_version: str, now: datetime | None = None
) -> QuerySet[Registration]:
    """The registrations whose registered seeds count as failures of the team's entries of this agent and version
    although no entry reports them (SPEC section 9), oldest first: the one place that chooses them.

    Those of the team, agent name and version whose deadline has passed, that no bundle named (a failed upload
    does not count as naming it: nothing of it is on any board), and whose withdrawal a maintainer has not
    accepted. A hosted run's own registration never counts here: the portal ran (or failed to run) those seeds,
    the team chose none of them."""
    named = Submission.objects.filter(registration=OuterRef("pk")).exclude(status=Submission.Status.FAILED)
    withdrawn = Withdrawal.objects.filter(registration=OuterRef("pk"), status=Withdrawal.Status.ACCEPTED)
    return (
        Registration.objects.filter(
            team_id=team_id,
            agent_name=agent_name,
            agent_version=agent_version,
            deadline__lt=now or timezone.now(),
            hosted_run__isnull=True,
        )
        .exclude(Exists(named))
        .exclude(Exists(withdrawn))
        .order_by("pk")
    )


def unnamed_as_stored(unnamed: Iterable[RegistrationFacts]) -> list[dict]:
    """What Submission.unnamed_registrations stores of each (the evidence's aggregates.json says the same)."""
    return [{"id": r.id, "competitions": list(r.competitions), "seeds": r.seeds} for r in unnamed]


def counted_unnamed_registrations(submission: Submission) -> tuple[RegistrationFacts, ...]:
    """The unnamed registrations the submission's last check counted as failures (Submission.unnamed_registrations):
    what its stored aggregates, its entry and its evidence count, until the next check."""
    return tuple(
        RegistrationFacts(id=int(r["id"]), nonce="", competitions=tuple(r["competitions"]), seeds=int(r["seeds"]))
        for r in submission.unnamed_registrations or []
    )


def unnamed_registration_facts(submission: Submission) -> tuple[RegistrationFacts, ...]:
    """unnamed_registrations of the submission's team, agent and version, as the checks and the aggregation read
    them; none for an entry imported from another board (it has no registration)."""
    agent = submission_agent(submission)
    if agent is None or submission.origin == Submission.Origin.IMPORT:
        return ()
    name, version = agent
    found = unnamed_registrations(team_id=submission.team_id, agent_name=name, agent_version=version)
    return tuple(_facts(registration) for registration in found)


def submission_folder(submission: Submission) -> Path:
    """The submission's own local folder under PRIVATE_ROOT; everything of it on this machine lives below."""
    return Path(settings.PRIVATE_ROOT) / "submissions" / str(submission.pk)


def private_storage_is_remote() -> bool:
    return not isinstance(storages["private"], FileSystemStorage)


def submissions_visible_to(user: User | AnonymousUser) -> QuerySet[Submission]:
    """A team sees its own submissions; everyone sees published ones; maintainers see all."""
    queryset = Submission.objects.select_related("team")
    if is_maintainer(user):
        return queryset
    published = Q(status=Submission.Status.PUBLISHED)
    if user.is_authenticated:
        return queryset.filter(published | Q(team__memberships__user=user)).distinct()
    return queryset.filter(published)


def submissions_of_teams(*, user: User) -> QuerySet[Submission]:
    return Submission.objects.filter(team__memberships__user=user).select_related("team").distinct()


def submission_get(*, user: User | AnonymousUser, submission_id: int) -> Submission:
    submission = submissions_visible_to(user).filter(pk=submission_id).first()
    if submission is None:
        raise Http404(f"No submission {submission_id} that you can see.")
    return submission


def submission_aggregates(submission: Submission) -> dict:
    result: dict = {}
    for agg in submission.aggregates.all().order_by("tier"):
        result.setdefault(agg.tier, {})[agg.kind] = agg.data
    for tier in result.values():
        tier.setdefault(TierAggregate.Kind.COMPLETE, None)
        tier.setdefault(TierAggregate.Kind.PADDED, None)
    return result


def submission_runs(submission: Submission) -> QuerySet[Run]:
    return submission.runs.select_related("competition").order_by("competition__slug", "seed")


@dataclass(frozen=True)
class ReportRow:
    """One competition report of the server's grading report, with the seed of the run it grades."""

    seed: int
    report: CompetitionReport

    @property
    def medal(self) -> str:
        report = self.report
        if not report.medals_known:
            return "unknown"
        for name, won in (
            ("gold", report.gold_medal),
            ("silver", report.silver_medal),
            ("bronze", report.bronze_medal),
            ("above median", report.above_median),
        ):
            if won:
                return name
        return "none"

    @property
    def score_is_nan(self) -> bool:
        return self.report.score is not None and math.isnan(self.report.score)


@dataclass(frozen=True)
class GradingReportTable:
    """The server's grading report for people: its totals and one row per competition report."""

    totals: dict[str, int]
    rows: list[ReportRow]


def submission_grading_report_table(submission: Submission) -> GradingReportTable:
    rows = submission_report_rows(submission)
    return GradingReportTable(totals=build_run_group_report(row.report for row in rows).totals(), rows=rows)


def submission_report_rows(submission: Submission) -> list[ReportRow]:
    """The competition reports of the server's grading report, reasons included, in report order."""
    return [
        ReportRow(
            seed=run.seed,
            report=dataclasses.replace(
                parse_competition_report(
                    {k: v for k, v in restored_report(run.regraded).items() if k != "reason"}, where=f"run {run.pk}"
                ),
                reason=run.regraded.get("reason"),
            ),
        )
        for run in submission_runs(submission)
        # A run of a competition without thresholds (not gradable here) has no MLE-bench report.
        if run.regraded
        and (run.regraded.get("gold_threshold") is not None or run.regraded.get("medals_known") is False)
    ]


def submission_grading_report(submission: Submission) -> dict:
    """The server's report in MLE-bench's format: one competition report per re-graded run."""
    reports = [row.report for row in submission_report_rows(submission)]
    return build_run_group_report(reports).to_dict(with_reason=False)


# --- the review queue (maintainers) -------------------------------------------------------------

REVIEW_SEVERITIES = (Flag.Severity.BLOCKING, Flag.Severity.WARNING)
REVIEWABLE = (Submission.Status.IN_REVIEW, Submission.Status.PUBLISHED)


def open_flags(
    *, code: str = "", severity: str = "", team: str = "", older_than_days: int | None = None
) -> QuerySet[Flag]:
    """Flags waiting for a maintainer's decision, oldest submission first. `team` is a team's id or name."""
    queryset = Flag.objects.filter(
        decision="", severity__in=REVIEW_SEVERITIES, submission__status__in=REVIEWABLE
    ).select_related("submission__team")
    if code:
        queryset = queryset.filter(code=code)
    if severity:
        queryset = queryset.filter(severity=severity)
    if team:
        queryset = queryset.filter(submission__team_id__in=teams_matching(team))
    if older_than_days is not None:
        queryset = queryset.filter(created_at__lte=timezone.now() - timedelta(days=older_than_days))
    return queryset.order_by("submission__created_at", "submission_id", "severity", "code", "key")


def teams_matching(team: str) -> list[int]:
    """The ids of the teams a queue filter names: by id (ASCII digits in the id range) or by name."""
    match = Q(name__iexact=team)
    team_id = parse_id(team)
    if team_id is not None:
        match |= Q(pk=team_id)
    return list(Team.objects.filter(match).values_list("pk", flat=True))


def own_team_ids(user: User | AnonymousUser) -> set[int]:
    """The teams a maintainer belongs to: entries of theirs are decided by another maintainer (SPEC section 4)."""
    if not user.is_authenticated:
        return set()
    return set(Membership.objects.filter(user_id=user.pk).values_list("team_id", flat=True))


def is_own_entry(*, user: User | AnonymousUser, submission: Submission, own_teams: set[int] | None = None) -> bool:
    """Whether the user belongs to the submission's team now, or made the submission (so was a member then:
    a membership that ends leaves no row, the upload's author stays recorded). `own_teams` saves the query."""
    if not user.is_authenticated:
        return False
    teams = own_team_ids(user) if own_teams is None else own_teams
    return submission.created_by_id == user.pk or submission.team_id in teams


@dataclass(frozen=True)
class QueueEntry:
    submission: Submission
    flags: list[Flag]  # blocking first
    own_team: bool = False  # the viewer's team's entry: another maintainer decides

    @property
    def blocking(self) -> int:
        return sum(flag.severity == Flag.Severity.BLOCKING for flag in self.flags)

    @property
    def warnings(self) -> int:
        return sum(flag.severity == Flag.Severity.WARNING for flag in self.flags)

    @property
    def needs(self) -> str:
        """What the entry waits for: "blocking" (off the board until decided), "warning" (in review,
        warnings only) or "published" (listed already; its warnings wait for a look)."""
        if self.blocking:
            return "blocking"
        return "published" if self.submission.status == Submission.Status.PUBLISHED else "warning"


QUEUE_ORDER = {"blocking": 0, "warning": 1, "published": 2}


def review_queue(*, viewer: User | AnonymousUser | None = None, **filters: Any) -> list[QueueEntry]:
    """open_flags(**filters) grouped by submission, by what needs a decision: entries held by a blocking
    flag first, then entries in review with warnings only, then warnings on entries already published;
    oldest first within each. Entries of the viewer's teams are marked."""
    own = own_team_ids(viewer) if viewer is not None else set()
    entries = [
        QueueEntry(
            submission=submission,
            flags=sorted(flags, key=lambda flag: flag.severity != Flag.Severity.BLOCKING),
            own_team=viewer is not None and is_own_entry(user=viewer, submission=submission, own_teams=own),
        )
        for submission, flags in groupby(open_flags(**filters), key=attrgetter("submission"))
    ]
    return sorted(entries, key=lambda entry: QUEUE_ORDER[entry.needs])  # stable: oldest first in each


SEVERITY_ORDER: dict[str, int] = {Flag.Severity.BLOCKING: 0, Flag.Severity.WARNING: 1, Flag.Severity.INFO: 2}


def review_flags(submission: Submission) -> list[Flag]:
    """The entry's flags for its review page: undecided before decided, blocking, then warning, then info."""
    flags = submission.flags.select_related("decided_by")
    return sorted(flags, key=lambda flag: (bool(flag.decision), SEVERITY_ORDER.get(flag.severity, 3)))


def review_codes() -> list[str]:
    """The codes of the flags waiting for a decision, for the queue's filter."""
    return sorted(set(open_flags().values_list("code", flat=True)))


def review_events(submission: Submission) -> QuerySet[ReviewEvent]:
    """The entry's public audit trail, oldest first."""
    return submission.review_events.select_related("actor", "flag")


def submission_footnotes(submission: Submission) -> list[str]:
    """Why a maintainer lists the entry as non-comparable: its footnotes on the board."""
    notes = submission.review_reason.split("\n") if submission.review_decision == Decision.NON_COMPARABLE else []
    for reason in submission.flags.filter(decision=Decision.NON_COMPARABLE).values_list("resolution", flat=True):
        if reason and reason not in notes:
            notes.append(reason)
    return [note for note in notes if note]


DECISIONS_PAGE_SIZE = 100


@dataclass(frozen=True)
class DecisionsPage:
    decisions: list[ReviewEvent]
    page: int
    pages: int
    count: int


def public_decisions(*, page: int = 1) -> DecisionsPage:
    """Every maintainer's decision, newest first, whatever became of the entry: SPEC section 4 makes every
    decision's reason public, rejected entries' too. Only what the decision says and whom it concerns: the
    flags' messages and evidence come from the bundle, which stays private unless the entry is published."""
    queryset = ReviewEvent.objects.filter(kind=ReviewEvent.Kind.DECISION)
    count = queryset.count()
    pages = max(1, math.ceil(count / DECISIONS_PAGE_SIZE))
    start = (page - 1) * DECISIONS_PAGE_SIZE
    decisions = (
        list(
            queryset.select_related("submission__team", "actor", "flag").order_by("-created_at", "-pk")[
                start : start + DECISIONS_PAGE_SIZE
            ]
        )
        if page <= pages
        else []
    )
    return DecisionsPage(decisions=decisions, page=page, pages=pages, count=count)


def registrations_of_team(*, team: Team) -> QuerySet[Registration]:
    """The team's registrations, newest first; their nonces are the team's to see."""
    return Registration.objects.filter(team=team).select_related("team", "hosted_run").prefetch_related("withdrawals")


def withdrawals_pending(*, viewer: User) -> list[tuple[Withdrawal, bool]]:
    """Withdrawals waiting for a maintainer, oldest first, each with whether it is the viewer's own team's."""
    own = own_team_ids(viewer)
    found = (
        Withdrawal.objects.filter(status=Withdrawal.Status.PENDING)
        .select_related("registration__team")
        .order_by("requested_at", "pk")
    )
    return [(w, w.registration.team_id in own or w.requested_by_id == viewer.pk) for w in found]


def withdrawals_decided() -> QuerySet[Withdrawal]:
    return (
        Withdrawal.objects.exclude(status=Withdrawal.Status.PENDING)
        .select_related("registration__team", "decided_by")
        .order_by("-decided_at", "-pk")
    )


def registrations_public() -> QuerySet[Registration]:
    """The registrations anyone may read, newest first (SPEC section 9): those an entry on the board uses and
    those whose deadline has passed. Before that a registration, its nonce above all, is its team's only."""
    used = Submission.objects.filter(registration__isnull=False, board_entry__isnull=False).values("registration")
    return (
        Registration.objects.filter(Q(deadline__lte=timezone.now()) | Q(pk__in=used))
        .select_related("team", "hosted_run")
        .order_by("-created_at", "-pk")
    )


def registration_public_get(*, registration_id: int) -> Registration:
    """A public registration, or 404: one not yet public is told apart from none at all by nobody."""
    registration = registrations_public().filter(pk=registration_id).first()
    if registration is None:
        raise Http404(
            "No public registration with this id: a registration is public once an entry uses it or its "
            "deadline has passed."
        )
    return registration


def registration_entries(*, registration: Registration) -> list[dict[str, Any]]:
    """The board's entries that use the registration: their id, submission and agent, as pages and the API list
    them."""
    return [
        {"id": entry_id, "submission": submission_id, "status": status}
        for submission_id, entry_id, status in registration.submissions.filter(board_entry__isnull=False)
        .order_by("pk")
        .values_list("pk", "board_entry__pk", "status")
    ]
