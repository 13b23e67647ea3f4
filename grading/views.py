import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from grading import selectors
from grading.bundles.seeds import RULE_TEXT
from grading.checks.comparability import DECISION_WORDS
from grading.engine_wheel import WheelBuildFailed, engine_wheel
from grading.evidence import evidence_blocks, evidence_json
from grading.forms import DecisionForm, QueueFilterForm, TeamAnswerForm, WithdrawalDecisionForm
from grading.models import Flag, Submission
from grading.services.registrations import withdrawal_decide
from grading.services.regrade import submission_regrade, submissions_regrade_all
from grading.services.review import DECIDABLE, ReviewRefused, entry_decide, flag_decide, team_answer
from portal.accounts.selectors import is_maintainer, signed_in_user, teams_for_user
from portal.ids import parse_id
from portal.refusals import Refused

logger = logging.getLogger(__name__)


@login_required
def submit(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request.user)
    context = {
        "teams": teams_for_user(user=user),
        "submissions": selectors.submissions_of_teams(user=user)[:50],
        "to_replace": selectors.submissions_of_teams(user=user).filter(status=Submission.Status.CHANGES_REQUESTED),
    }
    return render(request, "grading/submit.html", context)


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    context = {
        "submission": submission,
        "runs": selectors.submission_runs(submission),
        "aggregates": selectors.submission_aggregates(submission),
        "seed_rule": RULE_TEXT,
        "is_final": submission.status in submission.SETTLED_STATUSES,
        "can_regrade": is_maintainer(request.user),
        "own_entry": selectors.is_own_entry(user=request.user, submission=submission),
        "events": selectors.review_events(submission),
        "footnotes": selectors.submission_footnotes(submission),
        "can_answer": request.user.is_authenticated and submission.team.memberships.filter(user=request.user).exists(),
        "answer_form": TeamAnswerForm(),
    }
    return render(request, "grading/submission_detail.html", context)


def submission_grading_report_view(request: HttpRequest, submission_id: int) -> HttpResponse:
    """The server's grading report as a page: the JSON download's numbers, with each run's reason."""
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    context = {"submission": submission, "table": selectors.submission_grading_report_table(submission)}
    return render(request, "grading/grading_report.html", context)


def _require_reviewer(request: HttpRequest) -> User:
    """The maintainer making the request."""
    # Anonymous visitors get the same 403 as team members: the queue's existence says nothing about anyone.
    if not is_maintainer(request.user):
        raise PermissionDenied("The review queue is for maintainers.")
    return signed_in_user(request.user)  # a maintainer is signed in


def review_queue(request: HttpRequest) -> HttpResponse:
    reviewer = _require_reviewer(request)
    form = QueueFilterForm(request.GET or None)
    filters = {k: v for k, v in form.cleaned_data.items() if v not in ("", None)} if form.is_valid() else {}
    entries = selectors.review_queue(viewer=reviewer, **filters) if form.is_valid() or not request.GET else []
    context = {
        "entries": entries,
        "form": form,
        "codes": selectors.review_codes(),
        "flag_count": sum(len(entry.flags) for entry in entries),
    }
    return render(request, "grading/review.html", context, status=400 if form.errors else 200)


def review_submission(request: HttpRequest, submission_id: int) -> HttpResponse:
    reviewer = _require_reviewer(request)
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    own_entry = selectors.is_own_entry(user=reviewer, submission=submission)
    flags = [
        {
            "flag": flag,
            "blocks": evidence_blocks(flag.evidence),
            "json": evidence_json(flag.evidence),
            # Names other teams' unpublished work: on this page only, never on the entry or in the public API.
            "private_json": evidence_json(flag.private_evidence) if flag.private_evidence else "",
            "form": DecisionForm(prefix=f"flag-{flag.pk}"),
        }
        for flag in selectors.review_flags(submission)
    ]
    context = {
        "submission": submission,
        "flags": flags,
        "runs": selectors.submission_runs(submission),
        "aggregates": selectors.submission_aggregates(submission),
        "events": selectors.review_events(submission),
        "entry_form": DecisionForm(prefix="entry"),
        "own_entry": own_entry,
        "decidable": submission.status in DECIDABLE and not own_entry,
    }
    return render(request, "grading/review_submission.html", context)


def _refused(request: HttpRequest, exc: ReviewRefused) -> None:
    """A refusal the maintainer can fix (no reason, a settled entry) comes back as a message on the page; one
    they cannot (their own team's entry) is a 403."""
    if exc.status == 403:
        raise PermissionDenied(exc.message)
    messages.error(request, exc.message)


@require_POST
def review_flag_decide(request: HttpRequest, flag_id: int) -> HttpResponse:
    reviewer = _require_reviewer(request)
    flag = get_object_or_404(Flag, pk=flag_id)
    form = DecisionForm(request.POST, prefix=f"flag-{flag.pk}")
    if not form.is_valid():
        messages.error(request, f"Nothing was decided on flag {flag.code} ({flag.key}). {form.problems()}")
    else:
        try:
            flag_decide(flag_id=flag.pk, actor=reviewer, **form.cleaned_data)
            messages.success(request, f"Flag {flag.code} {DECISION_WORDS[form.cleaned_data['decision']]}.")
        except ReviewRefused as exc:
            _refused(request, exc)
    return redirect("review_submission", submission_id=flag.submission_id)


@require_POST
def review_entry_decide(request: HttpRequest, submission_id: int) -> HttpResponse:
    reviewer = _require_reviewer(request)
    form = DecisionForm(request.POST, prefix="entry")
    if not form.is_valid():
        messages.error(request, f"Nothing was decided on submission {submission_id}. {form.problems()}")
    else:
        try:
            entry_decide(submission_id=submission_id, actor=reviewer, **form.cleaned_data)
            messages.success(request, f"Submission {submission_id} {DECISION_WORDS[form.cleaned_data['decision']]}.")
        except ReviewRefused as exc:
            _refused(request, exc)
    return redirect("review_submission", submission_id=submission_id)


def review_withdrawals(request: HttpRequest) -> HttpResponse:
    """Teams' requests to withdraw a registration: pending ones to decide, then the latest decided."""
    reviewer = _require_reviewer(request)
    context = {
        "pending": [
            {"withdrawal": w, "form": WithdrawalDecisionForm(prefix=f"withdrawal-{w.pk}"), "own_team": own}
            for w, own in selectors.withdrawals_pending(viewer=reviewer)
        ],
        "decided": selectors.withdrawals_decided()[:50],
    }
    return render(request, "grading/review_withdrawals.html", context)


@require_POST
def review_withdrawal_decide(request: HttpRequest, withdrawal_id: int) -> HttpResponse:
    reviewer = _require_reviewer(request)
    form = WithdrawalDecisionForm(request.POST, prefix=f"withdrawal-{withdrawal_id}")
    if not form.is_valid():
        messages.error(request, f"Nothing was decided on withdrawal {withdrawal_id}. {form.problems()}")
        return redirect("review_withdrawals")
    try:
        accept = form.cleaned_data["decision"] == "accept"
        withdrawal_decide(
            withdrawal_id=withdrawal_id, accept=accept, reason=form.cleaned_data["reason"], actor=reviewer
        )
        messages.success(request, f"Withdrawal {withdrawal_id} {'accepted' if accept else 'refused'}.")
    except Refused as exc:
        if exc.status == 403:
            raise PermissionDenied(exc.message) from None
        if exc.status == 404:
            raise Http404(exc.message) from None
        messages.error(request, exc.message)
    return redirect("review_withdrawals")


@login_required
@require_POST
def submission_answer(request: HttpRequest, submission_id: int) -> HttpResponse:
    user = signed_in_user(request.user)
    submission = selectors.submission_get(user=user, submission_id=submission_id)
    form = TeamAnswerForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Write an answer before sending it.")
        return redirect("submission_detail", submission_id=submission.pk)
    try:
        team_answer(submission_id=submission.pk, user=user, text=form.cleaned_data["text"])
        messages.success(request, "Your answer is in the audit trail.")
    except ReviewRefused as exc:
        raise PermissionDenied(exc.message) if exc.status == 403 else Http404(exc.message) from None
    return redirect("submission_detail", submission_id=submission.pk)


def _require_maintainer(request: HttpRequest) -> None:
    if not is_maintainer(request.user):
        raise PermissionDenied("Only maintainers can re-grade.")


@login_required
@require_POST
def submission_regrade_view(request: HttpRequest, submission_id: int) -> HttpResponse:
    _require_maintainer(request)
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    try:
        regrading = submission_regrade(submission_id=submission.pk, actor=signed_in_user(request.user))
    except ReviewRefused as exc:
        raise PermissionDenied(exc.message) from None
    if regrading:
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


def decisions(request: HttpRequest) -> HttpResponse:
    """Every maintainer's decision and its reason, for everyone (SPEC section 4), rejected entries' too."""
    value = request.GET.get("page", "1")
    page = parse_id(value)
    if page is None:
        context = {"found": None, "error": f"page={value!r}: a page is a whole number from 1."}
        return render(request, "grading/decisions.html", context, status=400)
    return render(request, "grading/decisions.html", {"found": selectors.public_decisions(page=page)})


@require_safe
def engine_download(request: HttpRequest, name: str) -> FileResponse:
    """The engine's wheel, for anyone (pip install <this URL>); any other name is not found."""
    try:
        wheel = engine_wheel()
    except WheelBuildFailed:
        logger.exception("the engine's wheel could not be built")
        raise Http404("The engine's wheel is not available right now.") from None
    if name != wheel.wheel:
        raise Http404(f"No such file; the engine's wheel is {wheel.wheel} (see /api/v1/engine/).")
    response = FileResponse(
        wheel.path.open("rb"), as_attachment=True, filename=wheel.wheel, content_type="application/octet-stream"
    )
    response["X-Content-SHA256"] = wheel.sha256
    return response
