from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from grading import selectors
from grading.bundles.seeds import RULE_TEXT
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
    }
    return render(request, "grading/submission_detail.html", context)


@login_required
def review_queue(request: HttpRequest) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied("The review queue is for maintainers.")
    return render(request, "grading/review.html", {"flags": []})
