"""The simulated agent under the real graders: the answers are perfect, the honest agent close to them and
never exact on continuous targets, less quality is worse, defects are invalid."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import (
    Defect,
    answers_submission,
    generate_answers,
    grade,
    simulate_submission,
    write_submission,
)
from grading.engine.errors import InvalidSubmission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}
LOW = (DATA / "splits" / "low.txt").read_text().split()
SPLIT75 = (DATA / "splits" / "split75.txt").read_text().split()


def graded(competition_id: str, answers: pd.DataFrame, quality: float, *, seed: int = 1) -> float:
    submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=seed)
    return grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.fixture(scope="module")
def small_answers() -> dict[str, pd.DataFrame]:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0).answers for cid in SPLIT75}


@pytest.mark.parametrize("competition_id", LOW)
def test_the_answers_are_perfect_quality_one_close_and_low_quality_clearly_worse(competition_id, small_answers):
    answers = small_answers[competition_id]
    higher_is_better = COMPETITIONS[competition_id]["higher_is_better"]
    copied = answers_submission(competition_id=competition_id, answers=answers)
    perfect = grade(competition_id=competition_id, submission=copied, answers=answers)
    assert perfect == (1.0 if higher_is_better else 0.0)
    best, low = graded(competition_id, answers, 1.0), graded(competition_id, answers, 0.2)
    direction = 1 if higher_is_better else -1
    assert direction * (perfect - best) >= 0  # an honest model is at most perfect
    margin = direction * (best - low)
    assert margin > 0.05 * max(abs(best), abs(low), 1e-9)


@pytest.mark.parametrize("competition_id", SPLIT75)
def test_an_honest_model_is_never_exact_on_a_continuous_target(competition_id, small_answers):
    """Probabilities, shares and regression values are close to the answers but never at them; labels, text,
    masks and boxes may be exact (an honest model outputs an exact label)."""
    answers = small_answers[competition_id]
    honest = simulate_submission(competition_id=competition_id, answers=answers, quality=1.0, seed=2)
    copied = answers_submission(competition_id=competition_id, answers=answers)
    continuous = [
        c
        for c in honest.columns
        if pd.api.types.is_float_dtype(honest[c]) and c in copied and pd.api.types.is_numeric_dtype(copied[c])
    ]
    for column in continuous:
        mine, truth = honest[column].to_numpy(dtype=float), copied[column].to_numpy(dtype=float)
        both = np.isfinite(mine) & np.isfinite(truth)
        assert (mine[both] != truth[both]).mean() > 0.95, column
        if ((truth[both] == 0) | (truth[both] == 1)).all() and both.any():  # probabilities of 0/1 answers
            assert ((mine[both] > 0) & (mine[both] < 1)).all(), column
            true_class = mine[both][truth[both] == 1]  # the true class's probability varies from row to row
            assert len(np.unique(np.round(true_class, 3))) >= min(10, len(true_class) // 2), column


@pytest.mark.parametrize("competition_id", SPLIT75)
def test_scores_move_monotonically_with_quality(competition_id, small_answers):
    answers = small_answers[competition_id]
    scores = [graded(competition_id, answers, q, seed=4) for q in (0.0, 0.3, 0.6, 0.9)]
    direction = 1 if COMPETITIONS[competition_id]["higher_is_better"] else -1
    assert all(direction * (b - a) >= 0 for a, b in zip(scores, scores[1:])), scores
    assert scores[0] != scores[-1]


def test_a_written_submission_grades_like_the_frame(tmp_path, small_answers):
    for competition_id in ("text-normalization-challenge-russian-language", "dog-breed-identification"):
        answers = small_answers[competition_id]
        path = write_submission(
            competition_id=competition_id,
            answers=answers,
            quality=0.7,
            seed=3,
            path=tmp_path / competition_id / "submission.csv",
        )
        from_file = grade(competition_id=competition_id, submission=pd.read_csv(path), answers=answers)
        assert from_file == pytest.approx(graded(competition_id, answers, 0.7, seed=3), abs=2e-5)


def test_the_submission_has_the_public_format_and_is_deterministic(small_answers):
    answers = small_answers["ranzcr-clip-catheter-line-classification"]
    first = simulate_submission(
        competition_id="ranzcr-clip-catheter-line-classification", answers=answers, quality=0.5, seed=9
    )
    again = simulate_submission(
        competition_id="ranzcr-clip-catheter-line-classification", answers=answers, quality=0.5, seed=9
    )
    assert len(first.columns) == 10 and "PatientID" not in first.columns
    pd.testing.assert_frame_equal(first, again)
    assert first.drop(columns="StudyInstanceUID").stack().between(0, 1).all()
    with pytest.raises(ValueError):
        simulate_submission(competition_id="leaf-classification", answers=answers, quality=1.5, seed=0)


def test_probability_rows_still_sum_to_one(small_answers):
    answers = small_answers["leaf-classification"]
    submission = simulate_submission(competition_id="leaf-classification", answers=answers, quality=0.4, seed=2)
    assert np.allclose(submission.drop(columns="id").sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("competition_id", LOW)
@pytest.mark.parametrize("defect", [Defect.MISSING_ROWS, Defect.WRONG_COLUMNS, Defect.EMPTY])
def test_structural_defects_make_any_submission_invalid(competition_id, defect, small_answers):
    answers = small_answers[competition_id]
    submission = simulate_submission(
        competition_id=competition_id, answers=answers, quality=0.9, seed=1, defects=[defect]
    )
    with pytest.raises(InvalidSubmission):
        grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.mark.parametrize(
    "competition_id,defect",
    [
        ("aerial-cactus-identification", Defect.NAN_VALUES),
        ("aerial-cactus-identification", Defect.OUT_OF_RANGE),
        ("aerial-cactus-identification", Defect.DUPLICATE_IDS),
        ("spooky-author-identification", Defect.OUT_OF_RANGE),
        ("nomad2018-predict-transparent-conductors", Defect.OUT_OF_RANGE),
        ("new-york-city-taxi-fare-prediction", Defect.NAN_VALUES),
        ("jigsaw-toxic-comment-classification-challenge", Defect.DUPLICATE_IDS),
    ],
)
def test_value_defects_make_a_submission_invalid_where_the_rules_say_so(competition_id, defect, small_answers):
    answers = small_answers[competition_id]
    submission = simulate_submission(
        competition_id=competition_id, answers=answers, quality=0.9, seed=1, defects=[defect]
    )
    with pytest.raises(InvalidSubmission):
        grade(competition_id=competition_id, submission=submission, answers=answers)
