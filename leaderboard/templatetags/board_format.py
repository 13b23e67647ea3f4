"""How the board writes numbers a person reads: runtimes as durations ("1.3 s", "42 min", "3.1 h"), scores
with a few significant digits, and the medal a score earned in words."""

import math

from django import template

register = template.Library()

MEDAL_WORDS = {
    "gold": "gold",
    "silver": "silver",
    "bronze": "bronze",
    "above_median": "above median",
    "valid": "no medal",
    "invalid": "invalid",
    "none": "no submission",
}


def _figure(value: float) -> str:
    """Two significant digits below 10, whole numbers above: 1.3, 42, 120."""
    return f"{value:.1f}" if value < 9.95 else f"{value:.0f}"


@register.filter
def duration(hours: float | None) -> str:
    """Hours as the unit a person reads: "1.3 s", "42 min", "3.1 h", "2.5 days"; "?" when unknown."""
    if hours is None or not isinstance(hours, (int, float)) or not math.isfinite(hours) or hours < 0:
        return "?"
    seconds = hours * 3600
    if seconds == 0:
        return "0 s"
    if seconds < 0.05:
        return "< 0.1 s"
    if seconds < 59.5:
        return f"{_figure(seconds)} s"
    if seconds < 3570:
        return f"{_figure(seconds / 60)} min"
    if hours < 99.95:
        return f"{hours:.1f}".removesuffix(".0") + " h"  # "23.5 h" against a 24 h budget, not "24 h"
    return f"{_figure(hours / 24)} days"


@register.filter
def score(value: object) -> str:
    """A competition's score with four significant digits ("0.8734", "1234", "1.2e-05"); "—" when none."""
    if value is None or isinstance(value, bool):
        return "—"
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e9:
        return str(int(value))
    return f"{value:.4g}"


@register.filter
def medal_words(medal: str) -> str:
    return MEDAL_WORDS.get(medal, medal.replace("_", " "))
