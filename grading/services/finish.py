"""The checking step: aggregates per tier, flags, comparability, the final status, the team's email."""

import logging
from collections import Counter

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from competitions.models import Competition
from grading import checks
from grading.models import Flag, Run, Submission, TierAggregate
from grading.services.submissions import submission_transition
from leaderboard.aggregation import AGGREGATION_VERSION, RunOutcome, aggregate, format_mean_sem

logger = logging.getLogger(__name__)
S = Submission.Status
TIER_SPLITS = {"low": "low", "medium": "medium", "high": "high", "all": "split75"}
SPLIT_TIERS = {"low": ["low"], "medium": ["medium"], "high": ["high"], "split75": ["low", "medium", "high", "all"]}


def tier_members(*, benchmark_id: int, tiers: list[str]) -> dict[str, list[str]]:
    competitions = list(Competition.objects.filter(benchmark_id=benchmark_id).values_list("slug", "splits"))
    return {tier: sorted(slug for slug, splits in competitions if TIER_SPLITS[tier] in splits) for tier in tiers}


def _outcome(run: Run) -> RunOutcome:
    report = run.regraded or {}
    return RunOutcome(
        competition_id=run.competition.slug, seed=run.seed,
        submission_exists=bool(report.get("submission_exists")), valid_submission=bool(report.get("valid_submission")),
        gold=bool(report.get("gold_medal")), silver=bool(report.get("silver_medal")),
        bronze=bool(report.get("bronze_medal")), above_median=bool(report.get("above_median")),
        medals_known=report.get("medals_known", True),
    )


def submission_finish(*, submission_id: int) -> None:
    submission = Submission.objects.select_related("team").filter(pk=submission_id, status=S.CHECKING).first()
    if submission is None:
        return
    runs = list(Run.objects.filter(submission=submission).select_related("competition"))
    tiers = SPLIT_TIERS.get(submission.split, [])
    members = tier_members(benchmark_id=submission.benchmark_id, tiers=tiers)
    outcomes = [_outcome(run) for run in runs]

    graded = [
        checks.GradedRun(competition_id=run.competition.slug, seed=run.seed, run_path=f"runs/{run.run_group}/{run.run_id}",
                         has_file=bool(run.submission_file), claimed=run.claimed, regraded=run.regraded or {})
        for run in runs
    ]
    # Every entry of the team's reports, matched to a run or not (read at intake); older submissions
    # recorded only the matched ones.
    report = submission.report_claims or {}
    claimed_ids = Counter(report.get("entries_per_competition")
                          or Counter(run.claimed["competition_id"] for run in runs if run.claimed))
    flags = [
        *checks.score_mismatches(graded),
        *checks.missing_submissions(graded),
        *checks.coverage(runs=graded, split_members=members, seeds_declared=int(submission.manifest.get("seeds") or 0)),
        *checks.report_without_runs(claimed_ids=claimed_ids, runs=graded),
        *checks.report_problems(report.get("problems") or []),
    ]
    if submission.report_only:
        flags.append(checks.FlagData(code="report_only", severity="blocking", key="bundle",
                                     message="The bundle holds only grading reports: nothing could be re-graded."))

    with transaction.atomic():
        for tier, split in members.items():
            for kind in TierAggregate.Kind:
                TierAggregate.objects.update_or_create(
                    submission=submission, tier=tier, kind=kind,
                    defaults={"data": aggregate(outcomes, split=split, padded=kind == TierAggregate.Kind.PADDED),
                              "version": AGGREGATION_VERSION},
                )
        for flag in flags:
            Flag.objects.update_or_create(
                submission=submission, code=flag.code, key=flag.key,
                defaults={"severity": flag.severity, "tiers": flag.tiers, "message": flag.message, "evidence": flag.evidence},
            )
        blocking = [f for f in flags if f.severity == Flag.Severity.BLOCKING]
        complete = {tier: (aggregate(outcomes, split=split, padded=False) or {}).get("seeds", 0) for tier, split in members.items()}
        comparable = bool(tiers) and not submission.report_only and not blocking and all(n >= 3 for n in complete.values())
        Submission.objects.filter(pk=submission_id).update(comparable=comparable, aggregation_version=AGGREGATION_VERSION)
        to = S.IN_REVIEW if any(f.severity != Flag.Severity.INFO for f in flags) else S.PUBLISHED
        reason = f"{len(flags)} flag(s) for a maintainer to review" if to == S.IN_REVIEW else ""
        if submission_transition(submission_id=submission_id, to=to, reason=reason, expected=(S.CHECKING,)):
            transaction.on_commit(lambda: submission_notify(submission_id=submission_id))


def submission_notify(*, submission_id: int) -> None:
    """Email the team once when grading ends (console backend by default)."""
    claimed = Submission.objects.filter(pk=submission_id, notified_at__isnull=True).update(notified_at=timezone.now())
    if not claimed:
        return
    submission = Submission.objects.select_related("team").get(pk=submission_id)
    recipients = list(submission.team.members.exclude(email="").values_list("email", flat=True))
    if not recipients:
        return
    lines = [f"Submission {submission.pk} of {submission.team.name} is {submission.get_status_display()}."]
    if submission.status_reason:
        lines.append(submission.status_reason)
    for agg in submission.aggregates.filter(kind=TierAggregate.Kind.COMPLETE).order_by("tier"):
        if agg.data:
            lines.append(f"{agg.tier}: any medal {format_mean_sem(agg.data)} % over {agg.data['seeds']} seed(s)")
    send_mail(subject=f"Submission {submission.pk}: {submission.status}", message="\n".join(lines),
              from_email=settings.DEFAULT_FROM_EMAIL, recipient_list=recipients)


