from typing import Any

from django import forms
from django.db.models import QuerySet

from grading.engine.tiers import SPLITS
from portal.accounts.models import Team
from runners import envnames
from runners.services.fit import Offer


class _SecretTextarea(forms.Textarea):
    """A textarea that never sends its value back: a form shown again with an error does not show the secrets."""

    def format_value(self, value: Any) -> str | None:
        return None


class HostedRunForm(forms.Form):
    team: forms.ModelChoiceField = forms.ModelChoiceField(queryset=None, empty_label=None)  # type: ignore[arg-type]
    image = forms.CharField(max_length=300, help_text="The agent image, e.g. my-agent:1.0, loaded on the workers")
    split = forms.ChoiceField(choices=[(s, s) for s in SPLITS], initial="low")
    seeds = forms.IntegerField(min_value=1, max_value=10, initial=3)
    time_limit_hours = forms.FloatField(
        label="Time limit (hours)",
        min_value=0.001,
        initial=24,
        help_text="Per run; the agent is stopped after it and what it left is graded",
    )
    gpus_per_run = forms.IntegerField(min_value=0, initial=0, label="GPUs per run")
    env = forms.CharField(
        label="Environment variables",
        required=False,
        widget=_SecretTextarea(attrs={"rows": 4, "autocomplete": "off", "spellcheck": "false"}),
        help_text="NAME=value, one per line: passed to the agent, stored encrypted, never shown again",
    )
    competitions = forms.CharField(
        required=False, help_text="Optional: only these competition ids of the split, separated by spaces (a trial)"
    )
    agent_name = forms.CharField(required=False, max_length=100, help_text="As the board shows it (default: the image)")
    llms = forms.CharField(required=False, label="LLMs", help_text="The models the agent calls, separated by commas")

    def __init__(self, *args: Any, teams: QuerySet[Team], offer: Offer, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]
        gpus = self.fields["gpus_per_run"]
        gpus.initial = offer.default_gpus  # what the workers there are can run, never more
        if offer.largest_gpus is not None:
            gpus.help_text = f"The largest worker has {offer.largest_gpus}; a run asking for more is refused"
        else:
            gpus.help_text = "No worker is registered yet, so nothing is known of their GPUs"

    def clean_env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for number, line in enumerate(self.cleaned_data["env"].splitlines(), start=1):
            if not line.strip():
                continue
            name, sep, value = line.partition("=")
            if not sep:
                raise forms.ValidationError(f"line {number}: write NAME=value")
            name = name.strip()
            if (why := envnames.refusal(name)) is not None:
                raise forms.ValidationError(f"line {number}: {name[:80]} {why}")
            env[name] = value
        return env
