"""Synthetic packs of the object-detection group: formats, the simulated agent, and packs on disk."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import generate_answers, make_demo_pack
from competitions.demo.agent import Defect, simulate_submission
from competitions.demo.catalog import competition_facts
from competitions.demo.leaderboard import grade, grading_subset
from competitions.demo.specs import spec_for
from grading.engine.csvio import load_answers
from grading.engine.errors import InvalidSubmission

LYFT = "3d-object-detection-for-autonomous-vehicles"
SIIM = "siim-covid19-detection"
VINBIG = "vinbigdata-chest-xray-abnormalities-detection"
KUZUSHIJI = "kuzushiji-recognition"
DETECTION = [LYFT, SIIM, VINBIG, KUZUSHIJI]
ANSWERS_COLUMNS = {
    LYFT: ["Id", "PredictionString"],
    SIIM: ["id", "PredictionString"],
    VINBIG: ["image_id", "class_id", "class_name", "rad_id", "x_min", "y_min", "x_max", "y_max"],
    KUZUSHIJI: ["image_id", "labels"],
}


def _answers(competition_id):
    data = generate_answers(competition_id=competition_id, size="small")
    return data.answers, data.sample_submission


@pytest.mark.parametrize("competition_id", DETECTION)
def test_answers_have_the_private_columns_and_dtypes(competition_id):
    answers, sample = _answers(competition_id)
    answers = pd.read_csv(pd.io.common.StringIO(answers.to_csv(index=False)))
    assert list(answers.columns) == ANSWERS_COLUMNS[competition_id]
    assert len(answers) == spec_for(competition_id).small_rows
    assert list(sample.columns) == list(competition_facts(competition_id).submission_columns)
    if competition_id == VINBIG:
        assert answers["class_id"].dtype == np.int64 and answers["x_min"].dtype == np.float64
        finding = answers["class_id"] == 14
        assert (
            finding.any() and (answers.loc[finding, ["x_min", "y_min", "x_max", "y_max"]] == [0, 0, 1, 1]).all().all()
        )
        assert not answers.duplicated(["image_id", "class_id"]).any()
    elif competition_id == LYFT:
        tokens = answers["PredictionString"].str.split()
        assert (tokens.str.len() % 9 == 0).all() and (tokens.str[0] == "1.0").all()
        assert answers["Id"].str.fullmatch(r"[0-9a-f]{64}").all()
    elif competition_id == SIIM:
        assert answers["id"].str.fullmatch(r"[0-9a-f]{12}_(study|image)").all()
        study = answers["id"].str.endswith("_study")
        assert answers.loc[study, "PredictionString"].str.fullmatch(r"\w+ 1 0 0 1 1").all()
    else:
        present = answers["labels"].dropna().str.split(" ")
        assert (present.str.len() % 5 == 0).all() and present.str[0].str.fullmatch(r"U\+[0-9A-F]{4}").all()
        pages = generate_answers(competition_id=competition_id, size=300).answers
        assert pages["labels"].isna().any()  # a few pages without characters, as in the real data


@pytest.mark.parametrize("competition_id", DETECTION)
def test_the_agent_is_perfect_at_quality_one_and_much_worse_at_two_tenths(competition_id):
    answers, sample = _answers(competition_id)
    perfect = grade(
        competition_id=competition_id,
        submission=simulate_submission(competition_id=competition_id, answers=answers, quality=1.0, seed=3),
        answers=answers,
    )
    weak = grade(
        competition_id=competition_id,
        submission=simulate_submission(competition_id=competition_id, answers=answers, quality=0.2, seed=3),
        answers=answers,
    )
    # VinBigData's best is just below 1: pycocotools never counts the answer box with id 0 as matched
    assert perfect == (pytest.approx(1.0, abs=0.01) if competition_id == VINBIG else 1.0)
    assert weak < perfect - 0.3
    grade(competition_id=competition_id, submission=sample, answers=answers)  # the sample is valid


@pytest.mark.parametrize("competition_id", DETECTION)
def test_scores_grow_with_quality_on_a_leaderboard_subset(competition_id):
    answers, _ = _answers(competition_id)
    subset = grading_subset(competition_id=competition_id, answers=answers, rows=60, seed=0)
    scores = [
        grade(
            competition_id=competition_id,
            answers=subset,
            submission=simulate_submission(competition_id=competition_id, answers=subset, quality=q, seed=5),
        )
        for q in (0.0, 0.3, 0.6, 0.9)
    ]
    assert scores == sorted(scores) and scores[-1] > scores[0]


@pytest.mark.parametrize("competition_id", DETECTION)
@pytest.mark.parametrize("defect", [Defect.NAN_VALUES, Defect.OUT_OF_RANGE, Defect.MISSING_ROWS])
def test_defects_make_invalid_files_with_reasons(competition_id, defect):
    answers, _ = _answers(competition_id)
    submission = simulate_submission(
        competition_id=competition_id, answers=answers, quality=0.8, seed=2, defects=[defect]
    )
    if defect is Defect.NAN_VALUES and competition_id in (LYFT, KUZUSHIJI):
        grade(competition_id=competition_id, submission=submission, answers=answers)  # empty = no objects
        return
    with pytest.raises(InvalidSubmission):
        grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.mark.parametrize("competition_id", [VINBIG, KUZUSHIJI])
def test_the_gold_submission_is_in_the_public_format_and_scores_best(competition_id):
    data = generate_answers(competition_id=competition_id, size="small")
    answers, gold = data.answers, data.gold_submission
    assert list(gold.columns) == list(competition_facts(competition_id).submission_columns)
    score = grade(competition_id=competition_id, submission=gold, answers=answers)
    assert score == (pytest.approx(1.0, abs=0.01) if competition_id == VINBIG else 1.0)


@pytest.mark.parametrize("competition_id", DETECTION)
@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_are_written_and_the_written_sample_grades(tmp_path, competition_id, layout):
    make_demo_pack(
        out_dir=tmp_path, competition_ids=[competition_id], size="small", n_teams=12, workers=1, layout=layout
    )
    facts = competition_facts(competition_id)
    root = tmp_path / competition_id
    answers = load_answers(root / facts.answers_path if layout == "mlebench" else root / "private" / facts.answers_file)
    sample_dir = "prepared/public" if layout == "mlebench" else "public"
    sample = pd.read_csv(root / sample_dir / facts.sample_submission_file)
    grade(competition_id=competition_id, submission=sample, answers=answers)
    board = pd.read_csv(root / "leaderboard.csv")
    assert len(board) == 12 and board["score"].is_monotonic_decreasing
    gold_file = Path(facts.gold_submission_path).name
    gold = pd.read_csv(root / ("prepared/private" if layout == "mlebench" else "private") / gold_file)
    best = grade(competition_id=competition_id, submission=gold, answers=answers)
    assert best == pytest.approx(1.0, abs=0.01)
    if layout == "portal":
        manifest = json.loads((root / "pack.json").read_text())
        assert manifest["submission_columns"] == list(facts.submission_columns)
