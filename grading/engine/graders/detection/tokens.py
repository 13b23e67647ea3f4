"""Prediction strings ("label conf x y ..." groups in one cell) split into objects, with messages that say
which row, which token and what was expected.

A :class:`TokenFormat` names the fields of one object in order. Parsing a column gives :class:`Objects`: one
entry per object with the row it came from, its text field (the label) and its numeric fields as float64.
Numbers are read with Python's ``float`` (so ``1e3``, ``nan`` and ``inf`` are numbers), exactly as the
reference graders read each token.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._validation import MAX_EXAMPLES, RowIds, plural, row_label, show

try:  # pandas keeps text in Arrow buffers when pyarrow is installed: split and convert it there
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError:  # pragma: no cover
    pa = None
    pc = None


@dataclass(frozen=True)
class Objects:
    """Parsed objects of a column, in row order and, within a row, in the order written."""

    row: np.ndarray  # intp, the 0-based row each object came from
    label: np.ndarray  # object array of the text field (the label), or empty when the format has none
    values: np.ndarray  # float64 (n, k): the numeric fields in format order
    rows_with_text: np.ndarray  # bool per row: the cell held a string (not empty / NaN)

    def __len__(self) -> int:
        return len(self.row)


@dataclass(frozen=True)
class TokenFormat:
    """One object's fields, the separator and what an empty cell means.

    ``separator=None`` splits on any run of whitespace (``str.split()``); ``" "`` splits on every single
    space (``str.split(" ")``) as the reference does, so two spaces in a row make an empty token.
    ``empty_cell`` is ``"no_objects"`` (an empty or NaN cell is a row without objects) or ``"invalid"``.
    """

    fields: tuple[str, ...]
    label_field: int | None
    separator: str | None
    empty_cell: str
    example: str  # one object as it should be written, e.g. "'14 0.9 10 20 300 400'"
    empty_hint: str = ""

    @property
    def width(self) -> int:
        return len(self.fields)

    def describe(self) -> str:
        return f"groups of {self.width} tokens ('{' '.join(self.fields)}')"

    def parse(self, column: pd.Series, name: str, ids: RowIds | None = None) -> Objects:
        """Objects of a submission column; InvalidSubmission names the row, token and expected field."""
        cells = column.to_numpy(dtype=object, na_value=np.nan)
        missing = np.asarray(pd.isna(cells), dtype=bool)
        if missing.any() and self.empty_cell == "invalid":
            positions = np.flatnonzero(missing)
            shown = ", ".join(row_label(int(p), ids) for p in positions[:MAX_EXAMPLES])
            raise InvalidSubmission(
                f"column {show(name)} has {plural(len(positions), 'empty cell')} (e.g. {shown}); every row "
                f"needs at least one prediction, written as {self.describe()}{self.empty_hint}"
            )
        fast = _arrow_objects(column, missing, self)
        if fast is not None:
            return fast
        texts = [c if isinstance(c, str) else ("" if m else str(c)) for c, m in zip(cells.tolist(), missing)]
        split = (lambda s: s.split()) if self.separator is None else (lambda s: s.split(self.separator))
        token_lists = [split(t) if not m else [] for t, m in zip(texts, missing)]
        counts = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
        bad = np.flatnonzero(counts % self.width != 0)
        if len(bad):
            raise InvalidSubmission(self._count_message(name, ids, bad, counts, texts))
        tokens = np.fromiter(chain.from_iterable(token_lists), dtype=object, count=int(counts.sum()))
        objects = tokens.reshape(-1, self.width)
        rows = np.repeat(np.arange(len(cells), dtype=np.intp), counts // self.width)
        numeric = [i for i in range(self.width) if i != self.label_field]
        values = np.empty((len(objects), len(numeric)), dtype=np.float64)
        for j, field in enumerate(numeric):
            column_tokens = objects[:, field]
            try:
                values[:, j] = np.fromiter(map(float, column_tokens), dtype=np.float64, count=len(column_tokens))
            except (ValueError, TypeError):
                raise InvalidSubmission(self._number_message(name, ids, column_tokens, rows, field, counts)) from None
        label = objects[:, self.label_field] if self.label_field is not None else np.empty(0, dtype=object)
        return Objects(row=rows, label=label, values=values, rows_with_text=~missing)

    def parse_answers(self, column: pd.Series, name: str) -> Objects:
        """Objects of an answers column; a malformed cell is our problem (AnswersProblem), not the team's."""
        try:
            return self.parse(column, name)
        except InvalidSubmission as exc:
            raise AnswersProblem(f"the answers' {exc}") from None

    # -----------------------------------------------------------------------------------------------
    # Messages

    def _count_message(
        self, name: str, ids: RowIds | None, bad: np.ndarray, counts: np.ndarray, texts: list[str]
    ) -> str:
        examples = "; ".join(
            f"{row_label(int(p), ids)} has {plural(int(counts[p]), 'token')}{self._count_hint(texts[p])}"
            for p in bad[:MAX_EXAMPLES]
        )
        return (
            f"column {show(name)}: the tokens of each row must come in {self.describe()}, e.g. {self.example}; "
            f"{plural(len(bad), 'row')} {'does' if len(bad) == 1 else 'do'} not: {examples}"
        )

    def _count_hint(self, text: str) -> str:
        if self.separator == " " and ("  " in text or text != text.strip(" ")):
            return " (separate tokens with exactly one space: a double, leading or trailing space makes an empty token)"
        return ""

    def _number_message(
        self,
        name: str,
        ids: RowIds | None,
        column_tokens: np.ndarray,
        rows: np.ndarray,
        field: int,
        counts: np.ndarray,
    ) -> str:
        failed = []
        for position, token in enumerate(column_tokens.tolist()):
            try:
                float(token)
            except (ValueError, TypeError):
                failed.append(position)
        first_object_of_row = np.concatenate([[0], np.cumsum(counts // self.width)])
        examples = []
        for position in failed[:MAX_EXAMPLES]:
            row = int(rows[position])
            index_in_row = position - int(first_object_of_row[row])
            token_number = index_in_row * self.width + field + 1
            token = column_tokens[position]
            what = "an empty token (two spaces in a row?)" if token == "" else show(token)
            examples.append(
                f"{row_label(row, ids)}, token {token_number} ({self.fields[field]} of object "
                f"{index_in_row + 1}) is {what}"
            )
        return (
            f"column {show(name)}: {plural(len(failed), 'token')} that should be a number "
            f"{'is' if len(failed) == 1 else 'are'} not: " + "; ".join(examples) + f". Objects are written as "
            f"{self.describe()}, e.g. {self.example}"
        )


def _arrow_objects(column: pd.Series, missing: np.ndarray, fmt: TokenFormat) -> Objects | None:
    """The fast path: split and convert in Arrow when that gives exactly what Python's ``str.split`` and
    ``float`` give. Text with anything but printable ASCII (tabs, non-breaking or ideographic spaces, where
    the two disagree on "whitespace") and any problem at all (bad counts, a token Arrow cannot read as a
    number) go to the Python path, which decides and explains."""
    if pa is None:
        return None
    array = getattr(column.array, "_pa_array", None)
    if array is None or not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pc.any(pc.match_substring_regex(array, r"[^\x20-\x7e]")).as_py():
        return None
    if fmt.separator is None:
        lists = pc.ascii_split_whitespace(array)
    else:
        lists = pc.split_pattern(array, pattern=fmt.separator)
    counts = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if (counts % fmt.width).any():
        return None
    tokens = lists.flatten()
    n_objects = int(counts.sum()) // fmt.width
    starts = np.arange(n_objects, dtype=np.int64) * fmt.width
    numeric = [i for i in range(fmt.width) if i != fmt.label_field]
    values = np.empty((n_objects, len(numeric)), dtype=np.float64)
    try:
        for j, field in enumerate(numeric):
            values[:, j] = tokens.take(pa.array(starts + field)).cast(pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if fmt.label_field is not None:
        label = np.asarray(tokens.take(pa.array(starts + fmt.label_field)).to_numpy(zero_copy_only=False), dtype=object)
    else:
        label = np.empty(0, dtype=object)
    rows = np.repeat(np.arange(len(counts), dtype=np.intp), counts // fmt.width)
    return Objects(row=rows, label=label, values=values, rows_with_text=~missing)
