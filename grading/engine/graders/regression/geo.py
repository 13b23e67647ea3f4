"""Errors between directions and positions on a sphere.

* ``mean_angular_error`` (icecube-neutrinos-in-deep-ice): the mean angle, in radians, between the true
  and predicted directions given as (azimuth, zenith), computed like Kaggle's ``angular_dist_score``
  (unit vectors, dot product clipped to [-1, 1], arccos). The columns must be exactly the id and the two
  angles, the row count must equal the answers', the ids must be the answers' ids, and every angle must be
  a finite number. Angles are not range-checked: any finite angle names a direction.
* ``trip_haversine_p50_p95`` (smartphone-decimeter-2022): per trip, the mean of the 50th and 95th
  percentiles (NumPy's linear interpolation) of the haversine distances in metres, averaged over trips.
  Rows are matched within a trip by file position, not by time; each trip must have exactly the answers'
  number of rows. Coordinates must be numeric columns; an empty or infinite coordinate makes the score NaN,
  as in the reference (MLE-bench counts a NaN score as valid but never above a threshold).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    grader_function,
    numeric_values,
    plural,
    require_answers_columns,
    require_columns,
    require_exact_columns,
    require_finite,
    require_row_count,
    show,
    submission_ids,
)
from grading.engine.graders.ids import pair_by_sorted_ids
from grading.engine.registry import register

# Rows per vectorised pass. The score adds up each pass's np.sum, so this also fixes the float sum's grouping:
# changing it moves the unrounded score in its last bits.
_CHUNK = 1 << 20


def angular_errors(az_true: np.ndarray, zen_true: np.ndarray, az_pred: np.ndarray, zen_pred: np.ndarray) -> np.ndarray:
    """Angles in radians between two directions per row, as Kaggle's angular_dist_score computes them."""
    return angular_errors_into(az_true, zen_true, az_pred, zen_pred, buffers=_Buffers(len(az_true)))


class _Buffers:
    """Three float64 work arrays reused by every pass, so the grader allocates (and the system zeroes) them once."""

    def __init__(self, rows: int) -> None:
        self.a, self.b, self.c = (np.empty(rows, dtype=np.float64) for _ in range(3))

    def first(self, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.a[:rows], self.b[:rows], self.c[:rows]


def angular_errors_into(
    az_true: np.ndarray, zen_true: np.ndarray, az_pred: np.ndarray, zen_pred: np.ndarray, *, buffers: _Buffers
) -> np.ndarray:
    """:func:`angular_errors` in the buffers' first rows (returned): the reference's products and sums.

    The reference evaluates ``sz1 * sz2 * (ca1 * ca2 + sa1 * sa2) + (cz1 * cz2)`` with one new array per
    operation; here each product and sum is the same IEEE operation on the same operands (a product or
    sum of two floats does not depend on their order), written into one of three arrays, so every angle
    is bit for bit the reference's at a fraction of the memory traffic.
    """
    a, b, c = buffers.first(len(az_true))
    np.sin(az_true, out=a)
    np.sin(az_pred, out=b)
    np.multiply(a, b, out=a)  # sa1 * sa2
    np.cos(az_true, out=b)
    np.cos(az_pred, out=c)
    np.multiply(b, c, out=b)  # ca1 * ca2
    np.add(b, a, out=b)  # ca1 * ca2 + sa1 * sa2
    np.sin(zen_true, out=a)
    np.sin(zen_pred, out=c)
    np.multiply(a, c, out=a)  # sz1 * sz2
    np.multiply(a, b, out=a)  # sz1 * sz2 * (...)
    np.cos(zen_true, out=b)
    np.cos(zen_pred, out=c)
    np.multiply(b, c, out=b)  # cz1 * cz2
    np.add(a, b, out=a)
    np.clip(a, -1, 1, out=a)
    np.arccos(a, out=a)
    return np.abs(a, out=a)


@register("mean_angular_error")
@grader_function
def grade_mean_angular_error(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    azimuth_column: str = "azimuth",
    zenith_column: str = "zenith",
) -> float:
    columns = [id_column, azimuth_column, zenith_column]
    require_answers_columns(answers, columns)
    require_exact_columns(submission, columns)
    require_row_count(submission, len(answers))
    pairing = pair_by_sorted_ids(submission, answers, id_column)
    ids = submission_ids(submission, id_column)
    predicted = []
    for column in (azimuth_column, zenith_column):
        values = numeric_values(submission[column], column, ids)
        require_finite(values, column, ids)
        predicted.append(values)
    az_true = answers[azimuth_column].to_numpy(dtype=np.float64)
    zen_true = answers[zenith_column].to_numpy(dtype=np.float64)
    n = len(answers)
    buffers = _Buffers(min(n, _CHUNK))
    # Where the files' row orders differ, each pass gathers its rows into four more reused arrays.
    gathered = [np.empty(min(n, _CHUNK), dtype=np.float64) for _ in range(4)]
    total = 0.0
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        angles = [
            _rows(values, pairing_rows, lo, hi, out)
            for values, pairing_rows, out in zip(
                (az_true, zen_true, *predicted),
                (pairing.ans_rows, pairing.ans_rows, pairing.sub_rows, pairing.sub_rows),
                gathered,
                strict=True,
            )
        ]
        total += float(np.sum(angular_errors_into(*angles, buffers=buffers)))
    return total / n


def _rows(values: np.ndarray, rows: np.ndarray | None, lo: int, hi: int, out: np.ndarray) -> np.ndarray:
    """Pairs lo..hi's values: a view when the pairing keeps file order, else gathered into out."""
    if rows is None:
        return values[lo:hi]
    return np.take(values, rows[lo:hi], out=out[: hi - lo])


# ---------------------------------------------------------------------------------------------------
# smartphone-decimeter-2022


def haversine_m(
    lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray, *, radius_m: float
) -> np.ndarray:
    lat1, lon1, lat2, lon2 = map(np.radians, (lat1, lon1, lat2, lon2))
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * radius_m * np.arcsin(a**0.5)


def grouped_quantiles(values: np.ndarray, codes: np.ndarray, groups: int, q: float) -> np.ndarray:
    """``np.quantile(values[codes == g], q)`` (linear method) for every group g, in one pass.

    A group holding a NaN gets NaN, as NumPy gives; empty groups get NaN.
    """
    order = np.lexsort((values, codes))  # by group, then by value (NaN last)
    ordered = values[order]
    counts = np.bincount(codes, minlength=groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    present = counts > 0
    virtual = (counts - 1) * np.float64(q)
    below = np.floor(virtual)
    gamma = virtual - below
    lo = starts + below.astype(np.int64)
    hi = np.minimum(lo + 1, starts + counts - 1)
    a, b = ordered[np.where(present, lo, 0)], ordered[np.where(present, hi, 0)]
    diff = b - a
    result = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)  # NumPy's _lerp
    has_nan = np.bincount(codes, weights=np.isnan(values), minlength=groups) > 0
    return np.where(present & ~has_nan, result, np.nan)


@register("trip_haversine_p50_p95")
@grader_function
def grade_trip_haversine(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    trip_column: str,
    time_column: str,
    latitude_column: str,
    longitude_column: str,
    radius_m: float = 6_371_000.0,
) -> float:
    columns = [trip_column, time_column, latitude_column, longitude_column]
    require_answers_columns(answers, columns)
    require_columns(submission, columns)
    if len(submission) != len(answers):
        raise InvalidSubmission(
            f"expected {plural(len(answers), 'row')} (one per test fix), got {len(submission)}; "
            "submit exactly the rows of the sample submission, trip by trip"
        )
    ans_codes, trips = pd.factorize(answers[trip_column], sort=True)
    sub_codes = _trip_codes(submission[trip_column], pd.Index(trips))
    _require_trip_counts(submission[trip_column], sub_codes, ans_codes, trips, trip_column)
    sub_order = np.argsort(sub_codes, kind="stable")  # within a trip: file order
    ans_order = np.argsort(ans_codes, kind="stable")
    ids = submission_ids(submission, trip_column)
    lat = numeric_values(submission[latitude_column], latitude_column, ids)[sub_order]
    lon = numeric_values(submission[longitude_column], longitude_column, ids)[sub_order]
    true_lat = answers[latitude_column].to_numpy(dtype=np.float64)[ans_order]
    true_lon = answers[longitude_column].to_numpy(dtype=np.float64)[ans_order]
    codes = ans_codes[ans_order]
    with np.errstate(invalid="ignore", over="ignore"):
        distances = haversine_m(true_lat, true_lon, lat, lon, radius_m=radius_m)
        p50 = grouped_quantiles(distances, codes, len(trips), 0.5)
        p95 = grouped_quantiles(distances, codes, len(trips), 0.95)
        return float(np.mean((p50 + p95) / 2))


def _trip_codes(sub_trips: pd.Series, trips: pd.Index) -> np.ndarray:
    try:
        return trips.get_indexer(sub_trips)
    except TypeError:
        return np.full(len(sub_trips), -1, dtype=np.intp)


def _require_trip_counts(
    sub_trips: pd.Series, sub_codes: np.ndarray, ans_codes: np.ndarray, trips: pd.Index, trip_column: str
) -> None:
    expected = np.bincount(ans_codes, minlength=len(trips))
    got = np.bincount(sub_codes[sub_codes >= 0], minlength=len(trips))
    unknown = np.flatnonzero(sub_codes < 0)
    wrong = np.flatnonzero(expected != got)
    if not len(unknown) and not len(wrong):
        return
    parts = []
    if len(wrong):
        shown = "; ".join(
            f"{show(trips[int(t)])} has {int(got[t])}, expected {int(expected[t])}" for t in wrong[:MAX_EXAMPLES]
        )
        parts.append(
            f"{plural(len(wrong), 'trip')} {'has' if len(wrong) == 1 else 'have'} the wrong row count ({shown})"
        )
    if len(unknown):
        shown = ", ".join(f"{show(sub_trips.iloc[int(r)])} in row {int(r) + 1}" for r in unknown[:MAX_EXAMPLES])
        parts.append(
            f"{plural(len(unknown), 'row')} {'names' if len(unknown) == 1 else 'name'} a trip not in the test set "
            f"(e.g. {shown})"
        )
    raise InvalidSubmission(
        f"rows are matched to the answers trip by trip, by position, so each {trip_column} needs exactly "
        "its rows of the sample submission: " + "; ".join(parts)
    )
