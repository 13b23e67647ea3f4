"""Rows matched the way ``answers.merge(submission, on=id, how="inner")`` matches them.

champs-scalar-coupling and predict-volcanic-eruptions check only that the *set* of submitted ids equals
the answers' set and then inner-merge on the id: a repeated submission id is not an error, it adds one
scored row per repetition. :func:`merge_rows_by_id_set` gives those merged rows as index arrays.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._validation import MAX_EXAMPLES, plural, show, show_many


def merge_rows_by_id_set(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(sub_rows, ans_rows)`` of the inner merge on ``id_column``, in the merge's row order.

    The merge lists the answers' rows in file order and, for each, its submission rows in file order.
    Raises InvalidSubmission (missing and unknown ids, with examples) when the two id sets differ.
    """
    index = pd.Index(answers[id_column])
    if not index.is_unique:
        raise AnswersProblem(f"the answers repeat ids in column {show(id_column)}; each id must be unique")
    sub_ids = submission[id_column]
    try:
        found = index.get_indexer(sub_ids)
    except TypeError:  # ids that cannot be compared with the answers' ids at all
        found = np.full(len(sub_ids), -1, dtype=np.intp)
    hits = np.bincount(found[found >= 0], minlength=len(index))
    unknown = np.flatnonzero(found < 0)
    absent = np.flatnonzero(hits == 0)
    if len(unknown) or len(absent):
        raise InvalidSubmission(_describe(sub_ids, index, unknown, absent, id_column))
    sub_rows = np.argsort(found, kind="stable")
    return sub_rows, found[sub_rows]


def _describe(sub_ids: pd.Series, index: pd.Index, unknown: np.ndarray, absent: np.ndarray, id_column: str) -> str:
    parts = []
    if len(absent):
        parts.append(
            f"{plural(len(absent), 'test id')} {'is' if len(absent) == 1 else 'are'} missing "
            f"(e.g. {show_many([index[int(a)] for a in absent[:MAX_EXAMPLES]])})"
        )
    if len(unknown):
        shown = ", ".join(f"{show(sub_ids.iloc[int(r)])} in row {int(r) + 1}" for r in unknown[:MAX_EXAMPLES])
        parts.append(
            f"{plural(len(unknown), 'row')} {'has an id' if len(unknown) == 1 else 'have ids'} "
            f"not in the test set (e.g. {shown})"
        )
    return (
        f"the ids in column {show(id_column)} do not match the test set: " + "; ".join(parts) + ". "
        "Submit a row for every id of the sample submission, written exactly as there "
        "(a repeated id is allowed and scored once per row)"
    )
