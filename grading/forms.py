from django import forms

from grading import selectors
from grading.engine.tiers import SPLITS
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


class RegistrationForm(forms.Form):
    """A run group registered on the web: the API's fields, judged by the same service (registration_create)."""

    agent_name = forms.CharField(max_length=200, label="Agent name", help_text="As the bundle's manifest names it")
    agent_version = forms.CharField(max_length=200, label="Agent version")
    split = forms.ChoiceField(
        required=False,
        choices=[("", "— (list the competitions instead)"), *((split, split) for split in SPLITS)],
        help_text="The split the runs cover; or leave it empty and list the competitions",
    )
    competitions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="Competition ids separated by spaces or new lines, instead of a split",
    )
    seeds = forms.IntegerField(help_text="Runs per competition that will count, reported or not")
    image = forms.CharField(
        required=False, max_length=71, label="Image digest", help_text="Optional: the agent image's sha256:<64 hex>"
    )

    # The service names the API's fields; the form's are these.
    FIELDS = {"agent.name": "agent_name", "agent.version": "agent_version"}

    def clean_competitions(self) -> list[str]:
        return self.cleaned_data["competitions"].split()
