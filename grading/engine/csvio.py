"""Reading submission and answers CSV files the way MLE-bench reads them, with bounded memory.

MLE-bench parses both files with ``pd.read_csv(path, float_precision="round_trip")`` and pandas'
default type inference, and any exception while grading makes the submission invalid. We must end up
with the same DataFrame, so the parse itself is that same single ``read_csv`` call (pandas' C engine,
default ``low_memory`` chunking and all), except for large files whose columns are all numbers: those are
parsed by the same parser in blocks of rows into columns allocated once (:func:`read_numeric_blocks`),
which gives the identical frame at a third of the memory and hands anything else back to the single call.
Around it we add what MLE-bench lacks because it only grades its own agents' files: a size cap checked
before anything is read, and one streaming pass over the raw bytes (:mod:`grading.engine.textscan`) that
refuses binary files, non-UTF-8 bytes and absurdly long lines, so a hostile upload can cost neither memory
nor a confusing stack trace. Every refusal is an :class:`InvalidSubmission` whose
message says what to fix.

Speed: with pyarrow installed pandas 3 stores ``str`` columns in Arrow buffers and the C engine builds
them directly; that makes a 5.8M-row ``id,value`` file about 7x faster to read and 2.5x smaller in
memory than with Python-object strings. The parsed values are the same either way.

Where we refuse a file that MLE-bench would have parsed, the grader would have failed on it anyway
(no header, one column, NUL bytes in the header), except for the two safety caps, size and line length,
which are set far above any honest submission (see :func:`limits_for_answers`). A header with no rows is
handed to the grader like any other frame: each grader says what it makes of it (uw-madison's reference
scores it NaN, a valid score).
"""

from __future__ import annotations

import gc
import json
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.textscan import MiB, count_line_breaks, longest_line_bytes, scan_text_file

__all__ = [
    "MIN_MAX_BYTES",
    "MIN_MAX_LINE_BYTES",
    "SIZE_FACTOR",
    "MiB",
    "ReadLimits",
    "limits_for_answers",
    "load_answers",
    "longest_line_bytes",
    "read_answers",
    "read_submission",
]

# A legitimate submission has one row per answers row, so its size follows the answers file. 20x
# covers a probability written with 17+ digits where the answers hold a one-character label (and
# one-hot answers against full-precision probabilities, ~10x); the 64 MiB floor keeps small
# competitions from refusing verbose but honest files.
SIZE_FACTOR = 20
# The reason given when parsing a file ran out of memory (a format check's child tells it from a team's error).
TOO_LARGE_FOR_MEMORY = "the file is too large to parse within the grader's memory"
MIN_MAX_BYTES = 64 * MiB
# Lines are short except in run-length-encoded masks and prediction strings, whose length again
# follows the answers; 1 MiB is far above any line of a plain tabular submission.
MIN_MAX_LINE_BYTES = 1 * MiB

# Submissions at least this big whose columns are all numbers are parsed block by block into columns
# allocated once (read_numeric_blocks): the same frame as one read_csv call at about a third of its peak.
BLOCK_READ_MIN_BYTES = 64 * MiB
BLOCK_ROWS = 250_000
PROBE_ROWS = 1_000
_PLAIN_DTYPES = (np.dtype(np.int64), np.dtype(np.float64), np.dtype(bool))

# MLE-bench passes float_precision="round_trip" (Python's correctly rounded strtod). pandas >= 3.1
# parses floats correctly rounded by default and deprecates the argument, so passing it there only
# adds a warning; the test suite checks the parsed values against float() on tricky inputs.
_PANDAS_VERSION = tuple(int(p) for p in re.findall(r"\d+", pd.__version__)[:2])
_READ_KW: dict[str, Any] = {} if _PANDAS_VERSION >= (3, 1) else {"float_precision": "round_trip"}


@dataclass(frozen=True)
class ReadLimits:
    """How big a submission may be before we refuse to parse it."""

    max_bytes: int
    max_line_bytes: int


def limits_for_answers(*, answers_bytes: int, answers_longest_line: int = 0) -> ReadLimits:
    """Limits derived from the answers file: 20x its size (at least 64 MiB) and 20x its longest line
    (at least 1 MiB). Compute ``answers_longest_line`` once per competition with
    :func:`longest_line_bytes`; it matters only where answers hold long strings (RLE masks)."""
    return ReadLimits(
        max_bytes=max(MIN_MAX_BYTES, SIZE_FACTOR * answers_bytes),
        max_line_bytes=max(MIN_MAX_LINE_BYTES, SIZE_FACTOR * answers_longest_line),
    )


def read_submission(
    path: Path, *, max_bytes: int, max_line_bytes: int, answers: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Parse a team's submission exactly as MLE-bench would, or raise InvalidSubmission.

    With the competition's ``answers`` given, a large all-number submission keeps any column that is byte for
    byte the answers' column of the same name (its ids, as a rule) as a copy-on-write view of that column
    instead of a copy: the same frame, one column's memory less (:func:`read_numeric_blocks`)."""
    path = Path(path)
    line_breaks = scan_text_file(path, max_bytes=max_bytes, max_line_bytes=max_line_bytes)
    try:
        df = None
        if path.stat().st_size >= BLOCK_READ_MIN_BYTES:
            df = read_numeric_blocks(path, max_rows=line_breaks + 1, like=answers)
        if df is None:
            df = _read_csv(path)
    except pd.errors.EmptyDataError:
        raise InvalidSubmission(
            "the file holds no CSV header (it is empty or only blank lines); "
            "the first line must name the columns, e.g. 'id,label'"
        ) from None
    except pd.errors.ParserError as exc:
        raise InvalidSubmission(_explain_parser_error(str(exc))) from None
    except UnicodeDecodeError as exc:  # the byte scan should have caught it; keep the message useful
        raise InvalidSubmission(f"the file is not valid UTF-8 text ({exc.reason}); save it as UTF-8") from None
    except MemoryError:
        raise InvalidSubmission(TOO_LARGE_FOR_MEMORY) from None
    except (ValueError, OverflowError) as exc:
        raise InvalidSubmission(f"the file could not be parsed as CSV: {exc}") from None
    _check_shape(df)
    return df


def read_numeric_blocks(
    path: Path, *, max_rows: int, block_rows: int = BLOCK_ROWS, like: pd.DataFrame | None = None
) -> pd.DataFrame | None:
    """The very frame ``pd.read_csv(path)`` gives, built block by block, when every column is plain numbers.

    One ``read_csv`` call holds about three times the final frame at its peak (a 13-million-row, three-column
    file: 1 GB for a 320 MB frame). Here pandas parses ``block_rows`` rows at a time (same parser, same
    options) into columns allocated once for ``max_rows`` rows, so the peak is the frame plus one block.
    It is the same frame because pandas' single call also infers each column per block of rows and then
    joins the blocks' types: when every one of our blocks reads a column as int64, so does every smaller
    block of the single call; float64 in all of ours means int64 or float64 in each of its blocks, joined
    to float64 with the same values; bool is bool. Anything else (text, other dtypes, blocks that disagree,
    more rows than ``max_rows``, any parse error) returns None, and the caller makes the single call, so
    unusual files keep exactly pandas' own result and errors.

    ``like`` (the answers, when the caller has them): a column whose values are, block after block, byte for
    byte those of ``like``'s column of the same name and dtype is not stored twice; the frame holds a pandas
    view of ``like``'s column, which copy-on-write copies before any write to either frame. The frame is the
    same; a 13-million-row submission whose ids are the answers' ids in the answers' order holds 106 MB less.
    A column that stops matching is stored from then on (its matching rows copied from ``like``, the same
    bytes).
    """
    columns: dict[int, np.ndarray] = {}
    # Columns still following `like`: column position -> like's column values.
    following: dict[int, np.ndarray] = {}
    first: pd.DataFrame | None = None
    filled = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pd.read_csv(path, chunksize=block_rows, **_READ_KW) as reader:
                # A small first block: a file with a text column is handed back after a few rows.
                for block in _blocks(reader, first_rows=min(PROBE_ROWS, block_rows), rows=block_rows):
                    if first is None:
                        first = block.iloc[0:0]
                        if not all(dtype in _PLAIN_DTYPES for dtype in block.dtypes):
                            return None
                        following = _columns_like(block, like)
                        columns = {
                            i: np.empty(max_rows, dtype=block.dtypes.iloc[i])
                            for i in range(block.shape[1])
                            if i not in following
                        }
                    elif not block.dtypes.equals(first.dtypes) or not block.columns.equals(first.columns):
                        return None
                    end = filled + len(block)
                    if end > max_rows or not _continues(block.index, filled):
                        return None
                    for i, source in list(following.items()):
                        if not _same_bytes(block.iloc[:, i].to_numpy(), source[filled:end]):
                            del following[i]
                            columns[i] = np.empty(max_rows, dtype=source.dtype)
                            columns[i][:filled] = source[:filled]
                    for i, values in columns.items():
                        values[filled:end] = block.iloc[:, i].to_numpy()
                    filled = end
    except Exception:  # noqa: BLE001 - the single read_csv call gives pandas' own error for this file
        return None
    if first is None:
        return None
    for values in columns.values():
        values.resize(filled, refcheck=False)  # gives back the rows that max_rows over-counted
    parts: dict[int, pd.Series] = {i: pd.Series(values, copy=False) for i, values in columns.items()}
    if like is not None:
        for i in following:
            # A pandas view of like's column, not a bare array: copy-on-write then knows the two frames share
            # it, and a write to either (say, a grader setting a cell of its frame) copies the column first.
            parts[i] = like[first.columns[i]].iloc[:filled]
    frame = pd.DataFrame({i: parts[i] for i in sorted(parts)}, copy=False)
    frame.columns = first.columns
    return frame


def _columns_like(block: pd.DataFrame, like: pd.DataFrame | None) -> dict[int, np.ndarray]:
    """The block's columns that ``like`` has once, under the same name, as a plain numpy column of the same dtype."""
    if like is None or not like.columns.is_unique or block.columns.has_duplicates or not _continues(like.index, 0):
        return {}
    found = {}
    for i, (name, dtype) in enumerate(zip(block.columns, block.dtypes, strict=True)):
        if name in like.columns and like[name].dtype == dtype and isinstance(like[name].dtype, np.dtype):
            found[i] = like[name].to_numpy()
    return found


def _same_bytes(values: np.ndarray, source: np.ndarray) -> bool:
    """Byte for byte equal: -0.0 is not 0.0 here, and a NaN only equals the same NaN."""
    if values.shape != source.shape or values.dtype != source.dtype:
        return False
    unsigned = np.dtype(f"u{values.dtype.itemsize}")
    return bool(np.array_equal(values.view(unsigned), source.view(unsigned)))


def _continues(index: pd.Index, start: int) -> bool:
    """A block's rows are numbered on from ``start`` (no column was taken as the index: rows with one field
    more than the header make pandas do that, and that frame keeps its own index)."""
    return isinstance(index, pd.RangeIndex) and index.step == 1 and index.start == start and index.name is None


def _blocks(reader: Any, *, first_rows: int, rows: int) -> Iterator[pd.DataFrame]:
    size = first_rows
    while True:
        try:
            yield reader.get_chunk(size)
        except StopIteration:
            return
        size = rows


def read_answers(path: Path) -> pd.DataFrame:
    """Parse a private answers CSV the same way as submissions (trusted input: no limits)."""
    path = Path(path)
    if path.stat().st_size >= BLOCK_READ_MIN_BYTES:
        frame = read_numeric_blocks(path, max_rows=count_line_breaks(path) + 1)
        if frame is not None:
            return frame
    return _read_csv(path)


def load_answers(path: Path) -> pd.DataFrame | list[dict[str, Any]]:
    """Answers by suffix, as MLE-bench loads them: ``.csv`` into a DataFrame, ``.jsonl`` into a
    list of dicts (only tensorflow2-question-answering), anything else is an error."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_answers(path)
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as f, collection_paused():
            return [json.loads(line) for line in f if line.strip()]
    raise ValueError(f"answers file {path} has unsupported suffix {path.suffix!r}; expected .csv or .jsonl")


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while many acyclic objects are built (parsed JSON
    records): each collection on the way would walk every object built so far, with nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_csv(path: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        # DtypeWarning (mixed types across low_memory chunks) is part of how MLE-bench parses; the
        # mixed column it produces is what the grader must see, so we keep the values and drop the noise.
        warnings.simplefilter("ignore")
        return pd.read_csv(path, **_READ_KW)


def _check_shape(df: pd.DataFrame) -> None:
    columns = [str(c) for c in df.columns]
    if len(columns) == 1:
        name = columns[0]
        for sep, label in ((";", "';'"), ("\t", "tabs"), ("|", "'|'")):
            if sep in name:
                raise InvalidSubmission(
                    f"found 1 column {name!r}; the file must be comma-separated (it looks separated by {label})"
                )


_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _explain_parser_error(message: str) -> str:
    found = _FIELDS_RE.search(message)
    if found:
        want, line, saw = found.groups()
        return (
            f"line {line} has {saw} fields but the header has {want}; quote values that contain commas, "
            "and make every row have the same columns as the header"
        )
    if "EOF inside string" in message or "EOF inside" in message:
        return "a quoted value is never closed (a '\"' without its pair); check the quoting"
    return f"the file could not be parsed as CSV: {message.strip()}"
