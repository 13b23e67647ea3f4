"""The one rule that gives every run of a bundle its seed (SPEC section 2).

MLE-bench itself never names seeds: its aggregation takes the i-th report of every competition as seed i
(MECHANICS (e)). The portal keeps that counting, lets a team pin seeds explicitly, and writes the rule out
once, here, so that the entry page shows exactly the text the code follows.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from grading.bundles.errors import BundleError

RULE_TEXT: Final = """\
How seeds are assigned

Every run in a bundle gets a seed number, counted from 0. Seed s of every competition together make up
seed s of the entry, which is how MLE-bench averages over seeds.

1. A run's seed is explicit when runs/<run_group>/metadata.json gives it ("runs": {"<run_id>": {"seed": 2}})
   or when manifest.json does ("run_seeds": {"<run_group>/<run_id>": 2}, or keyed by "<run_id>" alone).
   When both give one, they must agree.
2. Otherwise it is counted: the runs of one competition without an explicit seed are ordered by run group
   name, then by run id (plain text order, character by character), and the i-th of them, counting from
   0, is seed i, skipping any number an explicit seed of that competition already holds.
3. Two runs of one competition never share a seed; a bundle where they would is refused.

A run is a folder runs/<run_group>/<run_id>/ whose name, the run id, is <competition_id>_<uuid> as
MLE-bench names it (and keys it in metadata.json); the competition id is everything before the last "_".
A run that made no submission keeps its seed and counts as a failed run for that seed."""

Source = Literal["metadata", "manifest", "order"]


class SeedCandidate(Protocol):
    """What the rule needs to know about a run; layout.BundleRun has it."""

    @property
    def competition_id(self) -> str: ...
    @property
    def run_group(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def metadata_seed(self) -> int | None: ...


@dataclass(frozen=True, kw_only=True)
class SeededRun:
    competition_id: str
    run_group: str
    run_id: str
    seed: int
    source: Source  # where the seed came from, shown next to it


def assign_seeds(
    *, runs: Iterable[SeedCandidate], manifest_seeds: Mapping[str, int] | None = None
) -> tuple[SeededRun, ...]:
    # The docstring is RULE_TEXT, assigned below: one text for the code, help() and the entry page.
    by_competition: dict[str, list[tuple[SeedCandidate, tuple[int, Source] | None]]] = defaultdict(list)
    for run in runs:
        by_competition[run.competition_id].append((run, _explicit_seed(run, manifest_seeds or {})))
    assigned: list[SeededRun] = []
    for competition_id, entries in by_competition.items():
        taken: dict[int, SeedCandidate] = {}
        for run, explicit in entries:
            if explicit is None:
                continue
            seed, source = explicit
            if seed in taken:
                raise _conflict(
                    f"{competition_id}: {_where(taken[seed])} and {_where(run)} both claim seed {seed}",
                    competition_id,
                )
            taken[seed] = run
            assigned.append(_seeded(run, seed=seed, source=source))
        free = (number for number in itertools.count() if number not in taken)
        counted = sorted((run for run, explicit in entries if explicit is None), key=lambda r: (r.run_group, r.run_id))
        assigned += [_seeded(run, seed=next(free), source="order") for run in counted]
    return tuple(sorted(assigned, key=lambda s: (s.competition_id, s.seed)))


assign_seeds.__doc__ = RULE_TEXT  # set, not written as a literal, so that `python -OO` cannot strip it


def _explicit_seed(run: SeedCandidate, manifest_seeds: Mapping[str, int]) -> tuple[int, Source] | None:
    from_manifest = manifest_seeds.get(f"{run.run_group}/{run.run_id}", manifest_seeds.get(run.run_id))
    from_metadata = run.metadata_seed
    if from_manifest is not None and from_metadata is not None and from_manifest != from_metadata:
        raise _conflict(
            f"{_where(run)}: metadata.json says seed {from_metadata} but manifest.json says {from_manifest}",
            run.competition_id,
        )
    if from_metadata is not None:
        return from_metadata, "metadata"
    if from_manifest is not None:
        return from_manifest, "manifest"
    return None


def _seeded(run: SeedCandidate, *, seed: int, source: Source) -> SeededRun:
    return SeededRun(
        competition_id=run.competition_id,
        run_group=run.run_group,
        run_id=run.run_id,
        seed=seed,
        source=source,
    )


def _where(run: SeedCandidate) -> str:
    return f"runs/{run.run_group}/{run.run_id}"


def _conflict(message: str, competition_id: str) -> BundleError:
    return BundleError("seed_conflict", message, {"competition_id": competition_id})
