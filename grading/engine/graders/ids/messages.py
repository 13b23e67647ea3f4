"""Why a submission's ids are not the answers' ids, in words a team can act on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from grading.engine.graders._validation import MAX_EXAMPLES, plural, show, show_many
from grading.engine.graders.ids.columns import _comparable, _ids_of, _is_numeric, _prepare_pair
from grading.engine.graders.ids.keys import _hash

# ---------------------------------------------------------------------------------------------------
# Messages


def describe_id_mismatch(sub_ids: pd.Series, ans_ids: pd.Series, id_column: str) -> str:
    """Why the submission's ids are not the answers' ids: counts and examples."""
    s, a = _ids_of(sub_ids), _ids_of(ans_ids)
    head = f"the ids in column {show(id_column)} do not match the test set"
    hint = "Submit exactly one row for each id of the sample submission, with the ids written exactly as there"
    if s.n and a.n and not _comparable(s, a):
        s_missing = s.missing_mask()
        example_s = show(s.values_at(np.flatnonzero(~s_missing)[:1])[0]) if (~s_missing).any() else "empty cells"
        example_a = show(a.values_at(np.arange(1))[0])
        what_s = "numbers" if _is_numeric(s) else "text"
        what_a = "numbers" if _is_numeric(a) else "text"
        return (
            f"{head}: the submission's ids are {what_s} (e.g. {example_s}) but the test ids are "
            f"{what_a} (e.g. {example_a}). {hint}"
        )
    parts = []
    if s.n != a.n:
        parts.append(f"the submission has {plural(s.n, 'row')} but the test set has {plural(a.n, 'id')}")
    s_missing = s.missing_mask()
    if s_missing.any():
        empty = np.flatnonzero(s_missing)
        rows = ", ".join(f"row {int(p) + 1}" for p in empty[:MAX_EXAMPLES])
        parts.append(f"{plural(len(empty), 'row')} {'has' if len(empty) == 1 else 'have'} no id ({rows})")
    s_orig, a_orig = s, a
    s, a = _prepare_pair(s, a)
    s_hash, a_hash = _hash(s), _hash(a)
    present = ~s.missing_mask()
    a_keys, a_counts = np.unique(a_hash, return_counts=True)
    s_keys, s_counts = np.unique(s_hash[present], return_counts=True)
    # how often each answers id occurs in the submission, and each submission id in the answers
    where = np.searchsorted(s_keys, a_hash).clip(0, max(len(s_keys) - 1, 0))
    found_in_sub = np.zeros(len(a_hash), dtype=np.int64)
    if len(s_keys):
        hit = s_keys[where] == a_hash
        found_in_sub[hit] = s_counts[where[hit]]
    expected_in_ans = a_counts[np.searchsorted(a_keys, a_hash)]
    absent = np.flatnonzero(found_in_sub < expected_in_ans)
    where = np.searchsorted(a_keys, s_hash).clip(0, max(len(a_keys) - 1, 0))
    in_answers = (a_keys[where] == s_hash) & present if len(a_keys) else np.zeros(len(s_hash), dtype=bool)
    unknown = np.flatnonzero(present & ~in_answers)
    allowed = np.where(in_answers, a_counts[where] if len(a_keys) else 0, 0)
    sub_count = np.zeros(len(s_hash), dtype=np.int64)
    sub_count[present] = s_counts[np.searchsorted(s_keys, s_hash[present])]
    over = np.flatnonzero(in_answers & (sub_count > allowed))
    if len(absent):
        parts.append(
            f"{plural(len(absent), 'test id')} {'is' if len(absent) == 1 else 'are'} missing "
            f"(e.g. {show_many(a_orig.values_at(absent[:MAX_EXAMPLES]))})"
        )
    if len(unknown):
        shown = ", ".join(
            f"{show(v)} in row {int(r) + 1}" for v, r in zip(s_orig.values_at(unknown[:MAX_EXAMPLES]), unknown)
        )
        parts.append(
            f"{plural(len(unknown), 'id')} {'is' if len(unknown) == 1 else 'are'} not in the test set (e.g. {shown})"
        )
    if len(over):
        repeated_keys, first_rows = np.unique(s_hash[over], return_index=True)
        examples = []
        for _key, row in list(zip(repeated_keys.tolist(), over[first_rows].tolist()))[:MAX_EXAMPLES]:
            examples.append(f"{show(s_orig.values_at(np.array([row]))[0])} {int(sub_count[row])} times")
        parts.append(
            f"{plural(len(repeated_keys), 'id')} {'appears' if len(repeated_keys) == 1 else 'appear'} more often "
            f"than in the test set (e.g. {', '.join(examples)})"
        )
    if not parts:
        parts.append("the sorted id sequences differ")
    if len(unknown) and len(absent):
        hint += _spelling_hint(s.values_at(unknown[:1])[0], a.values_at(absent[:50]))
    return f"{head}: " + "; ".join(parts) + f". {hint}"


def _spelling_hint(unknown: object, candidates: Sequence[object]) -> str:
    text = str(unknown)
    for candidate in candidates:
        c = str(candidate)
        if text.strip() == c:
            return f" (watch for spaces: {show(unknown)} should be {show(candidate)})"
        if text.lower() == c.lower():
            return f" (ids are case-sensitive: {show(unknown)} should be {show(candidate)})"
        if text.rsplit(".", 1)[0] == c or c.rsplit(".", 1)[0] == text:
            return f" (file extensions matter: {show(unknown)} vs {show(candidate)} in the sample submission)"
    return ""
