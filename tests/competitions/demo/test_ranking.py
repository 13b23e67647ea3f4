"""Synthetic packs of the ranking group (MAP@k, micro F1 over label sets, lwlrap) under the real graders."""

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import Defect, generate_answers, grade, make_demo_pack, simulate_submission
from competitions.demo.csvio import write_csv
from competitions.demo.specs._ranking_vocab import FREESOUND_CLASSES
from grading.engine.csvio import load_answers
from grading.engine.errors import InvalidSubmission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}

HM = "h-and-m-personalized-fashion-recommendations"
HOTEL = "hotel-id-2021-fgvc8"
WHALE = "whale-categorization-playground"
FACEBOOK = "facebook-recruiting-iii-keyword-extraction"
IMET = "imet-2020-fgvc7"
PLANT = "plant-pathology-2021-fgvc8"
FREESOUND = "freesound-audio-tagging-2019"
RANKING = [FACEBOOK, FREESOUND, HM, HOTEL, IMET, PLANT, WHALE]

ANSWERS_COLUMNS = {
    FACEBOOK: ["Id", "Title", "Body", "Tags"],
    FREESOUND: ["fname", *FREESOUND_CLASSES],
    HM: ["customer_id", "prediction"],
    HOTEL: ["image", "chain", "hotel_id", "timestamp"],
    IMET: ["id", "attribute_ids"],
    PLANT: ["image", "labels"],
    WHALE: ["Image", "Id"],
}
ID_PATTERNS = {
    FACEBOOK: None,
    FREESOUND: r"[0-9a-f]{8}\.wav",
    HM: r"[0-9a-f]{64}",
    HOTEL: r"[0-9a-f]{16}\.jpg",
    IMET: r"[0-9a-f]{32}",
    PLANT: r"[0-9a-f]{16}\.jpg",
    WHALE: r"[0-9a-f]{8}\.jpg",
}


@pytest.fixture(scope="module")
def small() -> dict:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0) for cid in RANKING}


def graded(cid: str, answers: pd.DataFrame, quality: float, *, seed: int = 1, defects=()) -> float:
    submission = simulate_submission(competition_id=cid, answers=answers, quality=quality, seed=seed, defects=defects)
    return grade(competition_id=cid, submission=submission, answers=answers)


@pytest.mark.parametrize("cid", RANKING)
def test_small_answers_have_the_private_columns_and_the_dtypes_read_csv_gives(cid, small, tmp_path):
    data = small[cid]
    answers = data.answers
    assert list(answers.columns) == ANSWERS_COLUMNS[cid]
    assert len(answers) == 300 and answers.iloc[:, 0].is_unique
    path = tmp_path / "answers.csv"
    write_csv(answers, path)
    pd.testing.assert_frame_equal(pd.read_csv(path), answers, check_dtype=True)
    pattern = ID_PATTERNS[cid]
    ids = answers.iloc[:, 0]
    if pattern is None:
        assert ids.dtype == np.int64 and ids.between(1, 6_034_195).all()
    else:
        assert ids.str.fullmatch(pattern).all()
    assert list(data.sample_submission.columns) == COMPETITIONS[cid]["submission_columns"][:1] + list(
        data.sample_submission.columns[1:]
    )
    assert data.gold_submission is None


def test_answer_values_look_like_the_real_ones(small):
    hm = small[HM].answers["prediction"]
    tokens = hm.str.split(" ").explode()
    assert tokens.str.fullmatch(r"[1-9]\d{8}").all()  # read_csv integers: no leading zero
    assert (hm.str.split(" ").map(len) == hm.str.split(" ").map(lambda t: len(set(t)))).all()
    assert small[HOTEL].answers["hotel_id"].dtype == np.int64
    assert small[WHALE].answers["Id"].str.fullmatch(r"new_whale|w_[0-9a-f]{7}").all()
    assert small[IMET].answers["attribute_ids"].str.fullmatch(r"\d+( \d+)*").all()
    assert set(small[PLANT].answers["labels"]) <= {
        "scab", "healthy", "frog_eye_leaf_spot", "rust", "complex", "powdery_mildew",
        "scab frog_eye_leaf_spot", "scab frog_eye_leaf_spot complex", "frog_eye_leaf_spot complex",
        "rust frog_eye_leaf_spot", "rust complex", "powdery_mildew complex",
    }  # fmt: skip
    labels = small[FREESOUND].answers[list(FREESOUND_CLASSES)].to_numpy()
    assert set(np.unique(labels)) == {0, 1} and (labels.sum(axis=1) >= 1).all()


def test_the_hm_sample_submission_lists_more_customers_than_the_answers(small):
    data = small[HM]
    sample = data.sample_submission
    assert len(sample) == 2 * len(data.answers) and sample["customer_id"].is_unique
    assert set(data.answers["customer_id"]) < set(sample["customer_id"])
    assert sample["prediction"].iloc[0].startswith("0706016001 ")


@pytest.mark.parametrize("cid", RANKING)
def test_quality_one_is_perfect_and_low_quality_is_clearly_worse(cid, small):
    answers = small[cid].answers
    best, low = graded(cid, answers, 1.0), graded(cid, answers, 0.2)
    assert best == 1.0
    assert best - low > 0.3


@pytest.mark.parametrize("cid", RANKING)
def test_scores_move_monotonically_with_quality(cid, small):
    answers = small[cid].answers
    scores = [graded(cid, answers, q, seed=4) for q in (0.0, 0.3, 0.6, 0.9, 1.0)]
    assert all(b >= a for a, b in itertools.pairwise(scores)), scores


@pytest.mark.parametrize("cid", RANKING)
def test_the_sample_submission_grades(cid, small):
    data = small[cid]
    score = grade(competition_id=cid, submission=data.sample_submission, answers=data.answers)
    assert 0.0 <= score < 0.5


@pytest.mark.parametrize("cid", RANKING)
def test_defects_follow_each_competitions_rules(cid, small):
    answers = small[cid].answers
    with pytest.raises(InvalidSubmission):
        graded(cid, answers, 0.8, defects=[Defect.MISSING_ROWS])
    with pytest.raises(InvalidSubmission):
        graded(cid, answers, 0.8, defects=[Defect.WRONG_COLUMNS])
    with pytest.raises(InvalidSubmission):  # for H&M too: the overwritten customers are then missing
        graded(cid, answers, 0.8, defects=[Defect.DUPLICATE_IDS])
    if cid == FREESOUND:  # scores must be finite numbers; any finite number is fine
        with pytest.raises(InvalidSubmission):
            graded(cid, answers, 0.8, defects=[Defect.NAN_VALUES])
    else:  # an empty cell predicts nothing for its row
        assert graded(cid, answers, 1.0, defects=[Defect.NAN_VALUES]) < 1.0
    assert graded(cid, answers, 1.0, defects=[Defect.OUT_OF_RANGE]) < 1.0


def test_leaderboard_subsets_and_full_size_rows():
    for cid in (HM, FREESOUND):
        data = generate_answers(competition_id=cid, size=1200, seed=2)
        subset = data.answers.sample(n=400, random_state=0).reset_index(drop=True)
        assert graded(cid, subset, 1.0) == 1.0 and graded(cid, subset, 0.5) < 1.0
    assert COMPETITIONS[FACEBOOK]["answers_rows_estimate"] == 603_420


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_make_demo_pack_writes_gradable_packs(layout, tmp_path):
    folders = make_demo_pack(
        out_dir=tmp_path, competition_ids=RANKING, size="small", n_teams=12, workers=1, layout=layout
    )
    for cid, folder in zip(RANKING, folders):
        entry = COMPETITIONS[cid]
        if layout == "portal":
            manifest = json.loads((folder / "pack.json").read_text())
            answers_path, sample_path = folder / manifest["answers"], folder / manifest["sample_submission"]
        else:
            answers_path = folder / entry["answers_file"]
            sample_path = folder / entry["sample_submission_file"]
        answers = load_answers(answers_path)
        sample = pd.read_csv(sample_path)
        assert list(answers.columns) == ANSWERS_COLUMNS[cid]
        score = grade(competition_id=cid, submission=sample, answers=answers)
        assert 0.0 <= score < 0.5
        board = pd.read_csv(folder / "leaderboard.csv")
        assert len(board) == 12 and board["score"].is_monotonic_decreasing
        assert re.search(entry["name"].split(" ")[0], (sample_path.parent / "description.md").read_text())
