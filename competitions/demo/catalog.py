"""Facts the demo generators read: competitions.json, the tier splits and graders.json.

Everything comes from ``competitions/data/mlebench-v1/`` in this checkout, so the synthetic packs follow
the same file names, columns and grader choices as the real MLE-bench data.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "mlebench-v1"
BENCHMARK = "mle-bench v1"


@dataclass(frozen=True)
class CompetitionFacts:
    """The part of a competitions.json entry that shapes a pack."""

    id: str
    name: str
    tier: str
    metric: str
    higher_is_better: bool
    submission_columns: tuple[str, ...]
    id_column: str
    answers_path: str  # as MLE-bench lays it out, e.g. "prepared/private/test.csv"
    sample_submission_path: str
    gold_submission_path: str
    rows_estimate: int

    @property
    def answers_file(self) -> str:
        return Path(self.answers_path).name

    @property
    def sample_submission_file(self) -> str:
        return Path(self.sample_submission_path).name

    @property
    def has_separate_gold(self) -> bool:
        return self.gold_submission_path != self.answers_path

    @property
    def sample_submission_is_private(self) -> bool:
        return self.sample_submission_path.startswith("prepared/private/")


@cache
def _competitions() -> dict[str, dict[str, Any]]:
    entries = json.loads((DATA_DIR / "competitions.json").read_text())
    return {entry["id"]: entry for entry in entries}


def competition_facts(competition_id: str) -> CompetitionFacts:
    try:
        entry = _competitions()[competition_id]
    except KeyError:
        raise KeyError(f"unknown competition {competition_id!r}") from None
    return CompetitionFacts(
        id=entry["id"],
        name=entry["name"],
        tier=entry["tier"],
        metric=entry["metric"],
        higher_is_better=bool(entry["higher_is_better"]),
        submission_columns=tuple(entry["submission_columns"]),
        id_column=entry["id_column"].split(" ")[0],
        answers_path=entry["answers_file"],
        sample_submission_path=entry["sample_submission_file"],
        gold_submission_path=entry["gold_submission_file"],
        rows_estimate=int(entry["answers_rows_estimate"]),
    )


def split_ids(split: str) -> list[str]:
    """Competition ids of an MLE-bench split (``low``, ``medium``, ``high``, ``split75``, ``dev``)."""
    path = DATA_DIR / "splits" / f"{split}.txt"
    if not path.exists():
        raise ValueError(f"unknown split {split!r}")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class GraderChoice:
    name: str
    params: dict[str, Any]


@cache
def _graders(path: Path, mtime_ns: int) -> dict[str, Any]:
    return json.loads(path.read_text())


def grader_choice(competition_id: str) -> GraderChoice:
    """The registered grader and parameters for a competition, from graders.json."""
    path = DATA_DIR / "graders.json"
    if not path.exists():
        raise LookupError(f"{path} does not exist yet: no grader is configured")
    entry = _graders(path, path.stat().st_mtime_ns).get(competition_id)
    if entry is None:
        raise LookupError(f"{path.name} has no grader for {competition_id!r}")
    return GraderChoice(name=entry["grader"], params=dict(entry.get("params") or {}))


def rng_for(*, seed: int, competition_id: str, purpose: str) -> np.random.Generator:
    """An independent, reproducible stream per (seed, competition, purpose)."""
    key = [zlib.crc32(competition_id.encode()), zlib.crc32(purpose.encode())]
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *key])
