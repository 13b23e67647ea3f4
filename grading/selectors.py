from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import Http404

from grading.engine.report import build_run_group_report
from grading.engine.safe_json import restored_report
from grading.engine.report_parser import parse_competition_report
from grading.models import Run, Submission, TierAggregate
from portal.accounts.selectors import is_maintainer


def submissions_visible_to(user: AbstractUser | AnonymousUser) -> QuerySet[Submission]:
    """A team sees its own submissions; everyone sees published ones; maintainers see all."""
    queryset = Submission.objects.select_related("team")
    if is_maintainer(user):
        return queryset
    published = Q(status=Submission.Status.PUBLISHED)
    if user.is_authenticated:
        return queryset.filter(published | Q(team__memberships__user=user)).distinct()
    return queryset.filter(published)


def submissions_of_teams(*, user: AbstractUser) -> QuerySet[Submission]:
    return Submission.objects.filter(team__memberships__user=user).select_related("team").distinct()


def submission_get(*, user: AbstractUser | AnonymousUser, submission_id: int) -> Submission:
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


def submission_grading_report(submission: Submission) -> dict:
    """The server's report in MLE-bench's format: one competition report per re-graded run."""
    reports = [
        parse_competition_report(
            {k: v for k, v in restored_report(run.regraded).items() if k != "reason"}, where=f"run {run.pk}"
        )
        for run in submission_runs(submission)
        # A run of a competition without thresholds (not gradable here) has no MLE-bench report.
        if run.regraded
        and (run.regraded.get("gold_threshold") is not None or run.regraded.get("medals_known") is False)
    ]
    return build_run_group_report(reports).to_dict(with_reason=False)
