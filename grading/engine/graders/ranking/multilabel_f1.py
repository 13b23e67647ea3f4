"""Micro-averaged F1 over label sets written as space-separated text (facebook-iii, iMet 2020, plant 2021).

As MLE-bench scores it (scikit-learn's ``MultiLabelBinarizer`` + ``f1_score(average="micro")``):

* each cell is split on whitespace (``str.split()``) into a set of labels; an empty cell is the empty
  set, a repeated label counts once;
* the vocabulary is every label that appears in the answers; predicted labels outside it are dropped
  silently (``MultiLabelBinarizer`` ignores unknown classes), so they are neither errors nor false
  positives;
* over all rows, ``F1 = 2 TP / (|predicted pairs| + |true pairs|)``, 0 when both are empty
  (scikit-learn's ``zero_division`` default).

One case departs from the reference, on purpose: answers holding a single distinct label give
``MultiLabelBinarizer`` a one-column matrix, which scikit-learn reads as a binary target and micro-averages
over both of its values (so it counts rows where the label is absent on both sides as hits); the formula
above is kept there too. No competition's answers hold fewer than two labels.

Rows are matched by id: the submission needs the id and label columns (others are ignored), one row per
test id. Cells are read as text; a column pandas parsed as numbers (every cell a single id) is compared
by the text of its numbers (``448``; a float column gives ``448.0``, which matches nothing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.graders._validation import (
    grader_function,
    require_frames,
)
from grading.engine.graders.ids import pair_by_sorted_ids
from grading.engine.graders.ranking.tokens import column_tokens, row_sets, vocabulary_of
from grading.engine.registry import register


@register("f1_micro_multilabel")
@grader_function
def grade(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str) -> float:
    """Micro F1 of the label sets in ``target_column``, rows matched on ``id_column``."""
    require_frames(submission, answers, [id_column, target_column])
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    n = len(answers)
    if pairing.sub_rows is None:
        answer_of_row = np.arange(n, dtype=np.int64) if pairing.ans_rows is None else pairing.ans_rows
    else:
        assert pairing.ans_rows is not None  # a Pairing that lists submission rows lists answers rows too
        answer_of_row = np.full(len(submission), -1, dtype=np.int64)
        answer_of_row[pairing.sub_rows] = pairing.ans_rows
    return micro_f1(submission[target_column], answers[target_column], answer_of_row=np.asarray(answer_of_row))


def micro_f1(predicted: pd.Series, actual: pd.Series, *, answer_of_row: np.ndarray) -> float:
    truth = column_tokens(actual, split="whitespace")
    vocabulary = vocabulary_of(truth)
    true_pairs = row_sets(truth, vocabulary)
    predicted_pairs = row_sets(column_tokens(predicted, split="whitespace"), vocabulary, answer_of_row)
    true_positives = int(_count_common(predicted_pairs, true_pairs))
    denominator = len(predicted_pairs) + len(true_pairs)
    return 2.0 * true_positives / denominator if denominator else 0.0


def _count_common(left: np.ndarray, right: np.ndarray) -> int:
    """How many keys of the sorted distinct array ``left`` are in the sorted distinct array ``right``."""
    if not len(right):
        return 0
    found = np.minimum(np.searchsorted(right, left), len(right) - 1)
    return int((right[found] == left).sum())
