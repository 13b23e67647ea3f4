"""Checks shared by the probability graders (log loss, KL divergence, AUC variants, pF-beta).

Like ``_validation``, every helper only reads its inputs and raises :class:`InvalidSubmission` with a message
that says what is wrong, where and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import MAX_EXAMPLES, RowIds, plural, row_label, show, show_many
from grading.engine.graders.ids import id_objects


def row_sums(matrix: np.ndarray) -> np.ndarray:
    """Row sums as pandas computes them: an empty cell counts as 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isnan(matrix), 0.0, matrix).sum(axis=1)


def require_rows_round_to_one(
    matrix: np.ndarray, columns: Sequence[Any], ids: RowIds | None = None, *, decimals: int
) -> None:
    """Each row's sum, rounded to ``decimals`` places (NumPy's rounding), must equal 1 exactly."""
    sums = row_sums(matrix)
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.round(sums, decimals) == 1.0
    if not ok.all():
        positions = np.flatnonzero(~ok)
        examples = "; ".join(f"{row_label(int(p), ids)} sums to {sums[int(p)]:.10g}" for p in positions[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"each row's probabilities over {plural(len(columns), 'class column')} must sum to 1 once rounded "
            f"to {decimals} decimals; {plural(len(positions), 'row')} "
            f"{'does' if len(positions) == 1 else 'do'} not: {examples}. Normalise each row before writing it"
        )


def require_same_id_set(submission: pd.DataFrame, answers: pd.DataFrame, id_column: str) -> None:
    """The distinct ids must be the answers' distinct ids (how often each appears is not checked here)."""
    sub = pd.unique(id_objects(submission[id_column]))
    ans = pd.unique(id_objects(answers[id_column]))
    sub_set, ans_set = set(sub.tolist()), set(ans.tolist())
    if sub_set == ans_set:
        return
    missing = [v for v in ans.tolist() if v not in sub_set]
    unknown = [v for v in sub.tolist() if v not in ans_set]
    parts = []
    if missing:
        parts.append(
            f"{plural(len(missing), 'test id')} {'is' if len(missing) == 1 else 'are'} missing "
            f"(e.g. {show_many(missing[:MAX_EXAMPLES])})"
        )
    if unknown:
        parts.append(
            f"{plural(len(unknown), 'id')} {'is' if len(unknown) == 1 else 'are'} not in the test set "
            f"(e.g. {show_many(unknown[:MAX_EXAMPLES])})"
        )
    raise InvalidSubmission(
        f"the ids in column {show(id_column)} do not match the test set: " + "; ".join(parts) + ". "
        "Submit the rows of the sample submission, with the ids written exactly as there"
    )
