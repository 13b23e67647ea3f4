"""A simulated agent: submissions in a competition's public format with a chosen quality.

``quality`` in [0, 1] is the share of rows the agent knows; the rest is noise (see
:mod:`competitions.demo.targets`). A known row is an exact label or text, and on a continuous target the truth
plus the model's error (a probability below 1, a value off by a little), as an honest model writes it. For a
fixed seed the score moves monotonically with quality: 0 is pure noise, 1 the best an honest model does.
``answers_submission`` is the answers themselves in the public format, what a team copying them writes.
``defects`` break a submission on purpose, to test validation: whether a defect makes a submission *invalid*
is the competition's rule (for example nomad2018 aligns rows by position, so duplicate ids pass there).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

import numpy as np
import pandas as pd

from competitions.demo.catalog import competition_facts, rng_for
from competitions.demo.csvio import write_csv
from competitions.demo.specs import spec_for
from competitions.demo.targets import Labels, Regression, Text, predicted_columns


class Defect(StrEnum):
    MISSING_ROWS = "missing_rows"  # drop ~5% of the rows (at least one)
    DUPLICATE_IDS = "duplicate_ids"  # overwrite a few ids with other rows' ids
    WRONG_COLUMNS = "wrong_columns"  # rename the first predicted column
    NAN_VALUES = "nan_values"  # blank ~1% of the first predicted column (at least one)
    OUT_OF_RANGE = "out_of_range"  # probabilities above 1, negative regression values, unknown labels
    EMPTY = "empty"  # the header and no rows


def simulate_submission(
    *,
    competition_id: str,
    answers: pd.DataFrame,
    quality: float,
    seed: int,
    defects: Iterable[Defect | str] = (),
) -> pd.DataFrame:
    """A submission frame in the public format (the sample submission's columns and row order)."""
    if not 0.0 <= quality <= 1.0:
        raise ValueError(f"quality must be within [0, 1], not {quality}")
    return _submission(
        competition_id=competition_id, answers=answers, quality=quality, seed=seed, defects=defects, honest=True
    )


def answers_submission(*, competition_id: str, answers: pd.DataFrame) -> pd.DataFrame:
    """The answers in the public format (the sample submission's columns and row order), exact to the bit:
    no honest model writes this, a team copying the answers does."""
    return _submission(competition_id=competition_id, answers=answers, quality=1.0, seed=0, defects=(), honest=False)


def _submission(
    *,
    competition_id: str,
    answers: pd.DataFrame,
    quality: float,
    seed: int,
    defects: Iterable[Defect | str],
    honest: bool,
) -> pd.DataFrame:
    spec = spec_for(competition_id)
    rng = rng_for(seed=seed, competition_id=competition_id, purpose="agent")
    # The model's error draws come from a stream of their own, so the known rows and the noise are the same
    # draws with or without it.
    error_rng = rng_for(seed=seed, competition_id=competition_id, purpose="model-error")
    predictions: dict[str, np.ndarray] = {}
    for target in spec.targets:
        predicted = target.predict(rng, answers, quality)
        if honest and hasattr(target, "honest"):
            predicted = target.honest(error_rng, predicted, answers)
        predictions.update(predicted)
    submission = pd.DataFrame(
        {c: predictions[c] if c in predictions else answers[c].to_numpy() for c in spec.public_columns}
    )
    for defect in defects:
        submission = _apply_defect(Defect(defect), submission, competition_id, rng)
    return submission.reset_index(drop=True)


def write_submission(
    *,
    competition_id: str,
    answers: pd.DataFrame,
    quality: float,
    seed: int,
    path: Path,
    defects: Iterable[Defect | str] = (),
) -> Path:
    """Write ``simulate_submission(...)`` as CSV to ``path`` and return the path."""
    submission = simulate_submission(
        competition_id=competition_id, answers=answers, quality=quality, seed=seed, defects=defects
    )
    write_csv(submission, Path(path), quoting=spec_for(competition_id).csv_quoting)
    return Path(path)


def _first_predicted(competition_id: str, submission: pd.DataFrame) -> tuple[str, object]:
    for target in spec_for(competition_id).targets:
        for column in predicted_columns(target):
            if column in submission.columns:
                return column, target
    raise ValueError(f"{competition_id}: no predicted column in the public format")


def _some_rows(rng: np.random.Generator, n: int, share: float) -> np.ndarray:
    return rng.choice(n, size=min(n, max(1, int(n * share))), replace=False) if n else np.array([], dtype=int)


def _apply_defect(
    defect: Defect, submission: pd.DataFrame, competition_id: str, rng: np.random.Generator
) -> pd.DataFrame:
    column, target = _first_predicted(competition_id, submission)
    n = len(submission)
    if defect is Defect.EMPTY:
        return submission.iloc[0:0]
    if defect is Defect.MISSING_ROWS:
        return submission.drop(index=submission.index[_some_rows(rng, n, 0.05)])
    if defect is Defect.WRONG_COLUMNS:
        return submission.rename(columns={column: f"{column}_pred"})
    if defect is Defect.DUPLICATE_IDS:
        id_column = competition_facts(competition_id).id_column
        rows = _some_rows(rng, n, 0.02)
        ids = submission[id_column].to_numpy().copy()
        ids[rows] = ids[(rows + 1) % n]  # another row's id: one id twice, one missing
        return submission.assign(**{id_column: ids})
    submission = submission.copy()
    rows = _some_rows(rng, n, 0.01)
    text = isinstance(target, Text) or getattr(target, "is_text", False)
    if defect is Defect.NAN_VALUES:
        values = submission[column].to_numpy(dtype=object if text else float).copy()
        values[rows] = np.nan
        submission[column] = values
        return submission
    if defect is Defect.OUT_OF_RANGE:
        values = submission[column].to_numpy().copy()
        if hasattr(target, "out_of_range"):  # a target kind that knows what "out of range" means for it
            submission[column] = target.out_of_range(values, rows)
            return submission
        if text:
            raise ValueError("text answers have no range")
        if isinstance(target, Labels):
            values[rows] = -1
        elif isinstance(target, Regression):
            values = values.astype(float)
            values[rows] = -np.abs(values[rows]) - 1.0
        else:
            values = values.astype(float)
            values[rows] = 1.5
        submission[column] = values
        return submission
    raise ValueError(f"unknown defect {defect!r}")
