"""Synthetic segmentation competitions: answers in the private formats, masks the graders accept, an agent
whose score follows its quality, and packs whose written files grade."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import expected_rows, generate_answers, make_demo_pack, simulate_submission
from competitions.demo.agent import Defect
from competitions.demo.leaderboard import grade
from grading.engine.csvio import load_answers, read_submission
from grading.engine.errors import InvalidSubmission
from grading.engine.graders.segmentation.rle import parse_column

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}

ANSWERS_COLUMNS = {
    "google-research-identify-contrails-reduce-global-warming": [
        "record_id",
        "encoded_pixels",
        "height",
        "width",
    ],
    "hubmap-kidney-segmentation": ["id", "encoding", "width_pixels", "height_pixels"],
    "tgs-salt-identification-challenge": ["id", "rle_mask"],
    "uw-madison-gi-tract-image-segmentation": ["id", "class", "predicted", "image_height", "image_width"],
    "vesuvius-challenge-ink-detection": ["Id", "Predicted", "width", "height"],
}
SEGMENTATION = list(ANSWERS_COLUMNS)


def roundtrip(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


@pytest.fixture(scope="module", params=SEGMENTATION)
def small(request):
    return generate_answers(competition_id=request.param, size="small", seed=0)


def test_small_answers_have_the_private_columns_and_dtypes(small):
    answers = small.answers
    assert list(answers.columns) == ANSWERS_COLUMNS[small.competition_id]
    assert len(answers) == expected_rows(competition_id=small.competition_id, size="small")
    written = roundtrip(answers)
    assert list(written.dtypes) == list(answers.dtypes)
    pd.testing.assert_frame_equal(written, pd.DataFrame(answers), check_dtype=True)
    assert list(small.sample_submission.columns) == COMPETITIONS[small.competition_id]["submission_columns"]


def test_every_answers_mask_is_a_valid_encoding_inside_its_image(small):
    answers = small.answers
    column = next(
        c for c in answers.columns if c in ("encoded_pixels", "encoding", "rle_mask", "predicted", "Predicted")
    )
    runs = parse_column(answers[column], column=column, empty_token="-")
    if small.competition_id == "tgs-salt-identification-challenge":
        sizes = np.full(len(answers), 101 * 101)
    else:
        height, width = (c for c in answers.columns if "height" in c or "width" in c)
        sizes = answers[height].to_numpy() * answers[width].to_numpy()
    assert (runs.ends <= np.repeat(sizes, runs.counts)).all()
    drawn = (runs.counts > 0).mean()
    if small.competition_id in ("hubmap-kidney-segmentation", "vesuvius-challenge-ink-detection"):
        assert drawn == 1.0  # whole slides and fragments always hold some glomeruli or ink
    else:
        assert 0.2 < drawn < 0.9  # many images or organs have nothing to mark


def test_the_agent_scores_by_quality_and_the_sample_is_valid(small):
    cid, answers = small.competition_id, small.answers
    scores = [
        grade(
            competition_id=cid,
            submission=roundtrip(simulate_submission(competition_id=cid, answers=answers, quality=q, seed=3)),
            answers=answers,
        )
        for q in (0.0, 0.2, 0.6, 1.0)
    ]
    assert scores[-1] == 1.0
    assert scores[0] <= scores[1] < scores[2] < scores[3]
    assert scores[1] < 0.8
    grade(competition_id=cid, submission=roundtrip(small.sample_submission), answers=answers)
    if small.gold_submission is not None:
        assert grade(competition_id=cid, submission=roundtrip(small.gold_submission), answers=answers) == 1.0


def test_broken_masks_are_refused(small):
    cid = small.competition_id
    broken = simulate_submission(
        competition_id=cid, answers=small.answers, quality=0.9, seed=1, defects=[Defect.OUT_OF_RANGE]
    )
    with pytest.raises(InvalidSubmission, match="starts count pixels from 1"):
        grade(competition_id=cid, submission=roundtrip(broken), answers=small.answers)


def test_empty_cells_are_empty_masks_or_invalid_as_the_competition_says(small):
    cid = small.competition_id
    blanked = simulate_submission(
        competition_id=cid, answers=small.answers, quality=1.0, seed=1, defects=[Defect.NAN_VALUES]
    )
    if cid in (
        "google-research-identify-contrails-reduce-global-warming",
        "vesuvius-challenge-ink-detection",
    ):
        with pytest.raises(InvalidSubmission, match="empty cell"):
            grade(competition_id=cid, submission=roundtrip(blanked), answers=small.answers)
    else:
        assert grade(competition_id=cid, submission=roundtrip(blanked), answers=small.answers) <= 1.0


def test_the_full_sizes_are_competitions_json_row_counts():
    for cid in SEGMENTATION:
        assert expected_rows(competition_id=cid, size="full") == COMPETITIONS[cid]["answers_rows_estimate"]


def test_full_size_images_have_the_real_sizes():
    tgs = generate_answers(competition_id="tgs-salt-identification-challenge", size="full", seed=0).answers
    assert len(tgs) == 1000 and 0.3 < tgs["rle_mask"].isna().mean() < 0.5
    assert tgs["id"].is_monotonic_increasing
    ink = generate_answers(competition_id="vesuvius-challenge-ink-detection", size="full", seed=0).answers
    assert ink[["Id", "width", "height"]].to_dict("records") == [{"Id": "a", "width": 5249, "height": 7606}]
    contrails = generate_answers(
        competition_id="google-research-identify-contrails-reduce-global-warming", size=40, seed=0
    ).answers
    assert (contrails[["height", "width"]] == 256).all().all()
    assert contrails["record_id"].between(10**18, 2**63 - 1).all()


def test_uw_rows_come_in_whole_slices_of_three_organs():
    answers = generate_answers(competition_id="uw-madison-gi-tract-image-segmentation", size=100, seed=0).answers
    assert len(answers) == 102
    assert answers["class"].tolist()[:3] == ["large_bowel", "small_bowel", "stomach"]
    assert (answers["id"].to_numpy()[0::3] == answers["id"].to_numpy()[2::3]).all()
    assert answers["id"].str.fullmatch(r"case\d+_day\d+_slice_\d{4}").all()


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_write_files_that_grade(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=SEGMENTATION, size="small", n_teams=12, workers=1, layout=layout)
    for cid in SEGMENTATION:
        entry = COMPETITIONS[cid]
        folder = tmp_path / cid
        if layout == "portal":
            manifest = json.loads((folder / "pack.json").read_text())
            answers_path, sample_path = folder / manifest["answers"], folder / manifest["sample_submission"]
            gold_path = folder / manifest["gold_submission"]
        else:
            answers_path, sample_path = (
                folder / entry["answers_file"],
                folder / entry["sample_submission_file"],
            )
            gold_path = folder / entry["gold_submission_file"]
        answers = load_answers(answers_path)
        assert list(answers.columns) == ANSWERS_COLUMNS[cid]
        limits = {"max_bytes": 1 << 30, "max_line_bytes": 1 << 30}
        grade(competition_id=cid, submission=read_submission(sample_path, **limits), answers=answers)
        assert grade(competition_id=cid, submission=read_submission(gold_path, **limits), answers=answers) == 1.0
        board = pd.read_csv(folder / "leaderboard.csv")
        assert len(board) == 12 and board["score"].notna().all()
