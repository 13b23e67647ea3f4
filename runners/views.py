"""Hosted runs' pages: ask for one, follow it live, cancel it; the operators' workers page and the maintainers'
approval of workers."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from portal.accounts.selectors import is_maintainer, signed_in_user, teams_for_user
from runners import selectors
from runners.forms import HostedRunForm
from runners.models import HostedRun
from runners.services.approval import ApprovalRefused, worker_approval_withdraw, worker_approve
from runners.services.fit import hosted_offer
from runners.services.hosted import (
    HostedRunRefused,
    HostedRunRequest,
    hosted_run_cancel,
    hosted_run_create,
    hosted_task_cancel,
)


@login_required
def hosted_run_new(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request.user)
    teams = teams_for_user(user=user)
    offer = hosted_offer()
    form = HostedRunForm(request.POST or None, teams=teams, offer=offer)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        agent = {"name": data["agent_name"]} if data["agent_name"] else {}
        try:
            run = hosted_run_create(
                team=data["team"],
                user=user,
                request=HostedRunRequest(
                    image=data["image"].strip(),
                    split=data["split"],
                    seeds=data["seeds"],
                    time_limit_hours=data["time_limit_hours"],
                    gpus_per_run=data["gpus_per_run"],
                    env=data["env"],
                    competitions=tuple(data["competitions"].split()),
                    agent=agent,
                    llms=tuple(name.strip() for name in data["llms"].split(",") if name.strip()),
                ),
            )
        except HostedRunRefused as exc:
            if exc.field in form.fields:  # the field's own error, without the API's "field: " prefix
                form.add_error(exc.field, exc.message.removeprefix(f"{exc.field}: "))
            else:
                form.add_error(None, exc.message)
        else:
            return redirect("hosted_run_detail", hosted_run_id=run.pk)
    context = {"form": form, "teams": teams, "runs": selectors.hosted_run_list(user=user), "offer": offer}
    return render(request, "runners/hosted_run_new.html", context, status=400 if form.errors else 200)


@login_required
def hosted_run_detail(request: HttpRequest, hosted_run_id: int) -> HttpResponse:
    run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=hosted_run_id)
    context = {"run": run, "live": run.status not in HostedRun.FINAL_STATUSES}
    return render(request, "runners/hosted_run_detail.html", context)


@login_required
@require_POST
def hosted_run_cancel_view(request: HttpRequest, hosted_run_id: int) -> HttpResponse:
    run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=hosted_run_id)
    task_id = request.POST.get("task")
    if task_id:
        task = next((t for t in run.task_list if str(t.pk) == task_id), None)  # type: ignore[attr-defined]
        if task is not None and hosted_task_cancel(task=task):
            messages.success(request, f"{task.competition.slug} seed {task.seed} is cancelled.")
        else:
            messages.error(request, "That run already ended.")
    elif hosted_run_cancel(hosted_run=run):
        messages.success(request, "The hosted run is cancelled; running containers stop within a heartbeat.")
    else:
        messages.error(request, f"The hosted run is already {run.status}.")
    return redirect("hosted_run_detail", hosted_run_id=run.pk)


def workers(request: HttpRequest) -> HttpResponse:
    if not (request.user.is_staff or is_maintainer(request.user)):
        raise PermissionDenied("The workers page is for operators and maintainers.")
    return render(request, "runners/workers.html", {"workers": selectors.worker_list()})


def _require_maintainer(request: HttpRequest) -> None:
    if not is_maintainer(request.user):
        raise PermissionDenied("Approving workers is for maintainers.")


@require_safe
def worker_approval(request: HttpRequest) -> HttpResponse:
    """Each worker's declared hardware beside what it measured of itself; pending ones first."""
    _require_maintainer(request)
    return render(request, "runners/worker_approval.html", {"workers": selectors.worker_approval_list()})


@require_POST
def worker_approve_view(request: HttpRequest, worker_id: int) -> HttpResponse:
    _require_maintainer(request)
    user = signed_in_user(request.user)
    try:
        if request.POST.get("decision") == "withdraw":
            worker = worker_approval_withdraw(worker_id=worker_id, by=user)
            messages.success(request, f"{worker.name} is pending again: it takes no new task.")
        else:
            worker = worker_approve(worker_id=worker_id, by=user, fingerprint=request.POST.get("fingerprint", ""))
            messages.success(request, f"{worker.name} is approved for the hardware it declares.")
    except ApprovalRefused as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        messages.error(request, exc.message)
    return redirect("hosted_worker_approval")
