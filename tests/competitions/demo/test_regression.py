"""Synthetic packs of the regression group: real formats, a simulated agent the graders rank sensibly."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import (
    Defect,
    answers_submission,
    expected_rows,
    generate_answers,
    grade,
    make_demo_pack,
    simulate_submission,
)
from competitions.demo.catalog import competition_facts
from competitions.demo.packs import pack_files
from grading.engine.csvio import load_answers, read_submission
from grading.engine.errors import InvalidSubmission

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}

ANSWERS_DTYPES = {
    "champs-scalar-coupling": {
        "id": "int64",
        "molecule_name": "str",
        "atom_index_0": "int64",
        "atom_index_1": "int64",
        "type": "str",
        "scalar_coupling_constant": "float64",
    },
    "icecube-neutrinos-in-deep-ice": {"event_id": "int64", "azimuth": "float64", "zenith": "float64"},
    "petfinder-pawpularity-score": {
        "Id": "str",
        **{
            name: "int64"
            for name in (
                "Subject Focus",
                "Eyes",
                "Face",
                "Near",
                "Action",
                "Accessory",
                "Group",
                "Collage",
                "Human",
                "Occlusion",
                "Info",
                "Blur",
            )
        },
        "Pawpularity": "int64",
    },
    "predict-volcanic-eruptions-ingv-oe": {"segment_id": "int64", "time_to_eruption": "int64"},
    "smartphone-decimeter-2022": {
        "tripId": "str",
        "UnixTimeMillis": "int64",
        "LatitudeDegrees": "float64",
        "LongitudeDegrees": "float64",
    },
    "stanford-covid-vaccine": {
        "id_seqpos": "str",
        **{c: "float64" for c in ("reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C")},
        "keep": "bool",
    },
    "ventilator-pressure-prediction": {
        "id": "int64",
        "breath_id": "int64",
        "R": "int64",
        "C": "int64",
        "time_step": "float64",
        "u_in": "float64",
        "u_out": "int64",
        "pressure": "float64",
    },
}
GROUP = sorted(ANSWERS_DTYPES)
BEST = {cid: 0.0 for cid in GROUP} | {"champs-scalar-coupling": round(math.log(1e-9), 5)}


@pytest.fixture(scope="module")
def small() -> dict:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0) for cid in GROUP}


def graded(competition_id: str, answers: pd.DataFrame, quality: float, seed: int = 1) -> float:
    submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=seed)
    return grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.mark.parametrize("competition_id", GROUP)
def test_small_answers_have_the_private_files_columns_and_dtypes(competition_id, small):
    data = small[competition_id]
    dtypes = {name: str(dtype) for name, dtype in data.answers.dtypes.items()}
    assert dtypes == ANSWERS_DTYPES[competition_id]
    assert len(data.answers) == expected_rows(competition_id=competition_id, size="small")
    assert list(data.sample_submission.columns) == COMPETITIONS[competition_id]["submission_columns"]
    assert data.gold_submission is None  # the gold file is the answers file for all seven


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_answers_are_perfect_the_agent_close_at_quality_one_and_clearly_worse_at_0_2(competition_id, small):
    answers = small[competition_id].answers
    copied = answers_submission(competition_id=competition_id, answers=answers)
    assert grade(competition_id=competition_id, submission=copied, answers=answers) == BEST[competition_id]
    best, low = graded(competition_id, answers, 1.0), graded(competition_id, answers, 0.2)
    assert best > BEST[competition_id]  # an honest model's error: never the answers themselves
    assert low - best > 0.05 * max(abs(best), abs(low))
    scores = [graded(competition_id, answers, q, seed=4) for q in (0.0, 0.3, 0.6, 0.9, 1.0)]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_sample_submission_is_valid(competition_id, small):
    data = small[competition_id]
    score = grade(competition_id=competition_id, submission=data.sample_submission, answers=data.answers)
    assert math.isfinite(score) and score > BEST[competition_id]


def test_id_structures_follow_the_real_data(small):
    covid = small["stanford-covid-vaccine"].answers
    position = covid["id_seqpos"].str.rsplit("_", n=1).str[1].astype(int)
    assert (covid["keep"] == (position < 68)).all() and len(covid) % 107 == 0
    assert covid["id_seqpos"].str.fullmatch(r"id_[0-9a-f]{9}_\d{1,3}").all()
    ventilator = small["ventilator-pressure-prediction"].answers
    assert (ventilator.groupby("breath_id")["id"].count() == 80).all() and ventilator["id"].is_monotonic_increasing
    assert set(ventilator["u_out"]) == {0, 1}
    trips = small["smartphone-decimeter-2022"].answers["tripId"]
    assert trips.nunique() >= 3 and trips.is_monotonic_increasing
    assert trips.str.fullmatch(r"20\d\d-\d\d-\d\d-US-[A-Z]{3}-\d/\w+").all()
    champs = small["champs-scalar-coupling"].answers
    assert champs["id"].is_unique and champs["molecule_name"].str.fullmatch(r"dsgdb9nsd_\d{6}").all()
    assert expected_rows(competition_id="stanford-covid-vaccine", size="full") == 25_680
    assert expected_rows(competition_id="ventilator-pressure-prediction", size="full") == 603_600
    assert expected_rows(competition_id="icecube-neutrinos-in-deep-ice", size="full") == 13_200_000


def test_defects_follow_each_competitions_rules(small):
    def outcome(cid, defect):
        answers = small[cid].answers
        submission = simulate_submission(competition_id=cid, answers=answers, quality=0.8, seed=2, defects=[defect])
        try:
            return grade(competition_id=cid, submission=submission, answers=answers)
        except InvalidSubmission:
            return "invalid"

    for cid in GROUP:
        assert outcome(cid, Defect.MISSING_ROWS) == "invalid"
        assert outcome(cid, Defect.WRONG_COLUMNS) == "invalid"
    # repeated ids: an inner merge on the id set for champs and volcano
    assert outcome("predict-volcanic-eruptions-ingv-oe", Defect.DUPLICATE_IDS) == "invalid"  # one id missing
    assert outcome("ventilator-pressure-prediction", Defect.DUPLICATE_IDS) == "invalid"
    # NaN: invalid where scored rows are hit, a NaN score for smartphone-decimeter
    assert outcome("icecube-neutrinos-in-deep-ice", Defect.NAN_VALUES) == "invalid"
    assert math.isnan(outcome("smartphone-decimeter-2022", Defect.NAN_VALUES))
    # out of range: petfinder checks [1, 100]; an azimuth beyond 2pi is the same direction
    assert outcome("petfinder-pawpularity-score", Defect.OUT_OF_RANGE) == "invalid"
    assert outcome("icecube-neutrinos-in-deep-ice", Defect.OUT_OF_RANGE) == pytest.approx(
        graded("icecube-neutrinos-in-deep-ice", small["icecube-neutrinos-in-deep-ice"].answers, 0.8, seed=2),
        abs=1e-5,
    )


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_are_written_and_their_files_grade(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=GROUP, size="small", n_teams=12, workers=1, layout=layout)
    for cid in GROUP:
        files = pack_files(facts=competition_facts(cid), layout=layout)
        folder = tmp_path / cid
        answers = load_answers(folder / files["answers"])
        sample = read_submission(folder / files["sample_submission"], max_bytes=1 << 26, max_line_bytes=1 << 20)
        expected = generate_answers(competition_id=cid, size="small", seed=0)
        pd.testing.assert_frame_equal(answers, expected.answers, check_dtype=True)
        assert grade(competition_id=cid, submission=sample, answers=answers) == grade(
            competition_id=cid, submission=expected.sample_submission, answers=expected.answers
        )
        board = pd.read_csv(folder / "leaderboard.csv")
        assert len(board) == 12 and np.all(np.diff(board["score"]) >= 0)  # lower is better for all seven
        if layout == "mlebench":
            assert (folder / COMPETITIONS[cid]["answers_file"]).is_file()
