"""Bringing an existing MLE-bench board onto the portal: ``manage.py import_mlebench_runs``.

Each experiment of the operator's ENTRIES.csv becomes one published, report-only entry
(``Submission.Origin.IMPORT``, keyed by its experiment id) of the team IMPORT_TEAM_NAME: its runs carry the
reports' own results as claims, never re-graded, so it is never comparable and the board lists it as
self-reported. How the checkout is read and the seeds are numbered: grading/bundles/mlebench_checkout.py.

Everything is read and checked before anything is written, and the writes are one transaction, so a
problem leaves the database as it was. An experiment whose inputs hash as before is left alone (not a row
touched): running the import twice changes nothing. A changed one is updated in place (runs and aggregates
replaced, manifest rewritten), keeping its id, its status and any maintainer's decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from django.db import IntegrityError, transaction

from competitions.models import Benchmark, Competition
from competitions.selectors import current_benchmark
from grading.bundles.mlebench_checkout import ExperimentPlan, ImportRefused, import_plans
from grading.engine.aggregation import AGGREGATION_VERSION, aggregate
from grading.engine.tiers import TIERS
from grading.models import Run, Submission, TierAggregate
from grading.selectors import run_outcome, tier_members
from grading.services.publication import submission_publish_if_ready
from grading.signals import board_cause
from portal.accounts.models import Team

__all__ = ["IMPORT_TEAM_NAME", "ExperimentResult", "ImportRefused", "entry_manifest", "mlebench_import"]

IMPORT_TEAM_NAME: Final = "MLE-bench board (imported)"
IMPORTED_FROM: Final = "mle-bench runs"
SPLIT: Final = "split75"  # an experiment of MLE-bench's board ran split75, so it is listed in every tier


@dataclass(frozen=True, kw_only=True)
class ExperimentResult:
    experiment_id: str
    agent: str
    action: str  # "created", "updated" or "unchanged"
    submission_id: int
    status: str
    runs: int
    aggregates: Mapping[str, Mapping[str, dict | None]]  # tier -> "complete" | "padded" -> SPEC's AGG or None
    warnings: tuple[str, ...]


def mlebench_import(*, checkout: Path, entries: Path) -> list[ExperimentResult]:
    """Import every experiment of ENTRIES.csv from an MLE-bench checkout, in its row order.

    Raises ImportRefused, listing every problem found, and then writes nothing."""
    benchmark = current_benchmark()
    if benchmark is None:
        raise ImportRefused("No benchmark is loaded on this portal yet: run manage.py load_competitions first.")
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark)}
    members = tier_members(benchmark_id=benchmark.pk, tiers=TIERS)
    plans = import_plans(checkout=Path(checkout), entries=Path(entries), registry=competitions.keys(), members=members)
    try:
        with transaction.atomic():
            team = _import_team()
            return [
                _experiment_write(plan=plan, benchmark=benchmark, team=team, competitions=competitions, members=members)
                for plan in plans
            ]
    except IntegrityError:
        raise ImportRefused(
            "Another import wrote the same entries at the same time; nothing of this one was written: run it again."
        ) from None


def entry_manifest(*, plan: ExperimentPlan, benchmark: Benchmark) -> dict[str, Any]:
    """What the board reads of an imported entry, in the bundle manifest's shape (SPEC section 2)."""
    entry = plan.entry
    agent: dict[str, Any] = {"name": entry.agent}
    if entry.source_url:
        agent["source_url"] = entry.source_url
    agent["open_source"] = bool(entry.source_url)
    manifest: dict[str, Any] = {
        "schema": "bundle-v1",
        "agent": agent,
        "llms": list(entry.llms),
        "benchmark": {"name": benchmark.name, "version": benchmark.version, "split": SPLIT},
    }
    if entry.runtime_hours is not None:
        manifest["runtime_hours"] = entry.runtime_hours
    manifest.update(
        notes=entry.notes,
        date=entry.date,
        imported={
            "from": IMPORTED_FROM,
            "experiment_id": entry.experiment_id,
            "run_groups": list(plan.run_groups),
            "reports": list(plan.reports),
            "content_sha256": plan.content_sha256,
        },
    )
    return manifest


def _import_team() -> Team:
    team = Team.objects.filter(name__iexact=IMPORT_TEAM_NAME).first()
    if team is None:
        return Team.objects.create(name=IMPORT_TEAM_NAME)
    if team.memberships.exists():
        # Its members would see and answer for the imported entries: a team with people is not the import's.
        raise ImportRefused(
            f"The team {team.name!r} has members, so it is not the import's own; remove them "
            "or rename the team, then run the import again."
        )
    return team


def _experiment_write(
    *,
    plan: ExperimentPlan,
    benchmark: Benchmark,
    team: Team,
    competitions: Mapping[str, Competition],
    members: Mapping[str, Sequence[str]],
) -> ExperimentResult:
    existing = (
        Submission.objects.select_for_update()
        .filter(benchmark=benchmark, origin=Submission.Origin.IMPORT, external_id=plan.entry.experiment_id)
        .first()
    )
    runs = [
        Run(
            competition=competitions[r.competition_id],
            seed=r.seed,
            run_group=r.run_group,
            run_id=r.run_id,
            submission_file="",
            status=Run.Status.DONE,
            claimed=r.claimed,
            regraded=None,
        )
        for r in plan.runs
    ]
    outcomes = [run_outcome(run, claimed=True) for run in runs]
    aggregates = {
        tier: {
            kind.value: aggregate(outcomes, split=members[tier], padded=kind == TierAggregate.Kind.PADDED)
            for kind in TierAggregate.Kind
        }
        for tier in TIERS
    }
    imported = ((existing.manifest or {}).get("imported") or {}) if existing is not None else {}
    if existing is not None and imported.get("content_sha256") == plan.content_sha256:
        return _result(plan=plan, action="unchanged", submission=existing, aggregates=aggregates)

    fields = {
        "manifest": entry_manifest(plan=plan, benchmark=benchmark),
        "report_only": True,
        "report_claims": {"entries_per_competition": dict(plan.entries_per_competition), "problems": []},
        "progress_done": len(runs),
        "progress_total": len(runs),
        "aggregation_version": AGGREGATION_VERSION,
    }
    if existing is None:
        submission = Submission.objects.create(
            team=team,
            benchmark=benchmark,
            origin=Submission.Origin.IMPORT,
            external_id=plan.entry.experiment_id,
            status=Submission.Status.CHECKING,
            **fields,
        )
        action = "created"
    else:
        # Status, team and decisions stay: a maintainer's verdict outlives a refresh of the numbers.
        submission = existing
        Run.objects.filter(submission=submission).delete()
        TierAggregate.objects.filter(submission=submission).delete()
        Submission.objects.filter(pk=submission.pk).update(**fields)
        action = "updated"
    for run in runs:
        run.submission = submission
    Run.objects.bulk_create(runs)
    TierAggregate.objects.bulk_create(
        TierAggregate(submission=submission, tier=tier, kind=kind, data=data, version=AGGREGATION_VERSION)
        for tier, by_kind in aggregates.items()
        for kind, data in by_kind.items()
    )
    # No fairness checks: a report-only entry is non-comparable by the rule, and nothing else can block it.
    with board_cause(
        kind="import",
        experiment_id=plan.entry.experiment_id,
        reason=f"{action} by an import of MLE-bench's runs ({IMPORTED_FROM})",
    ):
        submission_publish_if_ready(submission_id=submission.pk)
    submission.refresh_from_db()
    return _result(plan=plan, action=action, submission=submission, aggregates=aggregates)


def _result(
    *, plan: ExperimentPlan, action: str, submission: Submission, aggregates: Mapping[str, Mapping[str, dict | None]]
) -> ExperimentResult:
    return ExperimentResult(
        experiment_id=plan.entry.experiment_id,
        agent=plan.entry.agent,
        action=action,
        submission_id=submission.pk,
        status=submission.status,
        runs=len(plan.runs),
        aggregates=aggregates,
        warnings=plan.warnings,
    )
