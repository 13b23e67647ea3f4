"""Registrations on the web (SPEC section 9): a team registers a run group and reads its own, nonces included;
anyone reads the public ones (an entry uses them, or their deadline has passed)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from grading import selectors
from grading.forms import RegistrationForm
from grading.services.registrations import registration_create
from portal.accounts.selectors import signed_in_user, team_for_member
from portal.refusals import Refused

TEAM_LIMIT = 200  # the newest registrations a team's page lists
PUBLIC_LIMIT = 500


@login_required
def team_registrations(request: HttpRequest, team_id: int) -> HttpResponse:
    user = signed_in_user(request.user)
    team = team_for_member(user=user, team_id=team_id)  # 404 for anyone outside the team
    form = RegistrationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            registration = registration_create(
                team=team,
                user=user,
                agent_name=data["agent_name"],
                agent_version=data["agent_version"],
                seeds=data["seeds"],
                split=data["split"],
                competitions=data["competitions"],
                image=data["image"].strip(),
            )
        except Refused as exc:
            field = RegistrationForm.FIELDS.get(exc.field, exc.field)
            form.add_error(field if field in form.fields else None, exc.message)
        else:
            messages.success(
                request,
                f"Registration {registration.pk} created: name it in manifest.json and write its nonce into each "
                f"run's log before the run writes its submission, by {registration.deadline:%Y-%m-%d %H:%M} UTC.",
            )
            return redirect("team_registration", team_id=team.pk, registration_id=registration.pk)
    context = {
        "team": team,
        "form": form,
        "registrations": selectors.registrations_of_team(team=team)[:TEAM_LIMIT],
    }
    return render(request, "grading/team_registrations.html", context, status=400 if form.errors else 200)


@login_required
def team_registration(request: HttpRequest, team_id: int, registration_id: int) -> HttpResponse:
    team = team_for_member(user=signed_in_user(request.user), team_id=team_id)
    registration = selectors.registrations_of_team(team=team).filter(pk=registration_id).first()
    if registration is None:
        raise Http404("Your team has no such registration.")
    public = selectors.registrations_public().filter(pk=registration.pk).exists()
    context = {
        "team": team,
        "registration": registration,
        "public": public,
        "entries": selectors.registration_entries(registration=registration),
    }
    return render(request, "grading/team_registration.html", context)


def registrations_public(request: HttpRequest) -> HttpResponse:
    rows = selectors.registrations_public()[:PUBLIC_LIMIT]
    return render(request, "grading/registrations_public.html", {"registrations": rows, "limit": PUBLIC_LIMIT})


def registration_public(request: HttpRequest, registration_id: int) -> HttpResponse:
    registration = selectors.registration_public_get(registration_id=registration_id)
    context = {"registration": registration, "entries": selectors.registration_entries(registration=registration)}
    return render(request, "grading/registration_public.html", context)
