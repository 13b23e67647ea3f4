"""Synthetic answers: exact columns, row counts, id formats and dtypes of the real private files."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import expected_rows, generate_answers, split_ids
from competitions.demo.csvio import write_csv
from competitions.demo.vocab import DOG_BREEDS, JIGSAW_LABELS, LEAF_SPECIES, RANZCR_LABELS

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}
LOW = (DATA / "splits" / "low.txt").read_text().split()
SPLIT75 = (DATA / "splits" / "split75.txt").read_text().split()

FOREST = (
    [
        "Id",
        "Elevation",
        "Aspect",
        "Slope",
        "Horizontal_Distance_To_Hydrology",
        "Vertical_Distance_To_Hydrology",
        "Horizontal_Distance_To_Roadways",
        "Hillshade_9am",
        "Hillshade_Noon",
        "Hillshade_3pm",
        "Horizontal_Distance_To_Fire_Points",
    ]
    + [f"Wilderness_Area{i}" for i in range(1, 5)]
    + [f"Soil_Type{i}" for i in range(1, 41)]
    + ["Cover_Type"]
)
# The answers files' headers, as MLE-bench's prepare scripts write them.
ANSWERS_COLUMNS = {
    "aerial-cactus-identification": ["id", "has_cactus"],
    "aptos2019-blindness-detection": ["id_code", "diagnosis"],
    "denoising-dirty-documents": ["id", "value"],
    "detecting-insults-in-social-commentary": ["Insult", "Date", "Comment", "Usage"],
    "dog-breed-identification": ["id", *DOG_BREEDS],
    "dogs-vs-cats-redux-kernels-edition": ["id", "label"],
    "histopathologic-cancer-detection": ["id", "label"],
    "jigsaw-toxic-comment-classification-challenge": ["id", *JIGSAW_LABELS],
    "leaf-classification": ["id", *LEAF_SPECIES],
    "mlsp-2013-birds": ["Id", "Probability"],
    "new-york-city-taxi-fare-prediction": [
        "key",
        "fare_amount",
        "pickup_datetime",
        "pickup_longitude",
        "pickup_latitude",
        "dropoff_longitude",
        "dropoff_latitude",
        "passenger_count",
    ],
    "nomad2018-predict-transparent-conductors": [
        "id",
        "spacegroup",
        "number_of_total_atoms",
        "percent_atom_al",
        "percent_atom_ga",
        "percent_atom_in",
        "lattice_vector_1_ang",
        "lattice_vector_2_ang",
        "lattice_vector_3_ang",
        "lattice_angle_alpha_degree",
        "lattice_angle_beta_degree",
        "lattice_angle_gamma_degree",
        "formation_energy_ev_natom",
        "bandgap_energy_ev",
    ],
    "plant-pathology-2020-fgvc7": ["image_id", "healthy", "multiple_diseases", "rust", "scab"],
    "random-acts-of-pizza": ["request_id", "requester_received_pizza"],
    "ranzcr-clip-catheter-line-classification": ["StudyInstanceUID", *RANZCR_LABELS, "PatientID"],
    "siim-isic-melanoma-classification": ["image_name", "target"],
    "spooky-author-identification": ["id", "EAP", "HPL", "MWS"],
    "tabular-playground-series-dec-2021": FOREST,
    "tabular-playground-series-may-2022": ["id", *[f"f_{i:02d}" for i in range(31)], "target"],
    "text-normalization-challenge-english-language": ["id", "after"],
    "text-normalization-challenge-russian-language": ["id", "after"],
    "the-icml-2013-whale-challenge-right-whale-redux": ["clip", "probability"],
}
ID_PATTERNS = {
    "aerial-cactus-identification": r"[0-9a-f]{32}\.jpg",
    "aptos2019-blindness-detection": r"[0-9a-f]{12}",
    "denoising-dirty-documents": r"\d{1,3}_\d{1,3}_\d{1,3}",
    "dog-breed-identification": r"[0-9a-f]{32}",
    "histopathologic-cancer-detection": r"[0-9a-f]{40}",
    "jigsaw-toxic-comment-classification-challenge": r"[0-9a-f]{16}",
    "new-york-city-taxi-fare-prediction": r"20(09|1\d)-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9}",
    "plant-pathology-2020-fgvc7": r"Test_\d+",
    "random-acts-of-pizza": r"t3_[0-9a-z]{5,6}",
    "ranzcr-clip-catheter-line-classification": r"1\.2\.826\.0\.1\.3680043\.8\.498\.\d{10,38}",
    "siim-isic-melanoma-classification": r"ISIC_\d{7}",
    "spooky-author-identification": r"id\d{5}",
    "text-normalization-challenge-english-language": r"\d+_\d+",
    "text-normalization-challenge-russian-language": r"\d+_\d+",
    "the-icml-2013-whale-challenge-right-whale-redux": r"2009033[01]_\d{6}_\d{3}s\d+ms_Test\d+\.aif",
}


def test_the_generators_cover_the_low_split():
    assert split_ids("low") == LOW
    assert set(ANSWERS_COLUMNS) == set(LOW)


@pytest.mark.parametrize("competition_id", LOW)
def test_small_answers_have_the_real_columns_and_the_asked_rows(competition_id):
    data = generate_answers(competition_id=competition_id, size="small", seed=0)
    assert list(data.answers.columns) == ANSWERS_COLUMNS[competition_id]
    assert len(data.answers) == expected_rows(competition_id=competition_id, size="small")
    assert len(data.sample_submission) == len(data.answers)
    id_column = COMPETITIONS[competition_id]["id_column"].split(" ")[0]
    assert data.answers[id_column].is_unique
    assert list(data.sample_submission[id_column]) == list(data.answers[id_column])
    submission_columns = COMPETITIONS[competition_id]["submission_columns"]
    named = [c for c in submission_columns if not c.startswith("<")]
    assert set(named) <= set(data.sample_submission.columns)
    if competition_id in ID_PATTERNS:
        assert data.answers[id_column].astype(str).str.fullmatch(ID_PATTERNS[competition_id]).all()


@pytest.mark.parametrize("competition_id", SPLIT75)
def test_full_size_is_the_real_answers_row_count(competition_id):
    assert (
        expected_rows(competition_id=competition_id, size="full")
        == COMPETITIONS[competition_id]["answers_rows_estimate"]
    )


@pytest.mark.parametrize("competition_id", [c for c in LOW if COMPETITIONS[c]["answers_rows_estimate"] <= 16_000])
def test_full_answers_are_generated_at_the_real_size(competition_id):
    data = generate_answers(competition_id=competition_id, size="full", seed=0)
    assert len(data.answers) == COMPETITIONS[competition_id]["answers_rows_estimate"]


def test_an_int_size_is_rounded_to_whole_recordings_and_images():
    assert len(generate_answers(competition_id="mlsp-2013-birds", size=40, seed=0).answers) == 57
    assert expected_rows(competition_id="denoising-dirty-documents", size=121) == 320
    assert len(generate_answers(competition_id="aerial-cactus-identification", size=57, seed=0).answers) == 57
    with pytest.raises(ValueError):
        expected_rows(competition_id="leaf-classification", size="huge")


def test_denoising_ids_cover_whole_images_row_by_row():
    answers = generate_answers(competition_id="denoising-dirty-documents", size="small", seed=3).answers
    parts = answers["id"].str.split("_", expand=True).astype(int)
    for _, pixels in parts.groupby(0, sort=False):
        height, width = pixels[1].max(), pixels[2].max()
        assert len(pixels) == height * width and width == 20
    assert answers["value"].between(0, 1).all()
    assert np.allclose((answers["value"] * 255).round(), answers["value"] * 255)


def test_special_formats():
    jigsaw = generate_answers(competition_id="jigsaw-toxic-comment-classification-challenge", size=400, seed=1)
    labels = jigsaw.answers[list(JIGSAW_LABELS)]
    unscored = (labels == -1).all(axis=1)
    assert 0.4 < unscored.mean() < 0.75 and ((labels == -1).any(axis=1) == unscored).all()
    for column in JIGSAW_LABELS:
        assert set(labels.loc[~unscored, column]) == {0, 1}

    mlsp = generate_answers(competition_id="mlsp-2013-birds", size="full", seed=1).answers
    assert sorted(set(mlsp["Id"] % 100)) == list(range(19)) and mlsp["Id"].nunique() == 64 * 19

    russian = generate_answers(competition_id="text-normalization-challenge-russian-language", size=500, seed=1)
    assert russian.answers["after"].str.contains("[а-я]").mean() > 0.3
    assert (russian.sample_submission["after"] != russian.answers["after"]).any()

    for competition_id, classes in (
        ("dog-breed-identification", 120),
        ("leaf-classification", 99),
        ("spooky-author-identification", 3),
    ):
        answers = generate_answers(competition_id=competition_id, size="small", seed=1).answers
        onehot = answers.drop(columns="id")
        assert onehot.shape[1] == classes and (onehot.sum(axis=1) == 1).all()

    insults = generate_answers(competition_id="detecting-insults-in-social-commentary", size="small", seed=1)
    assert list(insults.gold_submission.columns) == ["Insult", "Date", "Comment"]
    assert insults.answers["Comment"].str.match('^".*"$').all()
    assert set(insults.answers["Usage"]) == {"PrivateTest", "PublicTest"}
    may = generate_answers(competition_id="tabular-playground-series-may-2022", size="small", seed=1)
    assert list(may.gold_submission.columns) == ["id", "target"]


@pytest.mark.parametrize("competition_id", [c for c in SPLIT75 if COMPETITIONS[c]["answers_file"].endswith(".csv")])
def test_frames_are_what_read_csv_gives_back(competition_id, tmp_path):
    data = generate_answers(competition_id=competition_id, size="small", seed=2)
    quoting = data.spec.csv_quoting
    for name, frame in (("answers", data.answers), ("sample", data.sample_submission)):
        path = tmp_path / f"{name}.csv"
        write_csv(frame, path, quoting=quoting)
        pd.testing.assert_frame_equal(pd.read_csv(path), frame)


def test_answers_are_deterministic_by_seed():
    for competition_id in (
        "ranzcr-clip-catheter-line-classification",
        "text-normalization-challenge-english-language",
    ):
        first = generate_answers(competition_id=competition_id, size="small", seed=7)
        again = generate_answers(competition_id=competition_id, size="small", seed=7)
        other = generate_answers(competition_id=competition_id, size="small", seed=8)
        pd.testing.assert_frame_equal(first.answers, again.answers)
        pd.testing.assert_frame_equal(first.sample_submission, again.sample_submission)
        assert not first.answers.equals(other.answers)


def test_text_normalization_answers_are_quoted_like_mlebench(tmp_path):
    data = generate_answers(competition_id="text-normalization-challenge-english-language", size="small", seed=0)
    path = tmp_path / "answers.csv"
    write_csv(data.answers, path, quoting=data.spec.csv_quoting)
    lines = path.read_text().splitlines()
    assert lines[0] == '"id","after"'
    assert all(re.fullmatch(r'"\d+_\d+","(?:[^"]|"")*"', line) for line in lines[1:])
