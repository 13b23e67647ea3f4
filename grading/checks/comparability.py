"""SPEC §4's comparability rule, in one function, with its constants.

An entry is comparable when it was re-graded from submissions, every tier it is listed in has at least
MIN_SEEDS complete seeds, nothing blocking is unresolved (a flag is resolved when a maintainer accepted
it; non_comparable, reject and request_changes decisions make the entry non-comparable with their
reason), and no maintainer marked the entry non-comparable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

MIN_SEEDS: Final = 3
# MLE-bench's reference setup (MECHANICS (i)); deviations are disclosed and flagged.
REFERENCE_RUNTIME_HOURS: Final = 24.0
REFERENCE_VCPUS: Final = 36
REFERENCE_RAM_GB: Final = 440.0
REFERENCE_GPU_MODEL: Final = "A10"
REFERENCE_GPU_MEMORY_GB: Final = 24.0
REFERENCE_GPU_COUNT: Final = 1

ACCEPT: Final = "accept"
# A decision on a flag or an entry, as what became of it: "flag x (key) <words>", "<words> by a maintainer".
# The one vocabulary of decisions: the review services, their pages and mails, and the board's footnotes.
DECISION_WORDS: Final = {
    ACCEPT: "accepted",
    "non_comparable": "marked non-comparable",
    "reject": "rejected",
    "request_changes": "changes requested",
}
# The same decisions on the whole entry, as a maintainer's act: "a maintainer <words>".
ENTRY_DECISION_WORDS: Final = {
    "non_comparable": "marked the entry non-comparable",
    "reject": "rejected the entry",
    "request_changes": "requested changes to the entry",
}


@dataclass(frozen=True, kw_only=True)
class FlagState:
    """A stored flag as the rule sees it."""

    code: str
    key: str
    severity: str
    tiers: tuple[str, ...] = ()  # empty: the whole entry
    decision: str = ""
    reason: str = ""  # the decision's public reason


@dataclass(frozen=True)
class Comparability:
    comparable: bool
    reasons: list[str] = field(default_factory=list)
    tiers: dict[str, dict] = field(default_factory=dict)  # tier -> {"comparable": bool, "reasons": [...]}

    def as_dict(self) -> dict:
        return {
            "comparable": self.comparable,
            "reasons": list(self.reasons),
            "tiers": dict(self.tiers),
            "min_seeds": MIN_SEEDS,
        }


def not_comparable(verdict: Mapping | None) -> dict:
    """A stored verdict taken off the comparable board until the rule runs again (its reasons kept)."""
    return {**(verdict or {}), "comparable": False}


def comparability(
    *,
    regraded_from_submissions: bool,
    complete_seeds: Mapping[str, int],
    flags: Iterable[FlagState],
    review_decision: str = "",
    review_reason: str = "",
) -> Comparability:
    """The entry's result and reasons, and each listed tier's (``complete_seeds`` lists the tiers)."""
    entry_reasons: list[str] = []
    tier_reasons: dict[str, list[str]] = {tier: [] for tier in complete_seeds}
    if not regraded_from_submissions:
        entry_reasons.append("not re-graded from submissions (the bundle holds only grading reports)")
    if not complete_seeds:
        entry_reasons.append("listed in no tier")
    if review_decision and review_decision != ACCEPT:
        words = ENTRY_DECISION_WORDS.get(review_decision, f"decided {review_decision} on the entry")
        entry_reasons.append(f"a maintainer {words}" + (f": {review_reason}" if review_reason else ""))
    for tier, seeds in complete_seeds.items():
        if seeds < MIN_SEEDS:
            tier_reasons[tier].append(f"{seeds} complete seed(s) in {tier}; at least {MIN_SEEDS} are needed")
    for flag in flags:
        reason = None
        if flag.decision and flag.decision != ACCEPT:
            word = DECISION_WORDS.get(flag.decision, flag.decision)
            reason = f"{flag.code} ({flag.key}) {word}" + (f": {flag.reason}" if flag.reason else "")
        elif not flag.decision and flag.severity == "blocking":
            reason = f"{flag.code} ({flag.key}) is blocking and not yet decided"
        if reason is None:
            continue
        scope = [tier for tier in flag.tiers if tier in tier_reasons] if flag.tiers else []
        if scope:
            for tier in scope:
                tier_reasons[tier].append(reason)
        else:
            entry_reasons.append(reason)
    tiers = {
        tier: {
            "comparable": not entry_reasons and not reasons,
            "reasons": entry_reasons + reasons,
            "complete_seeds": complete_seeds[tier],
        }
        for tier, reasons in tier_reasons.items()
    }
    every = entry_reasons + [r for reasons in tier_reasons.values() for r in reasons if r not in entry_reasons]
    unique = list(dict.fromkeys(every))
    return Comparability(comparable=not unique, reasons=unique, tiers=tiers)
