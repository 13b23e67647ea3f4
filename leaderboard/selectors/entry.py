"""An entry's page: the entry, its seeds × competitions matrix, its rates per tier and its ranks."""

from dataclasses import dataclass
from typing import Any

from django.http import Http404

from grading.checks.registration import seeds_reported
from grading.engine.tiers import TIER_LABELS, TIERS
from grading.models import Audit, Flag, Run, Submission
from grading.selectors import registration_facts
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
    missing logs or a missing nonce keeps the logs incomplete even once a reviewer accepted it. Its random audit
    counts once it passed (runners/services/audits.py)."""
    found = {(flag.code, flag.key) for flag in flags}
    return LevelFacts(
        hosted=submission.origin == Submission.Origin.HOSTED,
        imported=submission.origin == Submission.Origin.IMPORT,
        registered=submission.registration_id is not None,
        has_logs=("unscanned_evidence", "no_logs") not in found,
        has_nonce=("registration", "no_nonce") not in found,
        audit_passed=Audit.objects.filter(submission=submission, status=Audit.Status.PASSED).exists(),
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


AUDIT_RUN_FIELDS = ("competition", "seed", "status", "score", "valid", "elapsed_seconds", "reason")


def entry_audit(submission_id: int) -> dict[str, Any] | None:
    """The entry's random audit as the entry page and API show it (README "Audits"): how it was chosen (anyone
    recomputes the choice from the head and the submission's id: mleportal verify does), its own runs, the test's
    figures and its outcome; None for an entry that has none (run by the portal, imported, or from before)."""
    audit = Audit.objects.filter(submission_id=submission_id).first()
    if audit is None:
        return None
    return {
        "status": audit.status,
        "reason": audit.reason,
        "image": audit.image,
        "head": {"seq": audit.head_seq, "hash": audit.head_hash},
        "submission_id": submission_id,
        "seed": audit.seed,
        "k": len(audit.competitions) if audit.competitions else 0,
        "candidates": list(audit.candidates),
        "competitions": list(audit.competitions),
        "seeds": audit.seeds,
        "runs": [{key: run.get(key) for key in AUDIT_RUN_FIELDS} for run in audit.runs],
        "comparison": audit.comparison or None,
        "created_at": audit.created_at.isoformat(),
        "finished_at": audit.finished_at.isoformat() if audit.finished_at else None,
    }
