from django import forms

from grading import selectors
from grading.models import Decision


class DecisionForm(forms.Form):
    # No choice is made for the maintainer: none is checked, and sending none is an error that says so.
    decision = forms.ChoiceField(
        choices=Decision.choices,
        widget=forms.RadioSelect,
        error_messages={"required": "Choose a decision: none is made for you."},
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=4000,
        help_text="Shown publicly in the entry's audit trail.",
        error_messages={"required": "Give a reason: it is shown publicly in the entry's audit trail."},
    )

    def problems(self) -> str:
        """What is missing or wrong, in one line, field by field."""
        return " ".join(str(error) for errors in self.errors.values() for error in errors)


class WithdrawalDecisionForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("accept", "accept: its seeds no longer count as failures"), ("refuse", "refuse")],
        widget=forms.RadioSelect,
        error_messages={"required": "Choose accept or refuse: none is made for you."},
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=4000,
        error_messages={"required": "Give a reason for the decision."},
    )

    def problems(self) -> str:
        return " ".join(str(error) for errors in self.errors.values() for error in errors)


class TeamAnswerForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=4000, label="Your answer")


class QueueFilterForm(forms.Form):
    code = forms.CharField(required=False)
    severity = forms.ChoiceField(
        required=False, choices=[("", "any"), ("blocking", "blocking"), ("warning", "warning")]
    )
    team = forms.CharField(required=False)
    older_than_days = forms.IntegerField(required=False, min_value=0, max_value=3650, label="Older than (days)")

    def clean_team(self) -> str:
        team = self.cleaned_data["team"]
        if team and not selectors.teams_matching(team):
            raise forms.ValidationError(f"No team has the id or the name {team!r}.", code="unknown_team")
        return team
