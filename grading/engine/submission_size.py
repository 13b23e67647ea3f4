"""The largest size an honest submission can reach, per competition (framework-free).

A submission's size follows its competition's format, not the answers file: it may list more rows than
the answers (h-and-m's sample submission lists all 1,371,980 customers, its answers only the 78,000 or so
who bought that week) and its values may be far wider (twelve predicted articles where a customer bought
three; a probability written with 17 digits where the answers hold 0 or 1). So the bound is

    header + rows x the widest honest row

with rows the larger of the answers' and the sample submission's row counts, and the widest honest row
every column at its widest honest value: a number at its longest text form, the id column at the widest
id in the answers or the sample, a text prediction at twice the widest value in either (masks of a noisy
model, longer label lists), and a list of k predictions (MAP@k) at k of its widest token (or the widest list
either file shows, if longer). Each text value may be quoted, and each line may end in CRLF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

# repr() of any float64 is at most 24 characters ('-1.2345678901234567e-308'), any int64 at most 20.
NUMBER_BYTES = 24
TEXT_HEADROOM = 2
QUOTES = 2
LINE_END = 2


@dataclass(frozen=True)
class HonestSize:
    rows: int
    row_bytes: int
    header_bytes: int

    @property
    def max_bytes(self) -> int:
        return self.header_bytes + self.rows * self.row_bytes


def honest_size(
    *,
    columns: Sequence[str],
    frames: Sequence[pd.DataFrame],
    rows: int,
    id_column: str = "",
    list_lengths: dict[str, int] | None = None,
) -> HonestSize:
    """The bound for a submission with ``columns``, whose values look like those of ``frames`` (the
    answers and the sample submission, where readable) and which has at most ``rows`` rows.
    ``list_lengths`` names the columns that hold a space-separated list of predictions and how many it
    may hold (h-and-m's ``prediction``: 12)."""
    lengths = list_lengths or {}
    widths = [
        _column_bytes(
            [f[name] for f in frames if name in f.columns], is_id=name == id_column, list_length=lengths.get(name)
        )
        for name in columns
    ]
    header = sum(len(str(name).encode("utf-8")) + QUOTES for name in columns) + max(len(columns) - 1, 0) + LINE_END
    return HonestSize(rows=rows, row_bytes=sum(widths) + max(len(columns) - 1, 0) + LINE_END, header_bytes=header)


def list_lengths_from_params(*, params: dict) -> dict[str, int]:
    """A grader that scores the first k space-separated predictions (MAP@k) accepts up to k of them."""
    k, column = params.get("k"), params.get("target_column")
    return {column: int(k)} if isinstance(k, int) and isinstance(column, str) else {}


def _column_bytes(values: list[pd.Series], *, is_id: bool, list_length: int | None) -> int:
    if not values:
        return NUMBER_BYTES  # nothing to go by: a column the grader reads is most often a number
    widest = 0
    for series in values:
        if _is_number(series):
            widest = max(widest, NUMBER_BYTES)
            continue
        text = _as_text(series)
        if text is None:
            continue
        plain = _max_bytes(text)
        if list_length:  # k predictions at the widest token, or the widest list shown, if longer
            token = _max_bytes(pc.list_flatten(pc.utf8_split_whitespace(text)))
            widest = max(widest, max(list_length * token + list_length - 1, plain) + QUOTES)
        else:
            widest = max(widest, (plain if is_id else TEXT_HEADROOM * plain) + QUOTES)
    return max(widest, 1)


def _is_number(series: pd.Series) -> bool:
    return series.dtype.kind in "biuf"


def _as_text(series: pd.Series) -> pa.Array | None:
    present = series.dropna()
    if present.empty:
        return None
    return pa.array(present.astype(str), type=pa.large_string())


def _max_bytes(array: pa.Array) -> int:
    if len(array) == 0:
        return 0
    return int(pc.max(pc.binary_length(array)).as_py() or 0)
