"""Every Lite competition on hand-made answers: perfect scores, untouched inputs, only clear failures.

graders.json's coverage of the whole split75 is checked in test_split75_graders.py."""


import numpy as np
import pandas as pd
import pytest

from grading.engine.errors import InvalidSubmission
from grading.engine.registry import grader_names

from .frames import GRADERS, LOW, answers_for, grade, perfect_submission, roundtrip, submission_columns


def test_the_family_modules_register_every_grader_on_import():
    assert set(grader_names()) >= {
        "roc_auc",
        "roc_auc_columnwise",
        "log_loss_binary",
        "log_loss_multiclass",
        "rmse",
        "rmsle_columnwise_mean",
        "accuracy",
        "quadratic_weighted_kappa",
    }


@pytest.mark.parametrize("competition", LOW)
def test_a_perfect_submission_gets_the_best_score(competition):
    answers = answers_for(competition)
    score = grade(competition, perfect_submission(competition, answers), answers)
    if GRADERS[competition]["grader"].startswith("log_loss"):
        assert score == pytest.approx(0.0, abs=1e-15)
    elif GRADERS[competition]["grader"] in ("rmse", "rmsle_columnwise_mean"):
        assert score == 0.0
    else:
        assert score == 1.0


@pytest.mark.parametrize("competition", LOW)
def test_graders_do_not_modify_their_inputs(competition):
    answers = answers_for(competition)
    submission = perfect_submission(competition, answers).iloc[::-1].reset_index(drop=True)
    before_answers, before_submission = answers.copy(), submission.copy()
    grade(competition, submission, answers)
    pd.testing.assert_frame_equal(answers, before_answers)
    pd.testing.assert_frame_equal(submission, before_submission)


def _garbage(competition, answers):
    columns = submission_columns(competition)
    n = len(answers)
    rng = np.random.default_rng(0)
    yield "empty frame", pd.DataFrame()
    yield "header only", pd.DataFrame(columns=columns)
    yield "one text column", pd.DataFrame({"hello world": ["foo;bar", "baz"]})
    yield "right columns, all empty", pd.DataFrame({c: [np.nan] * n for c in columns})
    yield "right columns, all text", roundtrip(pd.DataFrame({c: ["abc"] * n for c in columns}))
    yield (
        "right columns, mixed Python values",
        pd.DataFrame({c: ([1, "x", None, 2.5, True] * n)[:n] for c in columns}),
    )
    yield (
        "right columns, booleans",
        pd.DataFrame({c: [True, False] * (n // 2) + [True] * (n % 2) for c in columns}),
    )
    yield "duplicated column names", pd.DataFrame([[0.5] * (2 * len(columns))] * n, columns=columns + columns)
    yield "integer column names", pd.DataFrame(rng.random((n, len(columns))))
    yield "many random rows", pd.DataFrame({c: rng.random(5000) for c in columns})
    yield "huge numbers", pd.DataFrame({c: [1e308, -1e308] * (n // 2) + [1e308] * (n % 2) for c in columns})
    yield "nested objects", pd.DataFrame({c: [[1, 2]] * n for c in columns})
    ids = answers[columns[0]] if columns[0] in answers else pd.Series(range(n))
    yield (
        "right ids, values are dicts",
        pd.DataFrame({columns[0]: ids, **{c: [{"p": 1}] * n for c in columns[1:]}}),
    )
    yield (
        "right ids, values missing",
        roundtrip(pd.DataFrame({columns[0]: ids, **{c: [""] * n for c in columns[1:]}})),
    )


@pytest.mark.parametrize("competition", LOW)
def test_graders_raise_only_invalid_submission_on_garbage(competition):
    answers = answers_for(competition)
    for label, frame in _garbage(competition, answers):
        try:
            score = grade(competition, frame, answers)
        except InvalidSubmission as exc:
            assert str(exc).strip(), label
        except Exception as exc:  # noqa: BLE001 - any other exception is the failure under test
            pytest.fail(f"{competition}: {label}: {type(exc).__name__}: {exc}")
        else:
            # Only a few odd inputs are valid for the reference; they give a float (NaN, or inf where
            # huge numbers overflow the squared error, as they do in the reference).
            assert isinstance(score, float), label


@pytest.mark.parametrize("competition", LOW)
def test_graders_reject_an_empty_frame_with_a_message_naming_the_columns(competition):
    answers = answers_for(competition)
    with pytest.raises(InvalidSubmission) as caught:
        grade(competition, pd.DataFrame(), answers)
    message = str(caught.value)
    assert "column" in message or "rows" in message


@pytest.mark.parametrize("competition", LOW)
def test_graders_refuse_something_that_is_not_a_table(competition):
    answers = answers_for(competition)
    with pytest.raises(InvalidSubmission, match="could not be read as a table"):
        grade(competition, None, answers)
