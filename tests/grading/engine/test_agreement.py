"""The agreement measure behind answer_copy: rows matched by id, per-kind tolerance, agreement by chance."""

import math

import numpy as np
import pandas as pd
import pytest

from grading.engine.agreement import measure, rounding_step, wilson_low

ANSWERS = pd.DataFrame({"id": [f"r{i}" for i in range(1000)], "y": np.linspace(1.0, 50.0, 1000)})


def test_rows_are_matched_by_id_and_missing_or_extra_rows_do_not_help():
    theirs = ANSWERS.sample(frac=1.0, random_state=0).iloc[:900]
    theirs = pd.concat([theirs, pd.DataFrame({"id": ["extra"], "y": [1.0]})])
    m = measure(theirs, ANSWERS, id_column="id")
    assert (m["rows"], m["rows_matched"], m["rows_agree"], m["rows_exact"]) == (1000, 900, 900, 900)


def test_a_described_id_column_is_found_by_its_first_word():
    m = measure(ANSWERS, ANSWERS, id_column="id ('{sentence_id}_{token_id}')")
    assert m["measured"] and m["rows_agree"] == 1000


def test_numbers_agree_within_two_percent_or_the_rounding_step_and_honest_errors_do_not():
    close = ANSWERS.assign(y=ANSWERS.y * 1.015)
    off = ANSWERS.assign(y=ANSWERS.y * 1.1)
    assert measure(close, ANSWERS)["rows_agree"] == 1000 and measure(close, ANSWERS)["rows_exact"] == 0
    assert measure(off, ANSWERS)["rows_agree"] < 50
    assert rounding_step(np.array([0.25, 1.5, 3.0])) == 0.005 * (1 + 1e-9)
    assert rounding_step(np.array([0.123456789])) == 0.0


def test_agreement_by_chance_is_taken_out():
    mostly_zero = pd.DataFrame({"id": range(1000), "y": [0.0] * 950 + [1.0] * 50})
    zeros = mostly_zero.assign(y=0.0)  # agrees on 95 % of the rows without knowing anything
    m = measure(zeros, mostly_zero)
    assert m["share_agree"] == 0.95 and m["chance"] >= 0.9 and m["agreement_low"] < 0.5


def test_text_is_compared_exactly_and_blank_cells_equal_blank_cells():
    answers = pd.DataFrame({"id": range(400), "after": ["a", None, "b c", "d"] * 100})
    theirs = answers.assign(after=answers.after.fillna(""))
    assert measure(theirs, answers)["rows_agree"] == 400
    assert measure(answers.assign(after="a"), answers)["rows_agree"] == 100


def test_a_file_that_cannot_be_matched_is_not_measured_with_a_reason():
    assert measure(ANSWERS.rename(columns={"id": "key"}), ANSWERS)["reason"].startswith("the submission and the")
    assert not measure(ANSWERS[["id"]], ANSWERS)["measured"]
    repeated = pd.concat([ANSWERS, ANSWERS])
    assert measure(ANSWERS, repeated)["reason"] == "ids repeat in the answers, so rows cannot be matched by id"
    assert measure(ANSWERS, [{"id": 1}])["reason"] == "the answers are not a table"


def test_a_few_rows_are_never_enough_to_be_sure():
    assert wilson_low(40, 40) < 0.92 < wilson_low(300, 300)
    assert wilson_low(0, 0) == 0.0


def _cases() -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """Submissions whose ids equal the answers' cell for cell, and ones that only look equal."""
    rng = np.random.default_rng(3)
    text = pd.DataFrame({"id": pd.Series([f"{i}_1" for i in range(500)], dtype="str"), "y": rng.normal(size=500)})
    with_nulls = text.assign(id=text.id.where(np.arange(500) % 7 != 0, None))
    objects = text.assign(id=text.id.astype(object))
    ints = pd.DataFrame({"id": np.arange(300), "y": rng.normal(size=300).round(2)})
    fractions = pd.DataFrame({"id": [0.5, 1.5, 0.0, 2.5], "y": [1.0, 2.0, 3.0, 4.0]})
    return [
        ("strings, in order", text.assign(y=text.y * 1.01), text),
        ("strings with missing ids", with_nulls.assign(y=np.nan), with_nulls),
        ("object strings", objects, objects),
        ("object against Arrow strings", objects, text),
        ("padded ids", text.assign(id=" " + text.id), text),
        ("integers", ints.assign(y=ints.y + 0.001), ints),
        ("integers against whole floats", ints.assign(id=ints.id.astype(float)), ints),
        ("-0.0 against 0.0 among fractions", fractions.assign(id=[0.5, 1.5, -0.0, 2.5]), fractions),
        (
            "1 against 1.0 as objects",
            pd.DataFrame({"id": pd.Series([1, 2], dtype=object), "y": [1.0, 2.0]}),
            pd.DataFrame({"id": pd.Series([1.0, 2], dtype=object), "y": [1.0, 2.0]}),
        ),
        ("one row", ints.iloc[:1], ints.iloc[:1]),
    ]


def test_ids_equal_cell_for_cell_skip_the_keys_with_the_same_measure(monkeypatch):
    from grading.engine import agreement

    fast = [measure(theirs, answers) for _, theirs, answers in _cases()]
    monkeypatch.setattr(agreement, "_same_ids", lambda theirs, answers: False)  # always through the keys
    slow = [measure(theirs, answers) for _, theirs, answers in _cases()]
    for (name, _, _), got, expected in zip(_cases(), fast, slow):
        assert got == expected, name


def test_the_shortcut_declines_ids_that_only_compare_equal():
    from grading.engine.agreement import _same_ids

    by_name = {name: (theirs, answers) for name, theirs, answers in _cases()}
    for name in ("-0.0 against 0.0 among fractions", "1 against 1.0 as objects", "padded ids"):
        theirs, answers = by_name[name]
        assert not _same_ids(theirs["id"], answers["id"]), name
    for name in ("strings, in order", "strings with missing ids", "object strings", "integers"):
        theirs, answers = by_name[name]
        assert _same_ids(theirs["id"], answers["id"]), name


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_number_cells_marked_chunk_by_chunk_are_the_whole_columns_marks(chunk):
    from grading.engine.agreement import _numbers_agree, _scale, _tolerance, rounding_step

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 10, 101, 300):
        truth = rng.normal(size=n).round(1)
        predicted = truth[rng.permutation(n)] + rng.normal(scale=0.01, size=n)
        truth[::4], predicted[::3] = np.nan, np.nan
        scale = _scale(truth)
        tolerance = _tolerance(truth, scale, rounding_step(predicted))
        shift = n // 2 if n > 1 else 0
        roll = np.roll(np.arange(n), shift)
        both_missing = np.isnan(predicted) & np.isnan(truth)
        with np.errstate(invalid="ignore"):
            close = (np.abs(predicted - truth) <= tolerance) | both_missing
            same = (predicted == truth) | both_missing
            chance = (np.abs(predicted - truth[roll]) <= tolerance[roll]) | (
                np.isnan(predicted) & np.isnan(truth[roll])
            )
        start = rng.random(n) < 0.9  # what earlier columns left: a column can only take rows away
        agree, exact, by_chance = start.copy(), start.copy(), start.copy()
        _numbers_agree(
            predicted, truth, scale=scale, shift=shift, agree=agree, exact=exact, by_chance=by_chance, chunk=chunk
        )
        assert np.array_equal(agree, start & close), n
        assert np.array_equal(exact, start & same), n
        assert np.array_equal(by_chance, start & chance), n


def test_the_answers_scales_worked_out_once_give_the_same_measure():
    from grading.engine.agreement import answer_scales

    rng = np.random.default_rng(8)
    answers = pd.DataFrame(
        {
            "id": np.arange(500),
            "y": rng.normal(size=500),
            "p": rng.random(500).round(2),
            "label": rng.choice(["a", "b"], size=500),
            "flag": rng.random(500) < 0.5,
        }
    )
    answers.loc[::50, "y"] = np.nan
    scales = answer_scales(answers)
    assert set(scales) == {"id", "y", "p"}  # numbers only: not text, not booleans
    for theirs in (
        answers,
        answers.assign(y=answers.y * 1.01),
        answers.sample(frac=1.0, random_state=1),
        answers.assign(p=answers.p.astype(str)),
        answers.assign(y=rng.normal(size=500)),
    ):
        assert measure(theirs, answers, id_column="id", scales=scales) == measure(theirs, answers, id_column="id")
    assert answer_scales([{"id": 1}]) == {} and answer_scales(pd.concat([answers, answers], axis=1)) == {}
    # a nullable integer column with missing cells is taken as floats with NaN, here as in the measure
    nullable = answers.assign(n=pd.array([1, None] * 250, dtype="Int64"))
    assert set(answer_scales(nullable)) == {"id", "y", "p", "n"}
    theirs = nullable.assign(n=nullable.n.fillna(2))
    assert measure(theirs, nullable, scales=answer_scales(nullable)) == measure(theirs, nullable)


def test_rounding_step_reads_the_first_finite_values_only():
    values = np.concatenate([np.full(50_000, np.nan), np.round(np.linspace(0, 5, 20_000), 2), [0.123456789]])
    assert rounding_step(values) == 0.005 * (1 + 1e-9)  # the 10,000 first finite values have two decimals
    assert rounding_step(values, sample=30_000) == 0.0
    assert rounding_step(np.full(10, np.nan)) == 0.0 and rounding_step(np.array([])) == 0.0


def test_tolerance_and_scale_in_place_equal_the_plain_formulas():
    from grading.engine.agreement import REL_TOLERANCE, SCALE_TOLERANCE, _scale, _tolerance

    rng = np.random.default_rng(3)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324])
    for trial in range(60):
        truth = rng.normal(0, 10.0 ** rng.integers(-6, 6), size=rng.integers(0, 300))
        if trial % 3 == 0 and len(truth):
            truth[rng.integers(0, len(truth), size=5)] = rng.choice(specials, size=5)
        finite = truth[np.isfinite(truth)]
        with np.errstate(over="ignore", invalid="ignore"):  # 1e308 and -1e308 overflow the variance
            expected_scale = float(np.std(finite)) if len(finite) else 0.0
            scale = _scale(truth)
        assert scale == expected_scale or (math.isnan(expected_scale) and math.isnan(scale))
        for scale, step in ((expected_scale, 0.0), (0.0, 0.005), (3.0, 0.05), (np.inf, 0.0), (0.0, 0.0)):
            with np.errstate(invalid="ignore", over="ignore"):
                expected = np.maximum(np.maximum(REL_TOLERANCE * np.abs(truth), SCALE_TOLERANCE * scale), step)
            np.testing.assert_array_equal(_tolerance(truth, scale, step), expected)
