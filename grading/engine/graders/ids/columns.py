"""Id columns normalised to one of four kinds (int, float, str, object), with their bytes on demand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from grading.engine.graders.ids.text import _Bytes, pa

# ---------------------------------------------------------------------------------------------------
# Normalised id columns


@dataclass
class _Ids:
    kind: str  # "int", "float", "str" or "object" (mixed Python values)
    n: int
    num: np.ndarray | None = None  # int64 or float64 values
    arrow: Any | None = None  # pyarrow string array (may hold nulls); Any: pyarrow ships no type stubs
    obj: np.ndarray | None = None  # object values, missing as NaN
    missing: np.ndarray | None = None  # bool, computed lazily for text
    _bytes: _Bytes | None = field(default=None, repr=False)
    _bytes_tried: bool = field(default=False, repr=False)
    _joined: bytes | None = field(default=None, repr=False)
    _joined_tried: bool = field(default=False, repr=False)

    def joined(self) -> bytes | None:
        """Python-storage text joined into one byte string (None if not all values are str)."""
        if not self._joined_tried:
            self._joined_tried = True
            if self.kind == "str" and self.arrow is None and self.obj is not None:
                self._joined = _Bytes.join(self.obj)
        return self._joined

    def text_bytes(self) -> _Bytes | None:
        """The text as bytes, or None when that is not possible (missing values, non-str objects)."""
        if not self._bytes_tried:
            self._bytes_tried = True
            if self.kind == "str":
                if self.arrow is not None:
                    self._bytes = None if self.arrow.null_count else _Bytes.from_arrow(self.arrow)
                elif (joined := self.joined()) is not None:
                    self._bytes = _Bytes.from_joined(joined, self.n)
        return self._bytes

    def missing_mask(self) -> np.ndarray:
        if self.missing is None:
            if self.arrow is not None:
                self.missing = (
                    np.asarray(self.arrow.is_null().to_numpy(zero_copy_only=False), dtype=bool)
                    if self.arrow.null_count
                    else np.zeros(self.n, dtype=bool)
                )
            elif self.text_bytes() is not None:
                self.missing = np.zeros(self.n, dtype=bool)
            else:
                self.missing = np.asarray(pd.isna(self.obj), dtype=bool)
        return self.missing

    def objects(self) -> np.ndarray:
        if self.obj is None:
            if self.num is not None:
                self.obj = self.num.astype(object)
            else:
                assert self.arrow is not None  # every column holds num, arrow or obj
                self.obj = np.asarray(self.arrow.to_numpy(zero_copy_only=False), dtype=object)
                if self.arrow.null_count:
                    self.obj[self.missing_mask()] = np.nan
        return self.obj

    def values_at(self, rows: np.ndarray) -> list:
        """Python values of a few rows, without converting the whole column."""
        if self.num is not None:
            return self.num[rows].tolist()
        if self.arrow is not None:
            return self.arrow.take(pa.array(rows)).to_pylist()
        assert self.obj is not None  # every column holds num, arrow or obj
        return self.obj[rows].tolist()


def _arrow_array(series: pd.Series) -> pa.Array | pa.ChunkedArray | None:
    if pa is None:
        return None
    array = getattr(series.array, "_pa_array", None)
    if array is None:
        return None
    if isinstance(array, pa.ChunkedArray) and array.num_chunks == 1:
        array = array.chunk(0)
    if array.type not in (pa.string(), pa.large_string()):
        try:
            array = array.cast(pa.large_string())
        except Exception:  # noqa: BLE001
            return None
    return array


def _ids_of(series: pd.Series) -> _Ids:
    n = len(series)
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        if series.hasnans:
            return _float_ids(series.to_numpy(dtype=np.float64, na_value=np.nan))
        return _Ids("int", n, num=series.to_numpy(dtype=np.int64), missing=np.zeros(n, dtype=bool))
    if pd.api.types.is_float_dtype(dtype):
        return _float_ids(series.to_numpy(dtype=np.float64, na_value=np.nan))
    arrow = _arrow_array(series)
    if arrow is not None:
        return _Ids("str", n, arrow=arrow)
    if isinstance(dtype, pd.StringDtype):
        backing = getattr(series.array, "_ndarray", None)  # Python-storage strings: no conversion pass
        if isinstance(backing, np.ndarray) and backing.dtype == object:
            return _Ids("str", n, obj=backing)
        return _Ids("str", n, obj=series.to_numpy(dtype=object, na_value=np.nan))
    obj = series.to_numpy(dtype=object) if dtype == np.dtype(object) else series.to_numpy(dtype=object, na_value=np.nan)
    inferred = pd.api.types.infer_dtype(obj, skipna=True)
    return _Ids("str" if inferred in ("string", "empty") else "object", n, obj=obj)


def _float_ids(values: np.ndarray) -> _Ids:
    n = len(values)
    missing = np.isnan(values)
    if (
        not missing.any()
        and np.isfinite(values).all()
        and (np.abs(values) < 2.0**63).all()
        and (np.floor(values) == values).all()
    ):
        return _Ids("int", n, num=values.astype(np.int64), missing=missing)
    return _Ids("float", n, num=values, missing=missing)


def _is_numeric(ids: _Ids) -> bool:
    return ids.kind in ("int", "float")


def _comparable(a: _Ids, b: _Ids) -> bool:
    return _is_numeric(a) == _is_numeric(b)


def _prepare_pair(s: _Ids, a: _Ids) -> tuple[_Ids, _Ids]:
    """Bring two comparable id columns to the same representation."""
    if _is_numeric(s) and _is_numeric(a) and s.kind != a.kind:
        assert s.num is not None and a.num is not None  # numeric columns always hold num
        if s.kind == "int":
            s = _Ids("float", s.n, num=s.num.astype(np.float64), missing=s.missing)
        else:
            a = _Ids("float", a.n, num=a.num.astype(np.float64), missing=a.missing)
    elif not _is_numeric(s) and (s.text_bytes() is None or a.text_bytes() is None):
        s = _Ids("object", s.n, obj=s.objects(), missing=s.missing_mask())
        a = _Ids("object", a.n, obj=a.objects(), missing=a.missing_mask())
    return s, a


class AnswersHaveDuplicateIds(Exception):
    """The answers repeat an id, so only the reference's exact sort can say how rows pair up."""


@dataclass(frozen=True)
class Pairing:
    """Which submission row goes with which answers row: pair k is (sub_rows[k], ans_rows[k]).

    ``None`` stands for "all rows, in order".
    """

    sub_rows: np.ndarray | None
    ans_rows: np.ndarray | None

    @staticmethod
    def take(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        return values if rows is None else values[rows]


IDENTITY = Pairing(None, None)
