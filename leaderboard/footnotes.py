"""An entry's footnotes: one short line per distinct reason, never the same reason once per flag and once per
tier. The board numbers them across a page, so that entries with the same reason share one footnote.

Where the reasons come from: the comparability verdict (SPEC §4; entry-wide reasons, which every tier repeats,
and each tier's own), the maintainers' decisions on flags (grouped by decision and public reason: one decision
on several flags is one note), the flags a reader must know about while nobody has decided on them (one note a
check), the padded aggregates and the runs counted as no medal (one note for all tiers)."""

from collections.abc import Iterable

from grading.checks.comparability import DECISION_WORDS
from grading.engine.tiers import TIER_LABELS, TIERS
from grading.models import Flag, Submission

MAX_FOOTNOTES = 12
FOOTNOTE_CHARS = 400
# Flags whose message becomes a footnote while no maintainer has decided on them: what a reader of the board
# must know to weigh the figure. Decided flags always leave a footnote with the decision's reason.
FOOTNOTE_CODES = (
    "test_set_feedback",
    "known_leaky_competition",
    "padded_seeds",
    "benchmark_version",
    "nonstandard_resources",
    "rule_violation",
    "runtime_over_budget",
)
SELF_REPORTED_NOTE = (
    "Self-reported: these figures come from the team's own grading reports and were not re-graded on this portal."
)
IMPORTED_NOTE = (
    "Self-reported: imported from the existing MLE-bench board's grading reports; not re-graded on this portal."
)


def _tiers_text(tiers: Iterable[str]) -> str:
    return ", ".join(TIER_LABELS.get(tier, tier) for tier in sorted(set(tiers), key=_tier_order))


def _tier_order(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else len(TIERS)


def _words(code: str) -> str:
    """A check's code as words: "known_leaky_competition" -> "Known leaky competition"."""
    return code.replace("_", " ").capitalize()


def _flags_text(flags: list[Flag]) -> str:
    if len(flags) == 1:
        return f"{flags[0].code} ({flags[0].key})"
    codes = list(dict.fromkeys(flag.code for flag in flags))
    shown = ", ".join(codes[:3]) + (f" and {len(codes) - 3} more" if len(codes) > 3 else "")
    return f"{len(flags)} flags ({shown})"


def _from_flag(reason: str, flags: list[Flag]) -> bool:
    """A verdict's reason that restates one flag ("code (key) …"): its flag's own note says it once."""
    return any(reason.startswith(f"{flag.code} ({flag.key}) ") for flag in flags)


def _decisions(flags: list[Flag]) -> tuple[list[str], set[str]]:
    """One note per maintainer decision (decision and public reason) with the flags it covered, and the reasons
    those decisions gave (the entry's own verdict repeats them)."""
    groups: dict[tuple[str, str], list[Flag]] = {}
    for flag in flags:
        if flag.decision:
            groups.setdefault((flag.decision, flag.resolution.strip()), []).append(flag)
    notes: list[str] = []
    reasons: set[str] = set()
    for (decision, resolution), covered in groups.items():
        words = DECISION_WORDS.get(decision, decision)
        reasons.update(line.strip() for line in resolution.splitlines() if line.strip())
        if decision == "accept":
            notes.append(
                f"Accepted by a maintainer: {resolution} ({_flags_text(covered)})."
                if resolution
                else f"Accepted by a maintainer: {_flags_text(covered)}."
            )
        else:
            notes.append(
                f"Non-comparable: {resolution} (a maintainer {words} {_flags_text(covered)})."
                if resolution
                else f"Non-comparable: a maintainer {words} {_flags_text(covered)}."
            )
    return notes, reasons


def _entry_decision_covered(reason: str, decided: set[str]) -> bool:
    """ "a maintainer marked the entry non-comparable: R1\\nR2" where each R is a flag decision's reason."""
    if not reason.startswith("a maintainer ") or ": " not in reason:
        return False
    lines = [line.strip() for line in reason.split(": ", 1)[1].splitlines() if line.strip()]
    return bool(lines) and all(line in decided for line in lines)


def _verdict(submission: Submission, flags: list[Flag], decided: set[str]) -> list[str]:
    verdict = submission.comparability or {}
    tier_reasons = {tier: list(v.get("reasons") or []) for tier, v in (verdict.get("tiers") or {}).items()}
    entry_wide = list(verdict.get("reasons") or [])
    every = list(dict.fromkeys([*entry_wide, *(r for reasons in tier_reasons.values() for r in reasons)]))
    undecided = [f for f in flags if not f.decision and f.severity == Flag.Severity.BLOCKING]
    notes = []
    for reason in every:
        if _from_flag(reason, flags) or _entry_decision_covered(reason, decided):
            continue
        scope = [tier for tier, reasons in tier_reasons.items() if reason in reasons]
        if reason in entry_wide and (not scope or len(scope) == len(tier_reasons)):
            notes.append(f"Non-comparable: {reason}.")
        else:
            notes.append(f"Non-comparable in {_tiers_text(scope)}: {reason}.")
    blocking = [f for f in undecided if any(_from_flag(r, [f]) for r in every)]
    if blocking:
        notes.append(f"Non-comparable: {_flags_text(blocking)} blocking, not yet decided by a maintainer.")
    return notes


def _figures(figures: dict[str, dict]) -> list[str]:
    padded: dict[int, list[str]] = {}
    unknown: dict[str, int] = {}
    for tier, variants in figures.items():
        shown = variants["all"]
        if shown["uses"] == "padded":
            padded.setdefault(shown["padded"]["seeds"], []).append(tier)
        agg = shown[shown["uses"]] if shown["uses"] else None
        if agg and agg.get("medals_unknown_runs"):
            unknown[tier] = agg["medals_unknown_runs"]
    notes = [
        f"{_tiers_text(tiers)}: no seed has a run of every competition, so the figure pads missing runs with "
        f"failures over {seeds} seed(s) (MLE-bench's --pad-missing)."
        for seeds, tiers in padded.items()
    ]
    if unknown:
        ordered = sorted(unknown.items(), key=lambda item: _tier_order(item[0]))
        counts = ", ".join(f"{TIER_LABELS.get(tier, tier)}: {runs}" for tier, runs in ordered)
        notes.append(f"Runs on competitions without a leaderboard here count as no medal ({counts} run(s)).")
    return notes


def _open_flags(flags: list[Flag]) -> list[str]:
    """One note per check a reader must know about, while no maintainer has decided on its flags."""
    by_code: dict[str, list[Flag]] = {}
    for flag in flags:
        if not flag.decision and flag.code in FOOTNOTE_CODES and flag.severity != Flag.Severity.INFO:
            by_code.setdefault(flag.code, []).append(flag)
    notes = []
    for code, found in by_code.items():
        more = f" (and {len(found) - 1} more like it on the entry page)" if len(found) > 1 else ""
        notes.append(f"{_words(code)}: {found[0].message.rstrip('.')}{more}.")
    return notes


def entry_footnotes(*, submission: Submission, flags: list[Flag], figures: dict[str, dict]) -> list[str]:
    """The entry's footnotes, each once, at most MAX_FOOTNOTES (the last then says where the rest are)."""
    notes: list[str] = []
    if submission.origin == Submission.Origin.IMPORT:
        notes.append(IMPORTED_NOTE)
    elif submission.report_only:
        notes.append(SELF_REPORTED_NOTE)
    decisions, decided = _decisions(flags)
    if not submission.comparable:
        notes.extend(_verdict(submission, flags, decided))
    notes.extend(_figures(figures))
    notes.extend(decisions)
    notes.extend(_open_flags(flags))
    unique = list(
        dict.fromkeys(note if len(note) <= FOOTNOTE_CHARS else note[: FOOTNOTE_CHARS - 1] + "…" for note in notes)
    )
    if len(unique) > MAX_FOOTNOTES:
        rest = len(unique) - MAX_FOOTNOTES + 1
        unique = [*unique[: MAX_FOOTNOTES - 1], f"{rest} more note(s) on the entry page."]
    return unique
