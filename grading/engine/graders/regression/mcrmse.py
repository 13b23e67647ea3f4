"""Mean column-wise RMSE over the scored rows (stanford-covid-vaccine's MCRMSE).

The reference requires the row count to equal the answers', every submission column to be present (also
the unscored ones), and the sorted id sequences to be equal. Only rows whose answers have ``keep`` True are
scored, and only the scored columns: an empty or non-numeric cell elsewhere is never looked at. Values
are read as scikit-learn reads them; an empty, NaN or infinite scored cell makes the file invalid.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    grader_function,
    require_answers_columns,
    require_columns,
)
from grading.engine.graders.regression.error import rmse
from grading.engine.graders.regression.mae import paired_rows, scored_predictions
from grading.engine.registry import register


@register("mcrmse")
@grader_function
def grade_mcrmse(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    scored_columns: Sequence[str],
    required_columns: Sequence[str],
    keep_column: str,
) -> float:
    """Mean over ``scored_columns`` of the RMSE on the rows whose answers' ``keep_column`` is true."""
    scored = list(scored_columns)
    require_answers_columns(answers, [id_column, *scored, keep_column])
    require_columns(submission, [id_column, *required_columns])
    sub_rows, ans_rows = paired_rows(submission, answers, id_column, "sorted_equal")
    keep = answers[keep_column].to_numpy(dtype=bool)[ans_rows]
    sub_rows, ans_rows = sub_rows[keep], ans_rows[keep]
    if not len(ans_rows):
        raise InvalidSubmission(f"no answers row has {keep_column} True, so there is nothing to score")
    errors = []
    for column in scored:
        predicted = scored_predictions(submission, column, id_column, sub_rows)
        truth = answers[column].to_numpy(dtype=np.float64)[ans_rows]
        errors.append(rmse(truth, predicted))
    return float(np.mean(errors))
