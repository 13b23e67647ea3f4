"""An entry's page: the entry, its seeds × competitions matrix, its rates per tier and its ranks."""

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.http import Http404
from django.utils import timezone

from grading.checks.context import RegistrationFacts
from grading.checks.registration import seeds_reported
from grading.engine.tiers import TIER_LABELS, TIERS
from grading.models import Flag, Registration, Run, Submission, Withdrawal
from grading.selectors import registration_facts, submission_agent
from leaderboard.levels import LevelFacts, evidence_level, next_level_steps
from leaderboard.models import BoardRow, Entry

MEDALS = ("gold", "silver", "bronze")


def _medal(report: dict | None) -> str:
    """The cell's class: the best of gold, silver, bronze, above median, valid, invalid, none."""
    if not report:
        return "none"
    for medal in MEDALS:
        if report.get(f"{medal}_medal"):
            return medal
    if report.get("above_median"):
        return "above_median"
    if report.get("valid_submission"):
        return "valid"
    return "invalid" if report.get("submission_exists") else "none"


def _thresholds(report: dict | None) -> str:
    if not report:
        return ""
    parts = [
        f"{name} {report[f'{name}_threshold']}"
        for name in (*MEDALS, "median")
        if report.get(f"{name}_threshold") is not None
    ]
    return ", ".join(parts)


@dataclass(frozen=True, kw_only=True)
class EntryRegistration:
    """The registration an entry's bundle names (SPEC section 9), public now that an entry uses it."""

    id: int
    agent_name: str
    agent_version: str
    seeds_registered: int
    seeds_reported: int
    runs_missing: int
    competitions: int
    image: str


def entry_registration(entry: Entry) -> EntryRegistration | None:
    """ "N seeds registered, M reported": M counts only runs that are part of the registration (nonce in log)."""
    registration = entry.submission.registration
    if registration is None:
        return None
    counted = Run.objects.filter(submission=entry.submission, outside_registration=False).values_list(
        "competition__slug", flat=True
    )
    facts = registration_facts(entry.submission)
    assert facts is not None  # the submission has a registration
    reported, missing = seeds_reported(registration=facts, counted=counted)
    return EntryRegistration(
        id=registration.pk,
        agent_name=registration.agent_name,
        agent_version=registration.agent_version,
        seeds_registered=registration.seeds,
        seeds_reported=reported,
        runs_missing=missing,
        competitions=len(registration.competitions),
        image=registration.image,
    )


IMPORTED_WORDS = "No registration: imported from MLE-bench's table."


@dataclass(frozen=True, kw_only=True)
class RegistrationRow:
    """One public registration of the entry's team, agent and version, and what it does to this entry's numbers."""

    id: int
    seeds_registered: int
    seeds_reported: int
    competitions: int
    deadline: str
    state: str  # this_entry, other_entry, counted (unnamed: its runs are failures here), withdrawn, lapsed
    runs_counted_as_failures: int
    named_by: int | None  # the submission that names it
    withdrawal_reason: str  # public once a maintainer accepted the withdrawal
    withdrawal_pending: bool
    sentence: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, kw_only=True)
class EntryRegistrations:
    imported: bool
    sentence: str  # one line over the list
    rows: list[RegistrationRow]

    def as_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "sentence": self.sentence, "rows": [row.as_dict() for row in self.rows]}


def _reported(registration: Registration, submission_id: int) -> tuple[int, int]:
    counted = Run.objects.filter(submission_id=submission_id, outside_registration=False).values_list(
        "competition__slug", flat=True
    )
    facts = RegistrationFacts(
        id=registration.pk, nonce="", competitions=tuple(registration.competitions), seeds=registration.seeds
    )
    return seeds_reported(registration=facts, counted=counted)


def entry_registrations(entry: Entry) -> EntryRegistrations:
    """The registrations of the entry's team for the same agent and version that are public (an entry names it,
    or its deadline passed): "9 seeds registered, 3 reported", the ones whose seeds count as failures here, and
    the withdrawn ones with their reason. An imported entry has none and says so."""
    submission = entry.submission
    if submission.origin == Submission.Origin.IMPORT:
        return EntryRegistrations(imported=True, sentence=IMPORTED_WORDS, rows=[])
    agent = submission_agent(submission)
    found: list[Registration] = []
    if agent is not None:
        visible = Q(deadline__lt=timezone.now()) | Q(submissions__status=Submission.Status.PUBLISHED)
        found = list(
            Registration.objects.filter(team_id=submission.team_id, agent_name=agent[0], agent_version=agent[1])
            .filter(visible | Q(pk=submission.registration_id or 0))
            .prefetch_related("withdrawals", "submissions")
            .distinct()
            .order_by("pk")
        )
    counted = {int(r["id"]) for r in submission.unnamed_registrations or []}
    rows = [_registration_row(registration, submission=submission, counted=counted) for registration in found]
    failures = sum(row.runs_counted_as_failures for row in rows if row.state != "this_entry")
    if not rows:
        sentence = "Not pre-registered: no registration of this agent and version is public, so how many seeds were "
        sentence += "run is the team's word."
    elif failures:
        sentence = f"{failures} registered run(s) never reported in any bundle count as failures in every figure above."
    else:
        sentence = f"{len(rows)} public registration(s) of {entry.agent} {entry.agent_version}."
    return EntryRegistrations(imported=False, sentence=sentence, rows=rows)


def _registration_row(registration: Registration, *, submission: Submission, counted: set[int]) -> RegistrationRow:
    withdrawals = list(registration.withdrawals.all())
    accepted = next((w for w in withdrawals if w.status == Withdrawal.Status.ACCEPTED), None)
    pending = any(w.status == Withdrawal.Status.PENDING for w in withdrawals)
    naming = sorted(s.pk for s in registration.submissions.all() if s.status != Submission.Status.FAILED)
    named_by = submission.pk if submission.pk in naming else (naming[0] if naming else None)
    reported, missing = _reported(registration, named_by) if named_by is not None else (0, 0)
    head = f"{registration.seeds} seeds registered, {reported} reported"
    runs = registration.seeds * len(registration.competitions)
    failures = 0
    if named_by == submission.pk:
        state, failures = "this_entry", missing
        sentence = f"{head} (registration {registration.pk}, named by this entry)"
        if missing:
            unreported = registration.seeds - reported
            sentence += f"; the {unreported} seed(s) not reported ({missing} run(s)) count as failures"
    elif named_by is not None:
        state = "other_entry"
        sentence = f"{head} (registration {registration.pk}, named by submission {named_by})"
    elif accepted is not None:
        state = "withdrawn"
        sentence = f"{head} (registration {registration.pk}): withdrawn, a maintainer accepted the team's reason"
    elif registration.pk in counted:
        state, failures = "counted", runs
        sentence = (
            f"{head} (registration {registration.pk}, never reported): its {runs} registered run(s) count as failures"
        )
    else:
        state = "lapsed"
        sentence = f"{head} (registration {registration.pk}): its deadline passed; it is counted at the next check"
    if pending and state != "withdrawn":
        sentence += "; the team asked to withdraw it, a maintainer decides"
    return RegistrationRow(
        id=registration.pk,
        seeds_registered=registration.seeds,
        seeds_reported=reported,
        competitions=len(registration.competitions),
        deadline=registration.deadline.isoformat(),
        state=state,
        runs_counted_as_failures=failures,
        named_by=named_by,
        withdrawal_reason=accepted.reason if accepted is not None else "",
        withdrawal_pending=pending and accepted is None,
        sentence=sentence + ".",
    )


def entry_get(*, entry_id: int) -> Entry:
    """A published entry (anyone may see it), or Http404."""
    entry = (
        Entry.objects.select_related("submission__team", "submission__benchmark", "submission__registration")
        .filter(pk=entry_id, submission__status=Submission.Status.PUBLISHED)
        .first()
    )
    if entry is None:
        raise Http404(f"No published entry {entry_id}.")
    return entry


def entry_level_facts(*, submission: Submission, flags: list[Flag]) -> LevelFacts:
    """What the entry's evidence level depends on: where its runs ran, its registration, its logs. A flag about
    missing logs or a missing nonce keeps the logs incomplete even once a reviewer accepted it. No audit runs yet."""
    found = {(flag.code, flag.key) for flag in flags}
    return LevelFacts(
        hosted=submission.origin == Submission.Origin.HOSTED,
        imported=submission.origin == Submission.Origin.IMPORT,
        registered=submission.registration_id is not None,
        has_logs=("unscanned_evidence", "no_logs") not in found,
        has_nonce=("registration", "no_nonce") not in found,
    )


@dataclass(frozen=True)
class EntryLevel:
    level: str
    steps: list[str]  # one sentence per missing step to the next level up


def entry_level(*, entry: Entry, flags: list[Flag]) -> EntryLevel:
    """The entry's evidence level as stored, and how to reach the next one."""
    facts = entry_level_facts(submission=entry.submission, flags=flags)
    # The stored level is what the board shows; the steps follow from the same facts.
    return EntryLevel(level=entry.evidence_level or evidence_level(facts), steps=next_level_steps(facts))


@dataclass(frozen=True)
class SeedMatrix:
    seeds: list[int]
    rows: list[dict]  # {"competition", "tier", "cells": [cell or None per seed]}


def entry_matrix(entry: Entry) -> SeedMatrix:
    """Competition × seed: medal class, score, thresholds, claimed against re-graded."""
    self_reported = entry.verified == Entry.Verified.SELF_REPORTED
    # Plain rows with the competition's slug and tier, not model instances (the competition's other columns hold
    # whole leaderboards as JSON). Typed loosely: django-stubs mistypes named rows that span a relation.
    runs: list[Any] = list(
        Run.objects.filter(submission_id=entry.submission_id)
        .order_by("competition__slug", "seed")
        .values_list(
            "competition__slug", "competition__tier", "seed", "run_group", "run_id", "claimed", "regraded", named=True
        )
    )
    seeds = sorted({run.seed for run in runs})
    by_competition: dict[str, dict] = {}
    for run in runs:
        regraded, claimed = run.regraded or None, run.claimed or None
        shown = claimed if self_reported else regraded
        row = by_competition.setdefault(
            run.competition__slug, {"competition": run.competition__slug, "tier": run.competition__tier, "cells": {}}
        )
        claimed_medal = _medal(claimed) if claimed else None
        row["cells"][run.seed] = {
            "medal": _medal(shown),
            "score": (shown or {}).get("score"),
            "claimed_score": (claimed or {}).get("score"),
            "claimed_medal": claimed_medal,
            "regraded_medal": None if self_reported else _medal(regraded),
            "differs": bool(
                claimed
                and not self_reported
                and (claimed_medal != _medal(regraded) or claimed.get("score") != (regraded or {}).get("score"))
            ),
            "thresholds": _thresholds(shown or claimed),
            "reason": (regraded or {}).get("reason") or "",
            "run": f"{run.run_group}/{run.run_id}",
        }
    rows = [{**row, "cells": [row["cells"].get(seed) for seed in seeds]} for row in by_competition.values()]
    return SeedMatrix(seeds=seeds, rows=rows)


def entry_rates(entry: Entry, *, excluding_leaky: bool = False) -> list[dict]:
    """Per tier: the shown aggregate's gold / silver / bronze / above-median / valid / any-medal rates."""
    variant = "excluding_leaky" if excluding_leaky else "all"
    out = []
    for tier in TIERS:
        figures = (entry.tiers.get(tier) or {}).get(variant)
        if not figures or not figures.get("uses"):
            continue
        agg = figures[figures["uses"]]
        out.append(
            {
                "tier": tier,
                "label": TIER_LABELS[tier],
                "uses": figures["uses"],
                "seeds": agg["seeds"],
                "copies": agg.get("copies", 0),  # runs left out: copies of an earlier seed's file
                "seeds_with_copies": agg.get("seeds_with_copies", agg["seeds"]),
                "other": figures["padded" if figures["uses"] == "complete" else "complete"],
                **{
                    name: agg[name]
                    for name in (
                        "any_medal",
                        "gold",
                        "silver",
                        "bronze",
                        "above_median",
                        "valid_submission",
                        "submission_exists",
                    )
                },
            }
        )
    return out


def entry_ranks(entry: Entry) -> dict[str, BoardRow]:
    return {row.tier: row for row in entry.rows.filter(excluding_leaky=False)}
