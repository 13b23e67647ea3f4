"""TensorFlow 2.0 Question Answering: Natural Questions records and 'start:end' / YES / NO predictions.

The answers are the competition's JSON Lines records (a list of dicts, as ``csvio.load_answers`` reads
``test.jsonl``), or the same records as DataFrame rows (the demo's in-memory form). Only
``example_id`` and the first annotation are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from grading.engine.csvio import collection_paused
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    AnswersProblem,
    InvalidSubmission,
    RowIds,
    plural,
    row_label,
    show,
)

_SPAN = re.compile(r"\s*([+-]?\d+)\s*:\s*([+-]?\d+)\s*", re.ASCII)
_YES_NO = ("YES", "NO")
NO_ANSWER = None


@dataclass(frozen=True)
class ExpectedRows:
    """Two rows per example, '<id>_long' then '<id>_short', with the answers each row accepts."""

    ids: list[str]
    valid: list[frozenset]  # spans as (start, end) tuples, plus 'YES' / 'NO' for short rows


def expected_rows(answers: pd.DataFrame | list) -> ExpectedRows:
    with collection_paused():  # tens of thousands of small sets next to the records' millions of objects
        return _expected_rows(answers)


def _expected_rows(answers: pd.DataFrame | list) -> ExpectedRows:
    records = answers.to_dict("records") if isinstance(answers, pd.DataFrame) else answers
    ids: list[str] = []
    valid: list[frozenset] = []
    for number, record in enumerate(records, start=1):
        try:
            example_id = record["example_id"]
            annotation = record["annotations"][0]
            long_answer = annotation["long_answer"]
            long_spans = (
                frozenset({(int(long_answer["start_token"]), int(long_answer["end_token"]))})
                if int(long_answer["start_token"]) != -1
                else frozenset()
            )
            short: set[tuple[int, int] | str] = {
                (int(s["start_token"]), int(s["end_token"])) for s in annotation["short_answers"]
            }
            if annotation.get("yes_no_answer", "NONE") != "NONE":
                short.add(str(annotation["yes_no_answer"]))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise AnswersProblem(
                f"answers record {number} lacks a usable example_id or first annotation ({type(exc).__name__}: "
                f"{exc}); each record needs example_id and annotations[0] with long_answer, short_answers and "
                "yes_no_answer"
            ) from None
        ids += [f"{example_id}_long", f"{example_id}_short"]
        valid += [long_spans, frozenset(short)]
    return ExpectedRows(ids, valid)


def parse_predictions(series: pd.Series, column: str, ids: RowIds | None) -> list:
    """Each cell as a (start, end) span, 'YES', 'NO' or NO_ANSWER (an empty cell)."""
    values = series.to_numpy(dtype=object, na_value=np.nan)
    parsed: list = []
    bad: list[int] = []
    for position, value in enumerate(values.tolist()):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            parsed.append(NO_ANSWER)
            continue
        text = value if isinstance(value, str) else str(value)
        span = _SPAN.fullmatch(text)
        if span:
            parsed.append((int(span.group(1)), int(span.group(2))))
        elif text in _YES_NO:
            parsed.append(text)
        else:
            parsed.append(NO_ANSWER)
            bad.append(position)
    if bad:
        examples = "; ".join(f"{show(values[r])} in {row_label(r, ids)}" for r in bad[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)} has {plural(len(bad), 'value')} that {'is' if len(bad) == 1 else 'are'} "
            f"not a token span 'start:end', 'YES', 'NO' or empty, e.g. {examples}; write one span such as "
            "'1054:1092', YES or NO (short answers only), or leave the cell empty for no answer"
        )
    return parsed


def correct(predicted: list, valid: list[frozenset]) -> np.ndarray:
    """The reference's y_true == y_pred per row: an answer that is one of the valid ones, or no answer
    where there is none."""
    return np.fromiter(
        ((p in v) if p is not NO_ANSWER else not v for p, v in zip(predicted, valid, strict=True)),
        dtype=bool,
        count=len(valid),
    )
