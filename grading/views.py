from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.accounts.selectors import is_maintainer, teams_for_user


@login_required
def submit(request: HttpRequest) -> HttpResponse:
    return render(request, "grading/submit.html", {"teams": teams_for_user(user=request.user)})


@login_required
def review_queue(request: HttpRequest) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied("The review queue is for maintainers.")
    return render(request, "grading/review.html", {"flags": []})
