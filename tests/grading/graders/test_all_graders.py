"""Every Lite competition on hand-made answers: perfect scores and untouched inputs.

graders.json's coverage of the whole split75, and graders failing only with clear messages on garbage, are
checked in test_split75_graders.py."""

import pandas as pd
import pytest

from grading.engine.registry import grader_names

from .frames import GRADERS, LOW, answers_for, grade, perfect_submission


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
