"""The shared helpers: id matching (grading.engine.graders.ids) and value checks (._checks)."""

import time

import numpy as np
import pandas as pd
import pytest

from grading.engine.errors import InvalidSubmission
from grading.engine.graders import ids as _ids
from grading.engine.graders._validation import float_values_like_sklearn, numeric_values, require_rows_sum_to_one

STORAGES = ["pyarrow", "python"]


def _text(values, storage):
    if storage == "pyarrow":
        pytest.importorskip("pyarrow")
    return pd.Series(values, dtype=pd.StringDtype(storage, na_value=np.nan))


def _brute_force(sub, ans):
    position = {v: i for i, v in enumerate(ans)}
    if len(sub) != len(ans) or len(position) != len(ans):
        return None
    try:
        perm = [position[v] for v in sub]
    except KeyError:
        return None
    return np.array(perm) if len(set(perm)) == len(perm) else None


def _check(sub, ans, expected):
    got = _ids.match_permutation(sub, ans)
    if expected is None:
        assert got is None
    elif got is True:
        assert np.array_equal(expected, np.arange(len(expected)))
    else:
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("force_collisions", [False, True])
def test_it_matches_text_ids_exactly_even_when_hashes_collide(storage, force_collisions, monkeypatch):
    if force_collisions:  # leave only 6 bits of hash: nearly every id collides with others
        _force_collisions(monkeypatch)
    rng = np.random.default_rng(1)
    for n in (1, 2, 17, 300, 2500):
        answers = [f"{x}_{'é' * int(x % 3)}{'x' * int(x % 97)}" for x in rng.permutation(4 * n)[:n]]
        sub = [answers[i] for i in rng.permutation(n)]
        _check(_text(sub, storage), _text(answers, storage), _brute_force(sub, answers))
        if n > 1:
            broken = list(sub)
            broken[0] = broken[1]
            _check(_text(broken, storage), _text(answers, storage), None)
            broken[0] = sub[0] + "?"
            _check(_text(broken, storage), _text(answers, storage), None)


def _force_collisions(monkeypatch) -> None:
    # Few bits left for the hash after the row index: collisions happen, and must be resolved exactly.
    from grading.engine.graders.ids import keys

    for module in (_ids, keys):
        monkeypatch.setattr(module, "_index_bits", lambda n: 58)


@pytest.mark.parametrize("force_collisions", [False, True])
def test_it_matches_numeric_ids_by_value(force_collisions, monkeypatch):
    if force_collisions:
        _force_collisions(monkeypatch)
    rng = np.random.default_rng(2)
    for n in (3, 1000):
        answers = rng.permutation(10 * n)[:n] - 5 * n
        perm = rng.permutation(n)
        _check(pd.Series(answers[perm]), pd.Series(answers), perm)
        _check(pd.Series(answers[perm].astype(float)), pd.Series(answers), perm)  # 7.0 == 7
        _check(pd.Series(answers[perm] + 0.5), pd.Series(answers), None)
        halves = answers * 0.5
        _check(pd.Series(halves[perm]), pd.Series(halves), perm)
    huge = np.array([2**62, -(2**62), 5, 2**63 - 1], dtype=np.int64)  # no exact key range: hashed
    _check(pd.Series(huge[[3, 0, 2, 1]]), pd.Series(huge), np.array([3, 0, 2, 1]))


def test_it_flags_answers_that_repeat_an_id():
    answers = pd.Series(["a", "b", "a"], dtype="str")
    with pytest.raises(_ids.AnswersHaveDuplicateIds):
        _ids.match_permutation(pd.Series(["a", "a", "b"], dtype="str"), answers)
    assert _ids.match_permutation(pd.Series(["a", "b", "b"], dtype="str"), answers) is None
    assert _ids.match_permutation(answers.copy(), answers) is True


def test_text_and_number_ids_never_match():
    assert _ids.match_permutation(pd.Series(["1", "2"], dtype="str"), pd.Series([1, 2])) is None


def test_the_text_hash_depends_on_each_string_alone():
    pa = pytest.importorskip("pyarrow")
    words = ["", "a", "12345678", "123456789", "x" * 70, "x" * 71, "Жé_1"]
    alone = _ids._Bytes.from_arrow(pa.array(words)).hash()
    padded = _ids._Bytes.from_arrow(pa.array(["y" * 200] + words)).hash()[1:]
    joined = _ids._Bytes.from_joined(_ids._Bytes.join(np.array(words, dtype=object)), len(words)).hash()
    assert np.array_equal(alone, padded) and np.array_equal(alone, joined)
    assert len(set(alone.tolist())) == len(words)


def test_reference_sort_order_is_numpy_object_quicksort_with_missing_last():
    values = pd.Series(["b", None, "a", "b", "c", "a"] * 5, dtype="str")
    objects = values.to_numpy(dtype=object, na_value=np.nan)
    present = np.flatnonzero(~pd.isna(objects))
    expected = np.concatenate(
        [present[np.argsort(objects[present], kind="quicksort")], np.flatnonzero(pd.isna(objects))]
    )
    assert np.array_equal(_ids.reference_sort_order(values), expected)
    with pytest.raises(InvalidSubmission, match="mixes text and numbers"):
        _ids.reference_sort_order(pd.Series([1, "a"], dtype=object))


def test_in_reference_order_lists_pairs_by_sorted_answer_id():
    answers = pd.DataFrame({"id": ["c", "a", "b"]})
    pairing = _ids.Pairing(None, np.array([2, 0, 1]))  # sub rows 0,1,2 -> answer rows 2,0,1
    ordered = _ids.in_reference_order(pairing, answers, "id")
    assert ordered.ans_rows.tolist() == [1, 2, 0]  # a, b, c
    assert ordered.sub_rows.tolist() == [2, 0, 1]  # the submission rows holding a, b, c


def test_matching_a_shuffled_large_submission_is_fast():
    rng = np.random.default_rng(3)
    n = 300_000
    ids = pd.Series([f"{i % 29 + 1}_{i // 29 % 420 + 1}_{i // 12180 + 1}" for i in range(n)], dtype="str")
    shuffled = pd.Series(ids.to_numpy(dtype=object)[rng.permutation(n)], dtype="str")
    start = time.perf_counter()
    perm = _ids.match_permutation(shuffled, ids)
    elapsed = time.perf_counter() - start
    assert np.array_equal(ids.to_numpy(dtype=object)[perm], shuffled.to_numpy(dtype=object))
    assert elapsed < 5.0  # about 0.2 s on a slow 2-core machine


def test_numeric_values_names_the_offending_cells():
    series = pd.Series(["0.5", "abc", None, "1,5"], dtype="str")
    with pytest.raises(InvalidSubmission) as caught:
        numeric_values(series, "p")
    assert "2 non-numeric values" in str(caught.value) and "'abc' in row 2" in str(caught.value)


def test_numeric_values_of_a_column_without_rows_are_empty():
    # read_csv gives a file with only the header text columns; with no cell there is no text to refuse
    assert numeric_values(pd.Series([], dtype="str"), "p").tolist() == []


def test_float_values_like_sklearn_reads_text_with_python_float():
    assert float_values_like_sklearn(pd.Series([" 2 ", "1_000", "inf"], dtype="str"), "v").tolist() == [
        2.0,
        1000.0,
        float("inf"),
    ]
    with pytest.raises(InvalidSubmission, match="'0x10' in row 2"):
        float_values_like_sklearn(pd.Series(["1", "0x10"], dtype="str"), "v")


def test_row_sums_skip_empty_cells_like_pandas():
    matrix = np.array([[0.5, np.nan, 0.5], [0.3, 0.3, 0.3]])
    with pytest.raises(InvalidSubmission, match="row 2 sums to 0.9"):
        require_rows_sum_to_one(matrix, ["a", "b", "c"], atol=1e-6, rtol=1e-5)


def test_it_matches_text_held_in_several_arrow_chunks():
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    ids = [f"img{i}_{j}" for i in range(40) for j in range(50)]
    answers = pd.concat([_text(ids[:700], "pyarrow"), _text(ids[700:], "pyarrow")], ignore_index=True)
    order = rng.permutation(len(ids))
    shuffled = [ids[i] for i in order]
    sub = pd.concat(
        [
            _text(shuffled[:123], "pyarrow"),
            _text(shuffled[123:1500], "pyarrow"),
            _text(shuffled[1500:], "pyarrow"),
        ],
        ignore_index=True,
    )
    assert sub.array._pa_array.num_chunks == 3
    _check(sub, answers, order)
    in_order = pd.concat([_text(ids[:5], "pyarrow"), _text(ids[5:], "pyarrow")], ignore_index=True)
    assert _ids.match_permutation(in_order, answers) is True
