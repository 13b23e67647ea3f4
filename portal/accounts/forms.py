from typing import Any

from django import forms
from django.db.models import QuerySet

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
