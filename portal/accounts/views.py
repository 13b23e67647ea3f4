from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from portal.accounts import selectors, services
from portal.accounts.forms import InviteForm, TeamCreateForm, TokenCreateForm


def _add_errors(form: forms.Form, exc: ValidationError, field: str | None = None) -> None:
    for message in exc.messages:
        form.add_error(field, message)


@login_required
def team_list(request: HttpRequest) -> HttpResponse:
    user = selectors.signed_in_user(request.user)
    form = TeamCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            team = services.team_create(user=user, name=form.cleaned_data["name"])
        except ValidationError as exc:
            _add_errors(form, exc, "name")
        else:
            messages.success(request, f"Team {team.name} created.")
            return redirect("team_detail", team_id=team.pk)
    teams = selectors.teams_for_user(user=user)
    return render(request, "accounts/team_list.html", {"teams": teams, "form": form})


@login_required
def team_detail(request: HttpRequest, team_id: int) -> HttpResponse:
    user = selectors.signed_in_user(request.user)
    team = selectors.team_for_member(user=user, team_id=team_id)
    form = InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        accept_url = request.build_absolute_uri(reverse("invitation_accept", kwargs={"key": "KEY"}))
        try:
            invitation = services.invitation_create(
                team=team,
                invited_by=user,
                email=form.cleaned_data["email"],
                accept_url_template=accept_url.replace("KEY", "{key}"),
            )
        except ValidationError as exc:
            _add_errors(form, exc, "email")
        else:
            messages.success(request, f"Invitation sent to {invitation.email}.")
            return redirect("team_detail", team_id=team.pk)
    context = {
        "team": team,
        "members": selectors.team_members(team=team),
        "open_invitations": team.invitations.filter(accepted_at__isnull=True),
        "form": form,
    }
    return render(request, "accounts/team_detail.html", context)


@login_required
def invitation_accept(request: HttpRequest, key: str) -> HttpResponse:
    if request.method == "POST":
        try:
            membership = services.invitation_accept(key=key, user=selectors.signed_in_user(request.user))
        except ValidationError as exc:
            return render(request, "accounts/invitation.html", {"error": " ".join(exc.messages)}, status=400)
        messages.success(request, f"You joined {membership.team.name}.")
        return redirect("team_detail", team_id=membership.team_id)
    return render(request, "accounts/invitation.html", {"key": key})


@login_required
def token_list(request: HttpRequest) -> HttpResponse:
    user = selectors.signed_in_user(request.user)
    teams = selectors.teams_for_user(user=user)
    form = TokenCreateForm(request.POST or None, teams=teams)
    new_key = None
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = services.token_create(
                user=user, team=form.cleaned_data["team"], name=form.cleaned_data["name"]
            )
        except ValidationError as exc:
            _add_errors(form, exc, "name")
        else:
            form = TokenCreateForm(teams=teams)
    context = {
        "tokens": selectors.tokens_for_user(user=user),
        "form": form,
        "new_key": new_key,
        "has_team": teams.exists(),
    }
    # The key is shown in this response only; it is never stored or shown again.
    response = render(request, "accounts/token_list.html", context)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = services.token_revoke(user=selectors.signed_in_user(request.user), token_id=token_id)
    messages.success(request, f"Token '{token.name}' revoked.")
    return redirect("token_list")
