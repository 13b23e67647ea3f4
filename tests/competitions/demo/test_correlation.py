"""Synthetic packs of the correlation group: AI4Code, google-quest-challenge, nfl-player-contact-detection,
osic-pulmonary-fibrosis-progression and us-patent-phrase-to-phrase-matching."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import expected_rows, generate_answers, make_demo_pack
from competitions.demo.agent import Defect, answers_submission, simulate_submission
from competitions.demo.csvio import write_csv
from competitions.demo.leaderboard import grade, grading_subset
from competitions.packs import find_packs
from grading.engine.csvio import load_answers, read_answers
from grading.engine.errors import InvalidSubmission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}
QUEST_TARGETS = json.loads((DATA / "graders.json").read_text())["google-quest-challenge"]["params"]["target_columns"]

GROUP = [
    "AI4Code",
    "google-quest-challenge",
    "nfl-player-contact-detection",
    "osic-pulmonary-fibrosis-progression",
    "us-patent-phrase-to-phrase-matching",
]
ANSWERS_DTYPES = {
    "AI4Code": {"id": "str", "cell_order": "str"},
    "google-quest-challenge": {"qa_id": "int64", **{c: "float64" for c in QUEST_TARGETS}},
    "nfl-player-contact-detection": {
        "contact_id": "str",
        "game_play": "str",
        "datetime": "str",
        "step": "int64",
        "nfl_player_id_1": "int64",
        "nfl_player_id_2": "str",
        "contact": "int64",
    },
    "osic-pulmonary-fibrosis-progression": {
        "Patient": "str",
        "Weeks": "int64",
        "FVC": "float64",
        "Percent": "float64",
        "Age": "int64",
        "Sex": "str",
        "SmokingStatus": "str",
        "Patient_Week": "str",
        "Confidence": "int64",
    },
    "us-patent-phrase-to-phrase-matching": {
        "id": "str",
        "anchor": "str",
        "target": "str",
        "context": "str",
        "score": "float64",
    },
}
BEST = {cid: 1.0 for cid in GROUP} | {"osic-pulmonary-fibrosis-progression": round(-math.log(70 * math.sqrt(2)), 5)}


def _read_back(frame: pd.DataFrame, tmp_path: Path, name: str) -> pd.DataFrame:
    write_csv(frame, tmp_path / name)
    return read_answers(tmp_path / name)


@pytest.fixture(scope="module")
def small() -> dict[str, pd.DataFrame]:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0) for cid in GROUP}


@pytest.mark.parametrize("competition_id", GROUP)
def test_small_answers_have_the_private_files_columns_and_dtypes(small, competition_id, tmp_path):
    data = small[competition_id]
    assert len(data.answers) == expected_rows(competition_id=competition_id, size="small")
    assert data.gold_submission is None
    read = _read_back(data.answers, tmp_path, "answers.csv")
    assert {c: str(t) for c, t in read.dtypes.items()} == ANSWERS_DTYPES[competition_id]
    sample = _read_back(data.sample_submission, tmp_path, "sample.csv")
    assert list(sample.columns) == COMPETITIONS[competition_id]["submission_columns"] or competition_id == (
        "google-quest-challenge"
    )
    id_column = COMPETITIONS[competition_id]["id_column"]
    assert read[id_column].is_unique


def test_the_formats_of_ids_and_values(small):
    ai4code = small["AI4Code"].answers
    assert ai4code["id"].str.fullmatch(r"[0-9a-f]{14}").all()
    cells = ai4code["cell_order"].str.split()
    assert all(len(c) >= 2 and len(set(c)) == len(c) for c in cells)
    assert all(re.fullmatch(r"[0-9a-f]{8}", cell) for c in cells for cell in c)
    quest = small["google-quest-challenge"]
    assert list(quest.sample_submission.columns) == ["qa_id", *QUEST_TARGETS]
    assert all(quest.answers[c].nunique() >= 2 for c in QUEST_TARGETS)  # no constant column
    nfl = small["nfl-player-contact-detection"].answers
    rebuilt = (nfl["game_play"] + "_" + nfl["step"].astype(str) + "_" + nfl["nfl_player_id_1"].astype(str) + "_") + nfl[
        "nfl_player_id_2"
    ].astype(str)
    assert (rebuilt == nfl["contact_id"]).all() and (nfl["nfl_player_id_2"] == "G").any()
    assert nfl["datetime"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").all()
    osic = small["osic-pulmonary-fibrosis-progression"].answers
    assert (osic["Patient_Week"] == osic["Patient"] + "_" + osic["Weeks"].astype(str)).all()
    assert osic.groupby("Patient")["FVC"].count().min() >= 3 and osic["FVC"].isna().any()
    patent = small["us-patent-phrase-to-phrase-matching"].answers
    assert set(patent["score"]) <= {0.0, 0.25, 0.5, 0.75, 1.0}


def test_full_sizes_follow_competitions_json():
    for cid in GROUP:
        assert expected_rows(competition_id=cid, size="full") == COMPETITIONS[cid]["answers_rows_estimate"]


@pytest.mark.parametrize("competition_id", GROUP)
def test_quality_orders_the_scores(small, competition_id, tmp_path):
    answers = _read_back(small[competition_id].answers, tmp_path, "answers.csv")
    scores = {}
    for quality in (0.0, 0.2, 1.0):
        submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=4)
        scores[quality] = grade(
            competition_id=competition_id,
            submission=_read_back(submission, tmp_path, "s.csv"),
            answers=answers,
        )
    copied = answers_submission(competition_id=competition_id, answers=answers)
    assert (
        grade(competition_id=competition_id, submission=_read_back(copied, tmp_path, "a.csv"), answers=answers)
        == (BEST[competition_id])
    )
    assert scores[0.2] < scores[1.0] - 0.1 and scores[1.0] <= BEST[competition_id]  # honest: at most the best
    assert scores[0.0] <= scores[0.2]  # small answers: a few known rows may change nothing


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_sample_submission_is_valid(small, competition_id, tmp_path):
    answers = _read_back(small[competition_id].answers, tmp_path, "answers.csv")
    sample = _read_back(small[competition_id].sample_submission, tmp_path, "sample.csv")
    score = grade(competition_id=competition_id, submission=sample, answers=answers)
    # Constant samples (all-zero ratings and scores) give NaN, a valid score, as in MLE-bench.
    assert math.isnan(score) == (competition_id in ("google-quest-challenge", "us-patent-phrase-to-phrase-matching"))


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_grader_works_on_a_leaderboard_subset(competition_id):
    data = generate_answers(competition_id=competition_id, size=2600, seed=1)
    subset = grading_subset(competition_id=competition_id, answers=data.answers, rows=2000, seed=0)
    submission = simulate_submission(competition_id=competition_id, answers=subset, quality=0.7, seed=2)
    score = grade(competition_id=competition_id, submission=submission, answers=subset)
    assert np.isfinite(score) and score < BEST[competition_id]


@pytest.mark.parametrize(
    "competition_id", ["AI4Code", "nfl-player-contact-detection", "us-patent-phrase-to-phrase-matching"]
)
def test_defects_make_the_submission_invalid(small, competition_id):
    answers = small[competition_id].answers
    for defect in (Defect.MISSING_ROWS, Defect.DUPLICATE_IDS, Defect.WRONG_COLUMNS):
        broken = simulate_submission(
            competition_id=competition_id, answers=answers, quality=0.9, seed=1, defects=[defect]
        )
        with pytest.raises(InvalidSubmission):
            grade(competition_id=competition_id, submission=broken, answers=answers)
    if competition_id == "AI4Code":
        unknown = simulate_submission(
            competition_id=competition_id, answers=answers, quality=0.9, seed=1, defects=[Defect.OUT_OF_RANGE]
        )
        with pytest.raises(InvalidSubmission, match="not a cell"):
            grade(competition_id=competition_id, submission=unknown, answers=answers)


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_are_written_and_their_samples_grade(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=GROUP, size="small", n_teams=12, workers=1, layout=layout)
    found = {p.competition_id: p for p in find_packs(tmp_path)}
    assert sorted(found) == sorted(GROUP) and {p.layout for p in found.values()} == {layout}
    for cid in GROUP:
        folder = tmp_path / cid
        prefix = "prepared/" if layout == "mlebench" else ""
        answers = load_answers(folder / prefix / "private" / Path(COMPETITIONS[cid]["answers_file"]).name)
        sample = read_answers(folder / prefix / "public" / Path(COMPETITIONS[cid]["sample_submission_file"]).name)
        grade(competition_id=cid, submission=sample, answers=answers)  # raises if invalid
        board = pd.read_csv(folder / "leaderboard.csv")
        assert len(board) == 12 and board["score"].notna().all()
        first, last = board["score"].iloc[0], board["score"].iloc[-1]
        assert first > last  # every metric of the group is higher-is-better


def test_defects_that_the_reference_lets_through(small):
    # google-quest-challenge compares no ids: a repeated id only moves predictions onto other rows
    quest = small["google-quest-challenge"].answers
    repeated = simulate_submission(
        competition_id="google-quest-challenge",
        answers=quest,
        quality=0.9,
        seed=1,
        defects=[Defect.DUPLICATE_IDS],
    )
    assert np.isfinite(grade(competition_id="google-quest-challenge", submission=repeated, answers=quest))
    # OSIC scores only each patient's last three measured weeks: other weeks may be left out
    osic = small["osic-pulmonary-fibrosis-progression"].answers
    submission = simulate_submission(
        competition_id="osic-pulmonary-fibrosis-progression", answers=osic, quality=0.9, seed=1
    )
    unmeasured = osic["FVC"].isna().to_numpy()
    fewer = submission[~unmeasured].reset_index(drop=True)
    expected = grade(competition_id="osic-pulmonary-fibrosis-progression", submission=submission, answers=osic)
    assert grade(competition_id="osic-pulmonary-fibrosis-progression", submission=fewer, answers=osic) == expected
