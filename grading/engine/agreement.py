"""How far a submission agrees with the private answers: what the answer_copy check judges (framework-free).

A copy of the answers is easy to disguise against a byte or score comparison, so the measure is per row
and per kind of target, over the columns the submission and the answers share (matched by name, so
reordered columns change nothing), with rows matched by id (reordered rows change nothing):

* **numbers** (regression targets, probabilities, one-hot and 0/1 columns): a cell agrees when it is within
  ``REL_TOLERANCE`` of the answer's value or ``SCALE_TOLERANCE`` of the answers column's standard deviation,
  whichever is wider, or within half the rounding step of a column rounded to at most ``MAX_DECIMALS``
  decimals; rounding and a little noise stay inside, an honest model's errors do not;
* **labels and text** (class names, RLE masks, prediction strings): a cell agrees when it is the same string.

A row agrees when every compared cell does; an answers row the submission lacks disagrees. Agreement by
chance (many equal labels, a target that is mostly zero) is measured the same way against the answers
shifted by half their length, and the share is corrected for it like Cohen's kappa:
``(agree - chance) / (1 - chance)``. ``agreement_low`` is the one-sided 99.9 % Wilson lower bound of that
share, so a few hundred rows are enough to be sure and a handful never are.

Beside agreement, ``statistics`` holds what an honest model cannot reach, per kind of number column:

* **continuous** answers (a column with a fraction among its answers): cells, cells equal to the answer to the
  bit (``exact``), and equal to another row's answer (``exact_by_chance``, the shift above). An honest
  regression model is close to the answers, essentially never equal to them.
* **classes** (a column whose answers are 0 and 1, -1 unscored as Jigsaw's; one-hot columns cell by cell): per
  class of the answer, cells and cells the file writes as that very 0 or 1 (and the same against the shifted
  answers: chance), and the cells of the other class written as this one's 0 or 1 (``exact_wrong``); cells
  whose most probable side is wrong (``wrong``: 1 written at or below 0.5, 0 at or above), how many errors the
  file's own probabilities expect (``expected_wrong``, the sum of ``min(p, 1 - p)``), cells holding a fraction
  (``fractional``: the file writes probabilities) and, per column, the ROC AUC of the file against the answers
  with the counts of both classes.

Only counts and shares come out: never an id, a value or anything else read from the answers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

REL_TOLERANCE = 0.02
SCALE_TOLERANCE = 0.02
MAX_DECIMALS = 4  # a column rounded to at most this many decimals is compared within half its step
WILSON_Z = 3.09  # one-sided 99.9 %
MEASURE_VERSION = 2


def _norm(name: object) -> str:
    return str(name).strip().lower()


def not_measured(reason: str) -> dict[str, Any]:
    return {"measured": False, "reason": reason, "version": MEASURE_VERSION}


def _text(column: pd.Series) -> pa.Array:
    """Strings as compared (Arrow, vectorised): stripped, a missing cell as the empty string."""
    try:
        values = pa.array(column, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed Python objects
        values = pa.array(column.astype(object).where(column.notna(), "").astype(str).tolist(), pa.string())
    if isinstance(values, pa.ChunkedArray):  # pandas' Arrow strings come in many chunks
        values = values.combine_chunks()
    if not pa.types.is_large_string(values.type):
        values = pc.cast(values, pa.large_string())
    return pc.utf8_trim_whitespace(pc.fill_null(values, ""))


def _keys(column: pd.Series) -> pa.Array:
    if pd.api.types.is_float_dtype(column):
        values = column.to_numpy(dtype=float)
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            column = pd.Series(values.astype(np.int64))  # "12.0" in one file and "12" in the other are one id
    return _text(column)


def _same(left: pa.Array, right: pa.Array) -> np.ndarray:
    return pc.equal(left, right).to_numpy(zero_copy_only=False)


def rounding_step(values: np.ndarray, *, sample: int = 10_000) -> float:
    """Half the step a column was rounded to (0.005 for two decimals), or 0 when it holds more than
    MAX_DECIMALS decimals: a copy rounded to a few decimals is within it of the answers."""
    finite = _first_finite(values, sample)
    if not len(finite):
        return 0.0
    for decimals in range(MAX_DECIMALS + 1):
        scaled = finite * 10.0**decimals
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return 0.5 * 10.0**-decimals * (1 + 1e-9)
    return 0.0


def _first_finite(values: np.ndarray, count: int) -> np.ndarray:
    """The column's first `count` finite values, read a few times `count` rows at a time, not the whole column."""
    parts, found, step = [], 0, 4 * max(count, 1)
    for lo in range(0, len(values), step):
        part = values[lo : lo + step]
        parts.append(part[np.isfinite(part)])
        found += len(parts[-1])
        if found >= count:
            break
    return np.concatenate(parts)[:count] if parts else values[:0]


def _tolerance(truth: np.ndarray, scale: float, step: float) -> np.ndarray:
    """Each answer's tolerance: REL_TOLERANCE of it or SCALE_TOLERANCE of the column's scale, at least `step`.

    In one array, and the two floors as one (the larger of two numbers is exact, so max(max(x, a), b) is
    max(x, max(a, b)), a NaN answer staying NaN): a column of millions of rows costs three passes, not five."""
    out = np.abs(truth)
    with np.errstate(invalid="ignore"):
        np.multiply(out, REL_TOLERANCE, out=out)
        return np.maximum(out, max(SCALE_TOLERANCE * scale, step), out=out)


def _scale(truth: np.ndarray) -> float:
    """The standard deviation of a column's finite answers (0 without any); no copy when all are finite."""
    finite = np.isfinite(truth)
    if finite.all():
        return float(np.std(truth)) if len(truth) else 0.0
    kept = truth[finite]
    return float(np.std(kept)) if len(kept) else 0.0


def _close_into(
    out: np.ndarray,
    predicted: np.ndarray,
    truth: np.ndarray,
    tolerance: np.ndarray,
    predicted_missing: np.ndarray,
    truth_missing: np.ndarray,
) -> None:
    """Into out: cells within their answer's tolerance; a cell missing on both sides agrees (in place: these
    columns run to millions of rows, and each temporary array costs a pass and its page faults)."""
    with np.errstate(invalid="ignore"):
        distance = np.subtract(predicted, truth)
        np.abs(distance, out=distance)
        np.less_equal(distance, tolerance, out=out)
    out |= predicted_missing & truth_missing


def _is_number_column(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def answer_scales(answers: Any) -> dict[Any, float]:
    """The scale (`_scale`) of each number column of the answers, which the measure otherwise works out for every
    submission. A grading process that keeps a competition's answers between runs works these out once, as it
    loads them: on 13 million rows each costs a pass and a temporary copy of the column."""
    if not isinstance(answers, pd.DataFrame) or not answers.columns.is_unique:
        return {}
    scales = {}
    for name in answers.columns:
        if _is_number_column(answers[name]):
            try:
                scales[name] = _scale(answers[name].to_numpy(dtype=float))
            except (TypeError, ValueError):  # the measure tries again, and says why it cannot, never failing a grade
                continue
    return scales


def _numbers_agree(
    predicted: np.ndarray,
    truth: np.ndarray,
    *,
    scale: float,
    shift: int,
    agree: np.ndarray,
    exact: np.ndarray,
    by_chance: np.ndarray,
    chunk: int = 1 << 20,
) -> None:
    """One number column's cells into the row marks (in place): `agree` keeps the rows whose cell is within its
    answer's tolerance, `exact` those equal to it, `by_chance` those within the tolerance of the answer `shift`
    rows back (row i against answer (i - shift) mod n). Row by row, `chunk` rows at a time: every temporary
    array is a chunk's, not the column's (13 million icecube rows would need about 400 MB of them at once)."""
    rows = len(truth)
    step = rounding_step(predicted)
    for lo in range(0, rows, chunk):
        hi = min(rows, lo + chunk)
        theirs = predicted[lo:hi]
        theirs_missing = np.isnan(theirs)
        _within_into(agree[lo:hi], theirs, theirs_missing, truth[lo:hi], scale, step)
        same = theirs == truth[lo:hi]
        same |= theirs_missing & np.isnan(truth[lo:hi])
        exact[lo:hi] &= same
        # The answers these rows meet for chance: rows - start of them from `start` on, then from the top.
        start = (lo - shift) % rows
        first = min(hi - lo, rows - start)
        _within_into(
            by_chance[lo : lo + first],
            theirs[:first],
            theirs_missing[:first],
            truth[start : start + first],
            scale,
            step,
        )
        if first < hi - lo:
            rest = hi - lo - first
            _within_into(by_chance[lo + first : hi], theirs[first:], theirs_missing[first:], truth[:rest], scale, step)


def _within_into(
    marks: np.ndarray,
    predicted: np.ndarray,
    predicted_missing: np.ndarray,
    truth: np.ndarray,
    scale: float,
    step: float,
) -> None:
    """marks &= each cell within its answer's tolerance (a cell missing on both sides agrees)."""
    close = np.empty(len(truth), dtype=bool)
    _close_into(close, predicted, truth, _tolerance(truth, scale, step), predicted_missing, np.isnan(truth))
    marks &= close


def _same_ids(theirs: pd.Series, answers: pd.Series) -> bool:
    """Whether two id columns hold the very same values in the same order, told without building their keys.

    Equal cells have equal keys, so True means the row-by-row match; False only sends the caller to the keys
    (a missing id, "12.0" against "12", or a padded id is decided there, as before). Only columns of integers
    or of Python strings alone qualify: equal floats can still differ as keys (-0.0 and 0.0 in a column of
    fractions), and so can equal objects of different types (1 and 1.0)."""
    if len(theirs) != len(answers) or theirs.dtype != answers.dtype:
        return False
    if theirs.dtype.kind in "iu":
        return bool(np.array_equal(theirs.to_numpy(), answers.to_numpy()))
    if isinstance(theirs.dtype, pd.StringDtype):
        # The Arrow strings _text starts from: equal arrays (nulls in the same places) give equal keys.
        try:
            left_arrow, right_arrow = pa.array(theirs, from_pandas=True), pa.array(answers, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return False
        return bool(_chunked(left_arrow).equals(_chunked(right_arrow)))  # by content, whatever the chunks
    if theirs.dtype != object:
        return False
    left, right = theirs.to_numpy(), answers.to_numpy()
    if pd.api.types.infer_dtype(left, skipna=False) != "string":
        return False
    if pd.api.types.infer_dtype(right, skipna=False) != "string":
        return False
    return bool(np.array_equal(left, right))


def _chunked(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])


def measure(
    submission: pd.DataFrame, answers: Any, *, id_column: str = "", scales: Mapping[Any, float] | None = None
) -> dict[str, Any]:
    """The agreement of a parsed submission with the parsed answers (see the module's docstring). ``scales``:
    :func:`answer_scales` of these answers, when the caller keeps them (else each is worked out here)."""
    if not isinstance(answers, pd.DataFrame):
        return not_measured("the answers are not a table")
    by_name = {_norm(c): c for c in reversed(list(submission.columns))}  # the first of duplicated names wins
    shared = [c for c in answers.columns if _norm(c) in by_name]
    # The registry's id column may be described ("id ('{sentence_id}_{token_id}')"): its first word, else the
    # answers' first column.
    candidates = [id_column, *re.findall(r"^[^\s(]+", id_column or ""), *answers.columns[:1]]
    in_answers = {_norm(c): c for c in answers.columns}
    wanted = next((_norm(c) for c in candidates if _norm(c) in in_answers and _norm(c) in by_name), None)
    if wanted is None:
        return not_measured("the submission and the answers share no id column")
    id_answers = in_answers[wanted]
    values = [c for c in shared if c != id_answers]
    if not values:
        return not_measured("the submission and the answers share no column besides the id")
    # One hash pass over both id columns: each id's code, then the submission row of each answers row (the
    # first of repeated ids), -1 where it has none.
    rows, theirs_rows = len(answers), len(submission)
    in_order = _same_ids(submission[by_name[wanted]], answers[id_answers])
    if not in_order:
        answer_keys, submission_keys = _keys(answers[id_answers]), _keys(submission[by_name[wanted]])
        in_order = rows == theirs_rows and pc.all(pc.equal(answer_keys, submission_keys)).as_py() is not False
    if in_order:
        position = None  # the same ids in the same order: row by row, no hashing
    else:
        codes = pc.dictionary_encode(pa.concat_arrays([answer_keys, submission_keys])).indices
        codes = codes.to_numpy(zero_copy_only=False)
        answer_codes, submission_codes = codes[:rows], codes[rows:]
        if rows and np.bincount(answer_codes).max() > 1:
            return not_measured("ids repeat in the answers, so rows cannot be matched by id")
        row_of = np.full(int(codes.max(initial=-1)) + 1, -1, dtype=np.int64)
        row_of[submission_codes[::-1]] = np.arange(theirs_rows - 1, -1, -1)  # the first occurrence, written last
        position = row_of[answer_codes]
    matched = np.ones(rows, dtype=bool) if position is None else position >= 0
    take = None if position is None else np.where(matched, position, 0)  # None: each row is its own
    shift = rows // 2 if rows > 1 else 0  # another row's answer, for chance: row i against answer i - shift

    agree = matched.copy()
    exact = matched.copy()
    by_chance = matched.copy()
    kinds: dict[str, int] = {"numbers": 0, "text": 0}
    statistics = _empty_statistics()
    for column in values if matched.any() else []:
        theirs = submission[by_name[_norm(column)]]
        truth = answers[column]
        if _is_number_column(truth):
            # A float64 column is its own numbers (to_numeric would copy it to the same values).
            plain = isinstance(theirs, pd.Series) and theirs.dtype == np.float64
            predicted = theirs.to_numpy() if plain else pd.to_numeric(theirs, errors="coerce").to_numpy(dtype=float)
            if take is not None:
                predicted = predicted[take]
            truth_values = truth.to_numpy(dtype=float)
            known = scales.get(column) if scales is not None else None
            _numbers_agree(
                predicted,
                truth_values,
                scale=_scale(truth_values) if known is None else known,
                shift=shift,
                agree=agree,
                exact=exact,
                by_chance=by_chance,
            )
            _column_statistics(statistics, predicted, truth_values, matched=matched, shift=shift)
            kinds["numbers"] += 1
        else:
            predicted_text = _text(theirs) if take is None else pc.take(_text(theirs), pa.array(take))
            truth_text = _text(truth)
            same = _same(predicted_text, truth_text)
            roll = np.roll(np.arange(rows), shift)
            agree &= same
            exact &= same
            by_chance &= _same(predicted_text, pc.take(truth_text, pa.array(roll)))
            kinds["text"] += 1

    n_agree, n_exact, n_chance = int(agree.sum()), int(exact.sum()), int(by_chance.sum())
    share = n_agree / rows if rows else 0.0
    chance_share = n_chance / rows if rows else 0.0
    return {
        "measured": True,
        "version": MEASURE_VERSION,
        "rows": rows,
        "rows_matched": int(matched.sum()),
        "rows_agree": n_agree,
        "rows_exact": n_exact,
        "share_agree": round(share, 4),
        "chance": round(chance_share, 4),
        "agreement": round(_corrected(share, chance_share), 4),
        "agreement_low": round(_corrected(wilson_low(n_agree, rows), chance_share), 4),
        "columns": len(values),
        "column_kinds": {kind: n for kind, n in kinds.items() if n},
        "tolerance": {"relative": REL_TOLERANCE, "of_column_std": SCALE_TOLERANCE},
        "statistics": _finished(statistics),
    }


def _corrected(share: float, chance: float) -> float:
    if chance >= 1.0:
        return 0.0  # every row agrees with another row's answer too: agreement says nothing
    return max(0.0, (share - chance) / (1.0 - chance))


def wilson_low(successes: int, n: int, *, z: float = WILSON_Z) -> float:
    """The Wilson score interval's lower bound for successes out of n (0 for no trials)."""
    if n <= 0:
        return 0.0
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


# --- statistics an honest model cannot reach (see the module's docstring) -------------------------------


def _empty_statistics() -> dict[str, Any]:
    return {
        "continuous": {"cells": 0, "exact": 0, "exact_by_chance": 0},
        "classes": {
            "cells": [0, 0],  # answers 0, answers 1
            "exact": [0, 0],
            "exact_by_chance": [0, 0],
            "exact_wrong": [0, 0],  # cells of the other class written as this class's very 0 or 1
            "wrong": 0,
            "expected_wrong": 0.0,
            "fractional": 0,
            "auc": [],  # per column: [auc, positives, negatives]
        },
    }


def _finished(statistics: dict[str, Any]) -> dict[str, Any]:
    classes = statistics["classes"]
    classes["expected_wrong"] = round(float(classes["expected_wrong"]), 4)
    return statistics


def column_kind(truth: np.ndarray) -> str:
    """ "continuous" (a fraction among the finite answers), "classes" (finite answers 0 and 1, -1 for an
    unscored row, both classes present) or "other" (integers: labels, counts)."""
    finite = truth[np.isfinite(truth)]
    if not len(finite):
        return "other"
    if np.any(finite != np.round(finite)):
        return "continuous"
    scored = finite[finite >= 0]
    if (
        len(scored)
        and np.all((scored == 0) | (scored == 1))
        and np.all(finite >= -1)
        and 0 < scored.sum() < len(scored)
    ):
        return "classes"
    return "other"


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """The Mann-Whitney ROC AUC of ``scores`` for the 0/1 labels ``positive`` (ties count a half)."""
    ranks = pd.Series(scores).rank(method="average").to_numpy()
    n1 = int(positive.sum())
    n0 = len(positive) - n1
    if not n1 or not n0:
        return float("nan")
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _column_statistics(
    statistics: dict[str, Any], predicted: np.ndarray, truth: np.ndarray, *, matched: np.ndarray, shift: int
) -> None:
    """Add one number column's counts to ``statistics`` (rows without a match by id count as not exact)."""
    kind = column_kind(truth)
    if kind == "other":
        return
    shifted = np.roll(truth, shift)
    with np.errstate(invalid="ignore"):
        same = matched & (predicted == truth)
        same_by_chance = matched & (predicted == shifted)
    if kind == "continuous":
        known = np.isfinite(truth)
        block = statistics["continuous"]
        block["cells"] += int(known.sum())
        block["exact"] += int((same & known).sum())
        block["exact_by_chance"] += int((same_by_chance & np.isfinite(shifted)).sum())
        return
    block = statistics["classes"]
    scored = truth >= 0
    for label in (0, 1):
        cells = truth == label
        block["cells"][label] += int(cells.sum())
        block["exact"][label] += int((same & cells).sum())
        block["exact_by_chance"][label] += int((same_by_chance & (shifted == label)).sum())
        with np.errstate(invalid="ignore"):
            block["exact_wrong"][label] += int((matched & (truth == 1 - label) & (predicted == label)).sum())
    p = np.where(matched, predicted, np.nan)[scored]
    y = truth[scored] == 1
    usable = np.isfinite(p)
    with np.errstate(invalid="ignore"):
        wrong = ~usable | np.where(y, p <= 0.5, p >= 0.5)
        clipped = np.clip(np.where(usable, p, 0.5), 0.0, 1.0)
        block["fractional"] += int((usable & (clipped > 0) & (clipped < 1)).sum())
    block["wrong"] += int(wrong.sum())
    block["expected_wrong"] += float(np.minimum(clipped, 1.0 - clipped).sum())
    if usable.all() and 0 < y.sum() < len(y):
        block["auc"].append([round(roc_auc(p, y), 6), int(y.sum()), int((~y).sum())])
