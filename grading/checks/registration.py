"""registration: a bundle that names a registration (SPEC section 9) is held to it.

Each run of a registered competition must hold the registration's nonce in its log (run.log or logs/); a run
without it is not part of the registration: it does not count, and a blocking flag (``no_nonce``) lists it.
Every registered (competition, seed) counts: a registered seed the bundle does not report counts as a failure,
which a warning (``unreported_seeds``) states. ``outcomes_as_registered`` is what the aggregation counts.

A registration of the same team, agent and version whose deadline passed and that no bundle named (an unnamed
registration, grading.selectors.unnamed_registrations) counts too: each of its registered (competition, seed)
is a failure of the entry (``outcomes_with_unnamed``), which a warning (``unnamed_registrations``) states.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from grading.checks.base import FlagData
from grading.checks.context import CheckContext, RegistrationFacts, RunFiles
from grading.engine.aggregation import RunOutcome

CHUNK: Final = 1 << 20
MAX_LISTED: Final = 20


def _holds(path: Path, needle: bytes) -> bool:
    """Whether the file holds ``needle``, read in blocks (a log may be gigabytes)."""
    tail = b""
    try:
        with path.open("rb") as handle:
            while block := handle.read(CHUNK):
                window = tail + block
                if needle in window:
                    return True
                tail = window[-(len(needle) - 1) :]
    except OSError:
        return False
    return False


def has_nonce(run: RunFiles, nonce: str) -> bool:
    needle = nonce.encode()
    return any(_holds(path, needle) for path in run.log_files())


def runs_without_nonce(context: CheckContext) -> list[RunFiles]:
    """The runs of registered competitions whose logs lack the nonce (their files there to read)."""
    registration = context.registration
    if registration is None:
        return []
    if "runs_without_nonce" not in context.cache:
        wanted = set(registration.competitions)
        context.cache["runs_without_nonce"] = [
            run
            for run in context.runs
            if run.competition_id in wanted and run.folder is not None and not has_nonce(run, registration.nonce)
        ]
    return context.cache["runs_without_nonce"]


def outcomes_as_registered(
    outcomes: Iterable[RunOutcome], *, registration: RegistrationFacts, ungraded: Mapping[str, int] | None = None
) -> list[RunOutcome]:
    """The outcomes the aggregation counts under a registration: each registered competition's runs renumbered
    0, 1, ... in seed order, and failing placeholders up to the registered seeds, so a registered seed never
    reported counts as a failure in the complete and the padded aggregate alike. ``ungraded`` counts, per
    competition, runs we failed to grade: they wait for a re-grade and are not padded over. Runs of other
    competitions are left as they are."""
    wanted = set(registration.competitions)
    result: list[RunOutcome] = []
    by_competition: dict[str, list[RunOutcome]] = {}
    for outcome in outcomes:
        if outcome.competition_id in wanted:
            by_competition.setdefault(outcome.competition_id, []).append(outcome)
        else:
            result.append(outcome)
    for cid in registration.competitions:
        runs = sorted(by_competition.get(cid, []), key=lambda o: o.seed)
        result += [replace(run, seed=slot) for slot, run in enumerate(runs)]
        waiting = (ungraded or {}).get(cid, 0)
        for slot in range(len(runs) + waiting, registration.seeds):
            result.append(_failure(cid, slot))
    return result


def outcomes_with_unnamed(outcomes: Iterable[RunOutcome], unnamed: Sequence[RegistrationFacts]) -> list[RunOutcome]:
    """The outcomes and, for each unnamed registration in turn, a failure for each of its registered
    (competition, seed): its seeds are numbered after the highest seed counted so far (all competitions alike, so
    a registration of a whole split adds complete seeds of failures)."""
    result = list(outcomes)
    if not unnamed:
        return result
    start = max((outcome.seed for outcome in result), default=-1) + 1
    for registration in unnamed:
        for cid in registration.competitions:
            result += [_failure(cid, start + slot) for slot in range(registration.seeds)]
        start += registration.seeds
    return result


def unnamed_flag(
    unnamed: Sequence[RegistrationFacts], *, tiers_of_all: Callable[[Iterable[str]], list[str]]
) -> FlagData | None:
    """The warning that unnamed registrations' seeds count as failures, or None when there is none."""
    if not unnamed:
        return None
    said = "; ".join(
        f"{r.seeds} seeds registered in registration {r.id} ({len(r.competitions)} competition(s)), never reported"
        for r in unnamed
    )
    runs = sum(r.seeds * len(r.competitions) for r in unnamed)
    return FlagData(
        code="registration",
        severity="warning",
        key="unnamed_registrations",
        tiers=tiers_of_all({cid for r in unnamed for cid in r.competitions}),
        message=f"{said}: counted as failures ({runs} run(s) in all). A maintainer may accept the team's "
        "withdrawal of a registration, with its reason public.",
        evidence={
            "registrations": [{"id": r.id, "seeds": r.seeds, "competitions": list(r.competitions)} for r in unnamed],
            "runs_counted_as_failures": runs,
        },
    )


def _failure(competition_id: str, seed: int) -> RunOutcome:
    return RunOutcome(
        competition_id=competition_id,
        seed=seed,
        submission_exists=False,
        valid_submission=False,
        gold=False,
        silver=False,
        bronze=False,
        above_median=False,
    )


def seeds_reported(*, registration: RegistrationFacts, counted: Iterable[str]) -> tuple[int, int]:
    """(seeds reported, runs missing): the most runs any registered competition reports (at most the registered
    seeds), and the registered (competition, seed) pairs with no counted run. ``counted``: a competition id per
    counted run."""
    per = Counter(cid for cid in counted if cid in set(registration.competitions))
    reported = max((min(per[cid], registration.seeds) for cid in registration.competitions), default=0)
    missing = sum(max(0, registration.seeds - per[cid]) for cid in registration.competitions)
    return reported, missing


def check(context: CheckContext) -> list[FlagData]:
    lapsed = unnamed_flag(context.unnamed_registrations, tiers_of_all=context.tiers_of_all)
    flags = [lapsed] if lapsed is not None else []
    registration = context.registration
    if registration is None:
        return flags
    without = runs_without_nonce(context)
    if without:
        listed = [run.run_path for run in without]
        flags.append(
            FlagData(
                code="registration",
                severity="blocking",
                key="no_nonce",
                tiers=context.tiers_of_all(run.competition_id for run in without),
                message=f"{len(without)} run(s) have no log holding registration {registration.id}'s nonce, so they "
                f"are not part of it and do not count, e.g. {listed[0]}; write the nonce into each run's log "
                "before it writes its submission.",
                evidence={"registration": registration.id, "runs": listed[:MAX_LISTED], "total": len(listed)},
            )
        )
    skipped = {id(run) for run in without}
    counted = [run.competition_id for run in context.runs if id(run) not in skipped]
    reported, missing = seeds_reported(registration=registration, counted=counted)
    if missing:
        flags.append(
            FlagData(
                code="registration",
                severity="warning",
                key="unreported_seeds",
                tiers=context.tiers_of_all(registration.competitions),
                message=f"{registration.seeds} seeds registered, {reported} reported; the "
                f"{registration.seeds - reported} seed(s) not reported ({missing} run(s) in all) count as failures.",
                evidence={
                    "registration": registration.id,
                    "seeds_registered": registration.seeds,
                    "seeds_reported": reported,
                    "runs_missing": missing,
                },
            )
        )
    return flags
