from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.db.models import QuerySet

from portal.accounts import login_throttle
from portal.accounts.models import Team


class TeamCreateForm(forms.Form):
    name = forms.CharField(max_length=80, label="Team name")


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email of the person to invite")


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=80, label="Token name", help_text="What the token is for, e.g. 'ci'.")
    team = forms.ModelChoiceField(queryset=Team.objects.none(), empty_label=None)

    def __init__(self, *args: Any, teams: QuerySet[Team], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]


class ThrottledAdminLoginForm(AdminAuthenticationForm):
    """The admin's login, under the same login throttle as allauth's (portal/accounts/login_throttle.py)."""

    def clean(self) -> dict[str, Any]:
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is None or not password or self.request is None:
            return super().clean()
        try:
            attempt = login_throttle.begin(self.request, username)
        except login_throttle.LoginThrottled as refused:
            raise forms.ValidationError(refused.message, code="login_throttled") from None
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if self.user_cache is None:
                login_throttle.failed(self.request, attempt)
            else:  # the password was right; the account may not use the admin
                login_throttle.succeeded(self.request, attempt, self.user_cache)
            raise
        login_throttle.succeeded(self.request, attempt, self.user_cache)
        return cleaned
