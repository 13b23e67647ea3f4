"""Text-matching metrics: edit distance, word-set Jaccard and TF2-QA's answer matching.

``mean_levenshtein`` (billion-word-imputation, bms-molecular-translation): the mean character-level
Levenshtein distance between each prediction and its answer, rows paired by id. Distances count Unicode
code points, as python-Levenshtein does. With ``missing="invalid"`` every prediction must be a string
(billion-word: python-Levenshtein raises on an empty cell read as NaN); with ``missing="as_text"`` both
columns go through pandas' ``astype(str)`` first, so an empty cell is the text 'nan' (BMS).

``gesture_levenshtein`` (multi-modal-gesture-recognition): each Sequence is a list of whitespace-separated
gesture numbers; the score is the sum of the Levenshtein distances between the predicted and true lists
divided by the total number of true gestures.

``word_jaccard`` (tweet-sentiment-extraction, chaii): per row, the Jaccard index of the lowercased,
whitespace-split word sets, averaged over rows. An empty cell is ''. Where both sets are empty,
``both_empty="invalid"`` refuses the file (tweet's reference divides by zero) and ``"zero"`` scores the
row 0 (chaii's scikit-learn ``jaccard_score`` with its default ``zero_division``).

``nq_answers_accuracy`` (tensorflow2-question-answering): two rows per answers record, '<id>_long' and
'<id>_short'. MLE-bench's micro-averaged F1 over its 0/1 encoding equals the share of rows where an
answer is given and is one of the valid ones, or no answer is given and none exists.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    InvalidSubmission,
    grader_function,
    require_columns,
    require_frames,
    require_row_count,
    row_label,
    submission_ids,
)
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.graders.text_match import nq
from grading.engine.graders.text_match.columns import integer_lists, python_strings, text_sequences
from grading.engine.graders.text_match.levenshtein import Sequences, distances
from grading.engine.registry import register

_MISSING = ("invalid", "as_text")
_BOTH_EMPTY = ("invalid", "zero")


def _paired(submission: pd.DataFrame, answers: pd.DataFrame, id_column: str, target_column: str) -> Pairing:
    require_frames(submission, answers, [id_column, target_column])
    return pair_by_sorted_ids(submission, answers, id_column)


@register("mean_levenshtein")
@grader_function
def grade_mean_levenshtein(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str, missing: str
) -> float:
    """Mean Levenshtein distance between ``target_column`` texts of rows matched on ``id_column``."""
    if missing not in _MISSING:
        raise TypeError(f"mean_levenshtein: missing must be one of {_MISSING}, not {missing!r}")
    pairing = _paired(submission, answers, id_column, target_column)
    ids = submission_ids(submission, id_column)
    predicted = text_sequences(submission[target_column], target_column, ids, missing=missing, answers=False)
    truth = text_sequences(answers[target_column], target_column, None, missing=missing, answers=True)
    return float(np.mean(distances(predicted, truth, pairing.sub_rows, pairing.ans_rows)))


@register("gesture_levenshtein")
@grader_function
def grade_gesture_levenshtein(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str
) -> float:
    """Sum of Levenshtein distances between gesture lists over the total number of true gestures."""
    pairing = _paired(submission, answers, id_column, target_column)
    ids = submission_ids(submission, id_column)
    predicted = Sequences.from_lists(integer_lists(submission[target_column], target_column, ids, answers=False))
    truth = Sequences.from_lists(integer_lists(answers[target_column], target_column, None, answers=True))
    total = int(truth.lens.sum())
    if total == 0:
        raise AnswersProblem("the answers hold no gestures at all, so the score would divide by zero")
    return float(distances(predicted, truth, pairing.sub_rows, pairing.ans_rows).sum() / total)


@register("word_jaccard")
@grader_function
def grade_word_jaccard(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, target_column: str, both_empty: str
) -> float:
    """Mean word-set Jaccard index of lowercased, whitespace-split texts, rows matched on ``id_column``."""
    if both_empty not in _BOTH_EMPTY:
        raise TypeError(f"word_jaccard: both_empty must be one of {_BOTH_EMPTY}, not {both_empty!r}")
    pairing = _paired(submission, answers, id_column, target_column)
    predicted = python_strings(submission[target_column])
    truth = python_strings(answers[target_column])
    n = len(truth)
    sub_rows = range(n) if pairing.sub_rows is None else pairing.sub_rows.tolist()
    ans_rows = range(n) if pairing.ans_rows is None else pairing.ans_rows.tolist()
    scores = np.empty(n)
    undefined: list[int] = []
    for k, (s, a) in enumerate(zip(sub_rows, ans_rows)):
        mine, theirs = set(predicted[s].lower().split()), set(truth[a].lower().split())
        union = len(mine | theirs)
        if union == 0:
            undefined.append(s)
            scores[k] = 0.0
        else:
            scores[k] = len(mine & theirs) / union
    if undefined and both_empty == "invalid":
        # Which rows have an empty answer is the answers' secret: the reason names the rows whose prediction
        # is empty (the file's own fact), never which or how many of them meet an empty answer.
        ids = submission_ids(submission, id_column)
        empty = [row for row, text in enumerate(predicted) if not text.split()]
        shown = ", ".join(row_label(r, ids) for r in empty[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"{len(empty)} {'prediction has' if len(empty) == 1 else 'predictions have'} no words, e.g. {shown}; "
            "the metric cannot score a prediction with no words where the answer has none either (it divides "
            "by zero), so put at least one word in each prediction"
        )
    return float(np.mean(scores))


@register("nq_answers_accuracy")
@grader_function(answer_records=True)
def grade_nq_answers(
    submission: pd.DataFrame, answers: pd.DataFrame | list, *, id_column: str, target_column: str
) -> float:
    """Share of '<id>_long' / '<id>_short' rows answered correctly (MLE-bench's micro F1)."""
    expected = nq.expected_rows(answers)
    require_columns(submission, [id_column, target_column])
    require_row_count(submission, len(expected.ids))
    pairing = pair_by_sorted_ids(submission, pd.DataFrame({id_column: pd.Series(expected.ids, dtype="str")}), id_column)
    ids = submission_ids(submission, id_column)
    predicted = nq.parse_predictions(submission[target_column], target_column, ids)
    n = len(expected.ids)
    sub_rows = range(n) if pairing.sub_rows is None else pairing.sub_rows.tolist()
    ans_rows = range(n) if pairing.ans_rows is None else pairing.ans_rows.tolist()
    right = nq.correct([predicted[r] for r in sub_rows], [expected.valid[r] for r in ans_rows])
    return float(np.mean(right))
