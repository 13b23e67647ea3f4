from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from grading import selectors
from grading.bundles.seeds import RULE_TEXT
from grading.services.regrade import submission_regrade, submissions_regrade_all
from portal.accounts.selectors import is_maintainer, teams_for_user


@login_required
def submit(request: HttpRequest) -> HttpResponse:
    context = {
        "teams": teams_for_user(user=request.user),
        "submissions": selectors.submissions_of_teams(user=request.user)[:50],
    }
    return render(request, "grading/submit.html", context)


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    context = {
        "submission": submission,
        "runs": selectors.submission_runs(submission),
        "aggregates": selectors.submission_aggregates(submission),
        "seed_rule": RULE_TEXT,
        "is_final": submission.status in submission.FINAL_STATUSES,
        "can_regrade": is_maintainer(request.user),
    }
    return render(request, "grading/submission_detail.html", context)


@login_required
def review_queue(request: HttpRequest) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied("The review queue is for maintainers.")
    return render(request, "grading/review.html", {"flags": []})


def _require_maintainer(request: HttpRequest) -> None:
    if not is_maintainer(request.user):
        raise PermissionDenied("Only maintainers can re-grade.")


@login_required
@require_POST
def submission_regrade_view(request: HttpRequest, submission_id: int) -> HttpResponse:
    _require_maintainer(request)
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    if submission_regrade(submission_id=submission.pk):
        messages.success(request, f"Submission {submission.pk} is being re-graded.")
    else:
        messages.error(request, f"Submission {submission.pk} is {submission.status}; it cannot be re-graded now.")
    return redirect("submission_detail", submission_id=submission.pk)


@login_required
@require_POST
def regrade_all_view(request: HttpRequest) -> HttpResponse:
    _require_maintainer(request)
    messages.success(request, f"{submissions_regrade_all()} submission(s) are being re-graded.")
    return redirect("review")
