"""The checking step: aggregates per tier, flags, comparability, the final status, the team's email."""

import dataclasses
import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from competitions.models import Competition
from competitions.models import KnownIssue as KnownIssueRow
from grading import checks
from grading.bundles.errors import BundleError
from grading.bundles.manifest import parse_manifest
from grading.checks import duplicate_submissions, registration
from grading.checks.context import (
    BoardVersion,
    CheckContext,
    CheckSettings,
    CompetitionFacts,
    KnownIssue,
    RunFiles,
)
from grading.checks.registration import outcomes_as_registered, outcomes_with_unnamed
from grading.engine.aggregation import AGGREGATION_VERSION, aggregate, format_mean_sem
from grading.engine.tiers import tiers_of_split
from grading.models import Flag, ReviewEvent, Run, Submission, TierAggregate
from grading.selectors import (
    registration_facts,
    run_outcome,
    tier_members,
    unnamed_as_stored,
    unnamed_registration_facts,
)
from grading.services.prints import earlier_entries, prints_store
from grading.services.publication import submission_publish_if_ready
from grading.services.submissions import submission_bundle_root
from portal.accounts.services import team_mail

logger = logging.getLogger(__name__)
S = Submission.Status


def submission_finish(*, submission_id: int) -> None:
    submission = (
        Submission.objects.select_related("team", "benchmark").filter(pk=submission_id, status=S.CHECKING).first()
    )
    if submission is None:
        return
    runs = list(Run.objects.filter(submission=submission).select_related("competition"))
    members = tier_members(benchmark_id=submission.benchmark_id, tiers=tiers_of_split(submission.split))
    context = check_context(submission=submission, runs=runs, members=members)
    _hashes_store(runs=runs, hashes=context.submission_hashes(), copy_keys=context.copy_keys())
    outside = _outside_registration_store(runs=runs, context=context)
    # A run we failed to grade counts for nothing (neither the team's failure nor a result) until it is re-graded.
    outcomes = [
        run_outcome(run, claimed=submission.report_only) for run in runs if not run.grading_error and run not in outside
    ]
    if context.registration is not None:
        ungraded = Counter(run.competition.slug for run in runs if run.grading_error and run not in outside)
        outcomes = outcomes_as_registered(outcomes, registration=context.registration, ungraded=ungraded)
    outcomes = outcomes_with_unnamed(outcomes, context.unnamed_registrations)
    flags = checks.run_checks(context)
    prints_store(submission=submission, index=duplicate_submissions.entry_index(context))

    with transaction.atomic():
        aggregates_store(submission_id=submission_id, outcomes=outcomes, members=members)
        flags_store(submission_id=submission_id, flags=flags)
        Submission.objects.filter(pk=submission_id).update(
            aggregation_version=AGGREGATION_VERSION,
            unnamed_registrations=unnamed_as_stored(context.unnamed_registrations),
        )
        submission_publish_if_ready(submission_id=submission_id)
        if not Submission.objects.filter(pk=submission_id, status=S.CHECKING).exists():
            transaction.on_commit(lambda: submission_notify(submission_id=submission_id))


def aggregates_store(*, submission_id: int, outcomes: list, members: dict[str, list[str]]) -> None:
    """Each tier's complete and padded aggregate of these outcomes."""
    for tier, split in members.items():
        for kind in TierAggregate.Kind:
            TierAggregate.objects.update_or_create(
                submission_id=submission_id,
                tier=tier,
                kind=kind,
                defaults={
                    "data": aggregate(outcomes, split=split, padded=kind == TierAggregate.Kind.PADDED),
                    "version": AGGREGATION_VERSION,
                },
            )


def _outside_registration_store(*, runs: list[Run], context: CheckContext) -> list[Run]:
    """Mark the runs whose logs lack the registration's nonce (they do not count), and give them back."""
    keys = {run.key for run in registration.runs_without_nonce(context)}
    outside = [run for run in runs if f"{run.competition.slug}/seed-{run.seed}" in keys]
    Run.objects.filter(submission_id__in={run.submission_id for run in runs}).update(outside_registration=False)
    Run.objects.filter(pk__in=[run.pk for run in outside]).update(outside_registration=True)
    return outside


def _hashes_store(*, runs: list[Run], hashes: dict[str, str], copy_keys: dict[str, str]) -> None:
    """Each run's submission SHA-256 and copy key, so the aggregation (here and on the board) counts a copy
    of an earlier seed's file (byte-identical or once normalised) once."""
    changed = []
    for run in runs:
        key = f"{run.competition.slug}/seed-{run.seed}"
        digest, copy_key = hashes.get(key, ""), copy_keys.get(key, "")
        if (digest, copy_key) != (run.submission_sha256, run.copy_key):
            run.submission_sha256, run.copy_key = digest, copy_key
            changed.append(run)
    Run.objects.bulk_update(changed, ["submission_sha256", "copy_key"], batch_size=1000)


def _decided_evidence(evidence: Any) -> Any:
    """The evidence a decision is about: a log hit's ``match`` (where the review page highlights it) is
    presentation, and a re-check that only adds it (flags checked before it was recorded) reopens nothing."""
    if not isinstance(evidence, dict) or not isinstance(evidence.get("hits"), list):
        return evidence
    hits = [{k: v for k, v in h.items() if k != "match"} if isinstance(h, dict) else h for h in evidence["hits"]]
    return {**evidence, "hits": hits}


def flag_fingerprint(flag: checks.FlagData) -> str:
    """What a maintainer's decision was about: a re-check that changes any of it reopens the decision."""
    said = [flag.code, flag.key, flag.severity, sorted(flag.tiers), flag.message, _decided_evidence(flag.evidence)]
    if flag.private:  # only when there is any, so flags without it keep the fingerprints stored before it existed
        said.append(flag.private)
    body = json.dumps(
        said,
        sort_keys=True,
        default=str,
        ensure_ascii=True,
    )
    return hashlib.sha256(body.encode()).hexdigest()


def flags_store(*, submission_id: int, flags: list[checks.FlagData], only: tuple[str, str] | None = None) -> None:
    """Store the checks' flags: unchanged ones keep their decision, changed decided ones are reopened,
    undecided ones no longer raised are deleted (decided ones stay, with their history). ``only``: the one
    (code, key) that was checked again; the other flags are left as they are."""
    found = Flag.objects.select_for_update().filter(submission_id=submission_id)
    if only is not None:
        found = found.filter(code=only[0], key=only[1])
    existing = {(f.code, f.key): f for f in found}
    for flag in flags:
        fingerprint = flag_fingerprint(flag)
        fields: dict[str, Any] = {
            "severity": flag.severity,
            "tiers": flag.tiers,
            "message": flag.message,
            "evidence": flag.evidence,
            "private_evidence": flag.private,
            "fingerprint": fingerprint,
        }
        row = existing.pop((flag.code, flag.key), None)
        if row is None:
            Flag.objects.create(submission_id=submission_id, code=flag.code, key=flag.key, **fields)
            continue
        if row.fingerprint == fingerprint:
            if row.evidence != flag.evidence or row.private_evidence != flag.private:
                # the same evidence, with the highlight's place added (or maintainer-only details first stored)
                Flag.objects.filter(pk=row.pk).update(evidence=flag.evidence, private_evidence=flag.private)
            continue
        decided = bool(row.decision or row.resolution)
        if decided and row.fingerprint:
            fields.update(decision="", decided_by=None, decided_at=None, resolution="")
            ReviewEvent.objects.create(
                submission_id=submission_id,
                flag=row,
                kind=ReviewEvent.Kind.REOPENED,
                reason=f"The re-check changed the evidence of {flag.code} ({flag.key}); the earlier decision "
                f"({row.decision or 'resolved'}) no longer applies.",
            )
        Flag.objects.filter(pk=row.pk).update(**fields)
    stale = [row.pk for row in existing.values() if not row.decision and not row.resolution]
    Flag.objects.filter(pk__in=stale).delete()


def check_context(*, submission: Submission, runs: list[Run], members: dict[str, list[str]]) -> CheckContext:
    """The checks' view of a submission: its unpacked bundle, claims and re-grade, the board's facts."""
    root = submission_bundle_root(submission)
    try:
        manifest = parse_manifest(data=submission.manifest) if submission.manifest else None
    except BundleError:
        manifest = None
    layout_root = _layout_root(root)
    run_files = []
    for run in runs:
        folder = layout_root / "runs" / run.run_group / run.run_id if layout_root else None
        file = root / run.submission_file if run.submission_file else None
        run_files.append(
            RunFiles(
                competition_id=run.competition.slug,
                seed=run.seed,
                run_path=f"runs/{run.run_group}/{run.run_id}",
                folder=folder if folder is not None and folder.is_dir() else None,
                submission=file if file is not None and file.is_file() else None,
                # With no re-grade, the team's claim for the run has nothing to be compared with yet.
                claimed=None if run.grading_error else run.claimed,
                regraded=run.regraded or {},
                grading_error=run.grading_error,
                agreement=run.answer_agreement,
            )
        )
    benchmark = submission.benchmark
    context = CheckContext(
        manifest=manifest,
        runs=tuple(run_files),
        report_claims=submission.report_claims or {},
        report_only=submission.report_only,
        competitions=competition_facts(benchmark_id=benchmark.pk),
        tier_members=members,
        known_issues=known_issues(benchmark_id=benchmark.pk),
        board=BoardVersion(name=benchmark.name, version=benchmark.version, commit=benchmark.commit),
        settings=check_settings(),
        hosted=submission.origin == Submission.Origin.HOSTED,
        registration=registration_facts(submission),
        unnamed_registrations=unnamed_registration_facts(submission),
    )
    # Other teams' earlier entries that share a hash with this one (the index's lookups; the hashes are kept
    # in the context's cache, so the checks do not compute them again).
    others = earlier_entries(submission=submission, index=duplicate_submissions.entry_index(context))
    return dataclasses.replace(context, other_entries=tuple(others), cache=context.cache)


def check_settings() -> CheckSettings:
    return CheckSettings(
        scan_max_hits=settings.CHECK_SCAN_MAX_HITS,
        scan_context_lines=settings.CHECK_SCAN_CONTEXT_LINES,
        scan_max_line_bytes=settings.CHECK_SCAN_MAX_LINE_BYTES,
        scan_max_bytes=settings.CHECK_SCAN_MAX_BYTES,
        implausible_margin=settings.CHECK_IMPLAUSIBLE_MARGIN_PERCENT / 100,
        code_similarity=settings.CHECK_CODE_SIMILARITY_PERCENT / 100,
        runtime_tolerance=settings.CHECK_RUNTIME_TOLERANCE_PERCENT / 100,
        answer_copy_agreement=settings.CHECK_ANSWER_COPY_AGREEMENT_PERCENT / 100,
        answer_copy_exact=settings.CHECK_ANSWER_COPY_EXACT_PERCENT / 100,
        answer_copy_error_ratio=settings.CHECK_ANSWER_COPY_ERROR_RATIO_PERCENT / 100,
        answer_copy_confidence=settings.CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE / 1000,
    )


def competition_facts(*, benchmark_id: int) -> dict[str, CompetitionFacts]:
    return {
        c.slug: CompetitionFacts(
            slug=c.slug,
            answers_file=c.answers_file,
            higher_is_better=c.higher_is_better,
            is_lower_better=c.is_lower_better,
            gold_threshold=c.gold_threshold,
            median_threshold=c.median_threshold,
            leaderboard_best=c.leaderboard_scores[0] if c.leaderboard_scores else None,
            submission_columns=tuple(c.submission_columns or ()),
            id_column=c.id_column,
        )
        for c in Competition.objects.filter(benchmark_id=benchmark_id)
    }


def known_issues(*, benchmark_id: int) -> tuple[KnownIssue, ...]:
    return tuple(
        KnownIssue(competition=i.competition_slug, kind=i.kind, description=i.description, data=i.data or {})
        for i in KnownIssueRow.objects.filter(benchmark_id=benchmark_id)
    )


def _layout_root(root: Path) -> Path | None:
    if (root / "manifest.json").is_file() or (root / "runs").is_dir():
        return root
    if root.is_dir():
        inner = [child for child in root.iterdir() if child.is_dir()]
        if len(inner) == 1:
            return inner[0]
    return None


def submission_notify(*, submission_id: int) -> None:
    """Email the team once when grading ends (console backend by default)."""
    claimed = Submission.objects.filter(pk=submission_id, notified_at__isnull=True).update(notified_at=timezone.now())
    if not claimed:
        return
    submission = Submission.objects.select_related("team").get(pk=submission_id)
    lines = [f"Submission {submission.pk} of {submission.team.name} is {submission.get_status_display()}."]
    if submission.status_reason:
        lines.append(submission.status_reason)
    for agg in submission.aggregates.filter(kind=TierAggregate.Kind.COMPLETE).order_by("tier"):
        if agg.data:
            lines.append(f"{agg.tier}: any medal {format_mean_sem(agg.data)} % over {agg.data['seeds']} seed(s)")
    team_mail(team=submission.team, subject=f"Submission {submission.pk}: {submission.status}", lines=lines)
