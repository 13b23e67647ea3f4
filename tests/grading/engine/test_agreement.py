"""The agreement measure behind answer_copy: rows matched by id, per-kind tolerance, agreement by chance."""

import numpy as np
import pandas as pd

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
