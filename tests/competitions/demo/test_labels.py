"""Synthetic packs of the class-label competitions (accuracy, top-1 error, macro F1, kappa)."""

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import (
    Defect,
    expected_rows,
    generate_answers,
    grade,
    make_demo_pack,
    simulate_submission,
)
from competitions.demo.specs import spec_for
from competitions.demo.specs._labels_kinds import LongTailLabels
from grading.engine.csvio import load_answers
from grading.engine.errors import InvalidSubmission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}

# answers header, dtype kind of each column ("i" int64, "O" text), and the id pattern
EXPECTED = {
    "cassava-leaf-disease-classification": (["image_id", "label"], "Oi", r"\d{7,10}\.jpg"),
    "cdiscount-image-classification-challenge": (["_id", "category_id"], "ii", None),
    "herbarium-2020-fgvc7": (["Id", "Predicted"], "ii", None),
    "herbarium-2021-fgvc8": (["Id", "Predicted"], "ii", None),
    "herbarium-2022-fgvc9": (["Id", "Predicted"], "ii", None),
    "inaturalist-2019-fgvc6": (["id", "predicted"], "ii", None),
    "iwildcam-2019-fgvc6": (
        ["Id", "Category"],
        "Oi",
        r"[0-9a-f]{8}-[0-9a-f]{4}-11e9-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    "iwildcam-2020-fgvc7": (
        ["Id", "Category"],
        "Oi",
        r"[0-9a-f]{8}-[0-9a-f]{4}-11ea-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    "learning-agency-lab-automated-essay-scoring-2": (
        ["essay_id", "full_text", "score"],
        "OOi",
        r"[0-9a-f]{7}",
    ),
    "tensorflow-speech-recognition-challenge": (["fname", "label"], "OO", r"clip_[0-9a-f]{9}\.wav"),
}
GROUP = sorted(EXPECTED)


def kind(series: pd.Series) -> str:
    return "i" if series.dtype == np.int64 else "O" if pd.api.types.is_string_dtype(series.dtype) else "?"


def graded(competition_id: str, answers: pd.DataFrame, quality: float, *, seed: int = 1) -> float:
    submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=seed)
    return grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.fixture(scope="module")
def small() -> dict[str, pd.DataFrame]:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0) for cid in GROUP}


@pytest.mark.parametrize("competition_id", GROUP)
def test_small_answers_have_the_private_files_columns_dtypes_and_ids(competition_id, small):
    answers = small[competition_id].answers
    header, kinds, pattern = EXPECTED[competition_id]
    assert list(answers.columns) == header
    assert "".join(kind(answers[c]) for c in header) == kinds
    assert len(answers) == expected_rows(competition_id=competition_id, size="small")
    id_column = header[0]
    assert answers[id_column].is_unique
    if pattern:
        assert answers[id_column].str.fullmatch(pattern).all()
    assert list(small[competition_id].sample_submission.columns) == COMPETITIONS[competition_id]["submission_columns"]
    assert small[competition_id].gold_submission is None  # the answers file is the gold submission


@pytest.mark.parametrize("competition_id", GROUP)
def test_quality_one_is_best_and_lower_quality_is_clearly_worse(competition_id, small):
    answers = small[competition_id].answers
    higher_is_better = COMPETITIONS[competition_id]["higher_is_better"]
    best, low = graded(competition_id, answers, 1.0), graded(competition_id, answers, 0.2)
    assert best == (1.0 if higher_is_better else 0.0)
    margin = (best - low) if higher_is_better else (low - best)
    assert margin > 0.2
    scores = [graded(competition_id, answers, q, seed=4) for q in (0.0, 0.3, 0.6, 0.9, 1.0)]
    direction = 1 if higher_is_better else -1
    assert all(direction * (b - a) >= 0 for a, b in itertools.pairwise(scores)), scores


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_sample_submission_is_valid_and_defects_are_not(competition_id, small):
    data = small[competition_id]
    score = grade(competition_id=competition_id, submission=data.sample_submission, answers=data.answers)
    assert 0.0 <= score <= 1.0
    for defect in (Defect.MISSING_ROWS, Defect.DUPLICATE_IDS, Defect.WRONG_COLUMNS, Defect.NAN_VALUES):
        broken = simulate_submission(
            competition_id=competition_id, answers=data.answers, quality=0.8, seed=2, defects=[defect]
        )
        with pytest.raises(InvalidSubmission):
            grade(competition_id=competition_id, submission=broken, answers=data.answers)
    # an unknown class is a valid (wrong) prediction for every metric of the group
    unknown = simulate_submission(
        competition_id=competition_id,
        answers=data.answers,
        quality=1.0,
        seed=2,
        defects=[Defect.OUT_OF_RANGE],
    )
    assert grade(competition_id=competition_id, submission=unknown, answers=data.answers) != graded(
        competition_id, data.answers, 1.0
    )


def test_long_tail_classes_scale_with_the_rows_and_every_class_is_present():
    herbarium = spec_for("herbarium-2021-fgvc8").targets[0]
    assert isinstance(herbarium, LongTailLabels)
    assert herbarium.n_classes(477_000) == 64_500 and herbarium.n_classes(300) == 41
    full = generate_answers(competition_id="herbarium-2021-fgvc8", size="full", seed=0).answers
    assert len(full) == 477_000 == COMPETITIONS["herbarium-2021-fgvc8"]["answers_rows_estimate"]
    counts = full["Predicted"].value_counts()
    assert len(counts) == 64_500 and counts.min() == 1 and counts.max() > 20
    assert full["Id"].is_unique


@pytest.mark.parametrize("competition_id", GROUP)
def test_full_size_is_the_answers_row_estimate(competition_id):
    rows = COMPETITIONS[competition_id]["answers_rows_estimate"]
    assert expected_rows(competition_id=competition_id, size="full") == rows
    if rows <= 20_000:
        assert len(generate_answers(competition_id=competition_id, size="full", seed=0).answers) == rows


def test_essays_hold_paragraphs_and_quotes_that_survive_the_csv(tmp_path):
    data = generate_answers(competition_id="learning-agency-lab-automated-essay-scoring-2", size=40, seed=3)
    texts = data.answers["full_text"]
    assert texts.str.contains("\n\n").any() and texts.str.contains(",").any()
    path = tmp_path / "answers.csv"
    data.answers.to_csv(path, index=False)
    pd.testing.assert_frame_equal(load_answers(path), data.answers)


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_are_written_and_their_sample_grades_against_their_answers(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=GROUP, size="small", n_teams=12, workers=1, layout=layout)
    for competition_id in GROUP:
        entry, folder = COMPETITIONS[competition_id], tmp_path / competition_id
        if layout == "portal":
            answers_path = folder / "private" / Path(entry["answers_file"]).name
            sample_path = folder / "public" / Path(entry["sample_submission_file"]).name
        else:
            answers_path, sample_path = (
                folder / entry["answers_file"],
                folder / entry["sample_submission_file"],
            )
        answers = load_answers(answers_path)
        assert list(answers.columns) == EXPECTED[competition_id][0]
        sample = pd.read_csv(sample_path)
        score = grade(competition_id=competition_id, submission=sample, answers=answers)
        assert 0.0 <= score <= 1.0
        board = pd.read_csv(folder / "leaderboard.csv")
        assert len(board) == 12 and board["score"].notna().all()
