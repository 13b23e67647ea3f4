"""Synthetic answers, sample submission and gold submission for one competition.

The frames have the dtypes ``pandas.read_csv`` gives for the written files, so what a grader sees in
memory is what it would see after a round trip through the pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from competitions.demo.catalog import CompetitionFacts, competition_facts, rng_for
from competitions.demo.specs import Spec, spec_for
from competitions.demo.targets import RenamesTruth, predicted_columns

Size = Literal["small", "full"] | int


@dataclass(frozen=True)
class DemoAnswers:
    """One competition's synthetic private and public files, as frames."""

    competition_id: str
    answers: pd.DataFrame
    sample_submission: pd.DataFrame
    gold_submission: pd.DataFrame | None  # only where competitions.json names a separate gold file
    seed: int
    size: Size

    @property
    def facts(self) -> CompetitionFacts:
        return competition_facts(self.competition_id)

    @property
    def spec(self) -> Spec:
        return spec_for(self.competition_id)


def expected_rows(*, competition_id: str, size: Size) -> int:
    """The exact number of answer rows ``generate_answers`` makes for ``size``.

    ``"full"`` is competitions.json's answers_rows_estimate, ``"small"`` the spec's small size; an int
    asks for that many rows, rounded up to whole images (denoising) or whole recordings (MLSP).
    """
    spec = spec_for(competition_id)
    if size == "full":
        requested = competition_facts(competition_id).rows_estimate
    elif size == "small":
        requested = spec.small_rows
    elif isinstance(size, int) and not isinstance(size, bool) and size > 0:
        requested = size
    else:
        raise ValueError(f"size must be 'small', 'full' or a positive int, not {size!r}")
    return spec.rows(requested) if spec.rows else requested


def generate_answers(*, competition_id: str, size: Size = "small", seed: int = 0) -> DemoAnswers:
    """Answers in the competition's private format, plus its sample (and gold) submission."""
    facts = competition_facts(competition_id)
    spec = spec_for(competition_id)
    n = expected_rows(competition_id=competition_id, size=size)
    rng = rng_for(seed=seed, competition_id=competition_id, purpose="answers")
    if spec.build is not None:
        answers, sample = spec.build(rng, n)
    else:
        answers, sample = _generic_answers(spec, facts, rng, n), None
    if sample is None:
        sample = _sample_submission(spec, answers)
    sample = _as_read_back(sample)
    gold = _gold_submission(spec, answers) if facts.has_separate_gold else None
    return DemoAnswers(
        competition_id=competition_id,
        answers=answers,
        sample_submission=sample,
        gold_submission=gold,
        seed=seed,
        size=size,
    )


def _generic_answers(spec: Spec, facts: CompetitionFacts, rng: np.random.Generator, n: int) -> pd.DataFrame:
    assert spec.make_ids is not None
    ids = {facts.id_column: spec.make_ids(rng, n)}
    targets: dict[str, np.ndarray] = {}
    for target in spec.targets:
        targets.update(target.generate(rng, n))
    extras = spec.extras(rng, {**ids, **targets}, n) if spec.extras else {}
    ordered = {**ids, **extras, **targets} if spec.targets_last else {**ids, **targets, **extras}
    return pd.DataFrame(ordered)


def _gold_submission(spec: Spec, answers: pd.DataFrame) -> pd.DataFrame:
    """The answers in the public format: their own columns, unless a target kind derives the gold file
    (TF2-QA's answers are question records, its gold submission two rows per record)."""
    for target in spec.targets:
        derive = getattr(target, "gold_submission", None)
        if derive is not None:
            return derive(answers)
    # A target kind whose answers column has another name than the submission's (HuBMAP's 'encoding'
    # against 'predicted') says so with ``truth_column``.
    renamed = {t.column: t.truth_column for t in spec.targets if isinstance(t, RenamesTruth) and t.truth_column}
    return pd.DataFrame({c: answers[renamed.get(c, c) if c not in answers else c] for c in spec.public_columns})


def _sample_submission(spec: Spec, answers: pd.DataFrame) -> pd.DataFrame:
    sample = answers[list(spec.public_columns)].copy()
    for target in spec.targets:
        fill = target.sample_value
        for column in predicted_columns(target):
            if column in sample.columns:
                sample[column] = fill[column] if isinstance(fill, dict) else fill
    return sample


def _as_read_back(frame: pd.DataFrame) -> pd.DataFrame:
    """An all-empty text column is what read_csv gives back for it: float NaN."""
    empty = [c for c in frame.columns if frame[c].dtype == object and len(frame) and frame[c].isna().all()]
    return frame.assign(**{c: np.full(len(frame), np.nan) for c in empty}) if empty else frame
