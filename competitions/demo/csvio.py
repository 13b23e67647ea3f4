"""A fast CSV writer for large synthetic frames, byte-compatible with ``DataFrame.to_csv(index=False)``.

pandas formats every float with ``repr`` in Python, which takes ~20 s for the 5.8M-row denoising answers.
Here each column becomes a matrix of bytes (one row per line, zero-padded), the matrices are joined with
commas and newlines, and the padding is dropped in one vectorised step. Columns with few distinct values
(labels, pixel levels, vocabulary words) are formatted once per distinct value, exactly as pandas would;
other numbers are formatted arithmetically. Small frames go straight to pandas.

``write_jsonl`` writes the one answers file that is JSON Lines rather than CSV (TF2-QA's records).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

FAST_MIN_ROWS = 20_000
_CHUNK_ROWS = 500_000
_MAX_LOOKUP = 20_000
_FLOAT_DECIMALS = 10


def write_csv(frame: pd.DataFrame, path: Path, *, quoting: str = "minimal", fast_min_rows: int = FAST_MIN_ROWS) -> None:
    """Write ``frame`` like ``frame.to_csv(path, index=False, quoting=...)`` (minimal or nonnumeric)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = csv.QUOTE_NONNUMERIC if quoting == "nonnumeric" else csv.QUOTE_MINIMAL
    if len(frame) < fast_min_rows:
        frame.to_csv(path, index=False, quoting=mode, lineterminator="\n")
        return
    nonnumeric = mode == csv.QUOTE_NONNUMERIC
    header = ",".join(_quote(str(c), always=nonnumeric) for c in frame.columns) + "\n"
    with open(path, "wb") as out:
        out.write(header.encode())
        for start in range(0, len(frame), _CHUNK_ROWS):
            chunk = frame.iloc[start : start + _CHUNK_ROWS]
            out.write(_encode_rows(chunk, nonnumeric=nonnumeric))


def write_jsonl(frame: pd.DataFrame, path: Path) -> None:
    """One JSON object per row, keys in column order (answers that are records, not a table)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(record, default=_json_scalar) + "\n" for record in frame.to_dict("records"))


def _json_scalar(value: object) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _encode_rows(frame: pd.DataFrame, *, nonnumeric: bool) -> bytes:
    n = len(frame)
    comma = np.full((n, 1), ord(","), dtype=np.uint8)
    pieces: list[np.ndarray] = []
    for i, name in enumerate(frame.columns):
        if i:
            pieces.append(comma)
        pieces.append(_encode_column(frame[name], nonnumeric=nonnumeric))
    pieces.append(np.full((n, 1), ord("\n"), dtype=np.uint8))
    matrix = np.concatenate(pieces, axis=1)
    return matrix[matrix != 0].tobytes()


def _as_matrix(values: np.ndarray) -> np.ndarray:
    """An array of ``S<w>`` bytes as an (n, w) uint8 matrix; empty strings become all-zero rows."""
    width = max(values.dtype.itemsize, 1)
    values = values.astype(f"S{width}")
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), width)


def _encode_column(series: pd.Series, *, nonnumeric: bool) -> np.ndarray:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return _lookup(series, nonnumeric=nonnumeric)
    if pd.api.types.is_integer_dtype(dtype):
        return _format_ints(series.to_numpy(dtype=np.int64))
    if pd.api.types.is_float_dtype(dtype):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        if len(uniques) <= _MAX_LOOKUP:
            return _table_lookup(codes, [repr(float(u)) for u in uniques])
        values = series.to_numpy(dtype=float)
        if np.isfinite(values).all() and np.abs(values).max() < 1e8:
            return _format_floats(values)
        return _table_lookup(np.arange(len(values)), ["" if np.isnan(v) else repr(float(v)) for v in values])
    return _lookup(series, nonnumeric=nonnumeric)


def _lookup(series: pd.Series, *, nonnumeric: bool) -> np.ndarray:
    """Strings (and anything else pandas writes with str()) as a byte matrix, quoted like the csv module."""
    missing = series.isna().to_numpy()
    values = series.to_numpy(dtype=object).copy()
    values[missing] = ""
    if not all(isinstance(v, str) for v in values[:1]):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return _table_lookup(codes, [_quote(str(u), always=False) for u in uniques])
    try:
        matrix = _as_matrix(values.astype("S"))
        present = ~missing
    except UnicodeEncodeError:  # non-ASCII text: encode each distinct value once
        codes, uniques = pd.factorize(values)
        table = _as_matrix(np.array([u.encode() for u in uniques]))
        matrix, present = table[codes], ~missing
    special = np.isin(matrix, np.frombuffer(b',"\n\r', dtype=np.uint8)).any(axis=1)
    quoted = special | (present & nonnumeric)
    if (special & (matrix == ord('"')).any(axis=1)).any():
        codes, uniques = pd.factorize(values)
        codes[missing] = -1
        return _table_lookup(codes, [_quote(u, always=nonnumeric) for u in uniques])
    if quoted.any():
        mark = np.where(quoted, ord('"'), 0).astype(np.uint8)[:, None]
        matrix = np.concatenate([mark, matrix, mark], axis=1)
    return matrix


def _table_lookup(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    table = np.array([t.encode() for t in texts] + [b""])  # code -1 (NaN) -> empty field
    return _as_matrix(table)[codes]


def _quote(text: str, *, always: bool) -> str:
    if always or any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _digits(magnitude: np.ndarray, width: int) -> np.ndarray:
    """Zero-padded-left ASCII digits of non-negative ints as an (n, width) matrix, padding = 0 bytes."""
    out = np.zeros((len(magnitude), width), dtype=np.uint8)
    rest = magnitude.copy()
    for col in range(width - 1, -1, -1):
        digit = rest % 10
        keep = (rest > 0) | (col == width - 1)
        out[:, col] = np.where(keep, digit + ord("0"), 0)
        rest //= 10
    return out


def _format_ints(values: np.ndarray) -> np.ndarray:
    magnitude = np.abs(values)
    width = len(str(int(magnitude.max()))) if len(values) else 1
    sign = np.where(values < 0, ord("-"), 0).astype(np.uint8)[:, None]
    return np.concatenate([sign, _digits(magnitude, width)], axis=1)


def _format_floats(values: np.ndarray) -> np.ndarray:
    """Fixed-point with trailing zeros dropped ('0.25', '3.0'); exact for values with <= 10 decimals."""
    scale = 10**_FLOAT_DECIMALS
    scaled = np.rint(np.abs(values) * scale).astype(np.int64)
    whole, frac = scaled // scale, scaled % scale
    width = len(str(int(whole.max()))) if len(values) else 1
    sign = np.where((values < 0) & (scaled > 0), ord("-"), 0).astype(np.uint8)[:, None]
    frac_digits = np.zeros((len(values), _FLOAT_DECIMALS), dtype=np.uint8)
    rest = frac.copy()
    for col in range(_FLOAT_DECIMALS - 1, -1, -1):
        frac_digits[:, col] = rest % 10 + ord("0")
        rest //= 10
    # Drop trailing zeros but keep at least one decimal, as repr does ("3.0").
    is_zero = frac_digits == ord("0")
    trailing = np.flip(np.cumprod(np.flip(is_zero, axis=1), axis=1), axis=1).astype(bool)
    trailing[:, 0] = False
    frac_digits[trailing] = 0
    point = np.full((len(values), 1), ord("."), dtype=np.uint8)
    return np.concatenate([sign, _digits(whole, width), point, frac_digits], axis=1)
