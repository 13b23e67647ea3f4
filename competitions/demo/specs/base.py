"""What a competition's synthetic answers look like: the :class:`Spec` every group module fills in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from competitions.demo import fields
from competitions.demo.targets import Binary, Target

ExtrasHook = Callable[[np.random.Generator, dict[str, np.ndarray], int], dict[str, np.ndarray]]
BuildHook = Callable[[np.random.Generator, int], tuple[pd.DataFrame, pd.DataFrame | None]]


@dataclass(frozen=True)
class Spec:
    """How to synthesise one competition's answers.

    ``public_columns`` is the sample submission's header (the public format). Answers are
    ``[id] + targets + extras`` (``targets_last`` puts targets at the end) unless ``build`` makes the whole
    frame. ``rows`` rounds a requested size to one the id structure allows (whole images, 19 species).
    """

    id_format: str  # shown in description.md
    targets: tuple[Target, ...]
    public_columns: tuple[str, ...]
    make_ids: fields.IdMaker | None = None
    extras: ExtrasHook | None = None
    targets_last: bool = False
    build: BuildHook | None = None
    rows: Callable[[int], int] | None = None
    small_rows: int = 300
    csv_quoting: str = "minimal"  # or "nonnumeric" (text normalisation writes QUOTE_NONNUMERIC)


def binary(
    id_column: str,
    make_ids: fields.IdMaker,
    target: str,
    prevalence: float,
    *,
    sample: float = 0.5,
    id_format: str,
) -> Spec:
    return Spec(
        id_format=id_format,
        make_ids=make_ids,
        targets=(Binary(target, prevalence, sample_value=sample),),
        public_columns=(id_column, target),
    )
