"""Small answers frames in each Lite competition's exact answers format, and helpers to grade them.

Every frame goes through a CSV round trip (``pandas.read_csv`` of the written text), so the graders see the
dtypes a real answers file or submission gets: text columns as pandas' ``str`` dtype, numbers as int64 or
float64, ``True``/``False`` as bool.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grading.engine.errors import InvalidSubmission
from grading.engine.registry import get_grader

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
GRADERS: dict = json.loads((DATA / "graders.json").read_text())
LOW = (DATA / "splits" / "low.txt").read_text().split()


def roundtrip(frame: pd.DataFrame, *, quoting: int = csv.QUOTE_MINIMAL) -> pd.DataFrame:
    """The frame as ``pandas.read_csv`` reads it back from a CSV file."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False, quoting=quoting))).copy()


def csv_frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def grade(competition: str, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    entry = GRADERS[competition]
    return get_grader(entry["grader"])(submission, answers, **entry["params"])


def reject(competition: str, submission: pd.DataFrame, answers: pd.DataFrame, *fragments: str) -> str:
    """Assert the submission is invalid, with every fragment in the message; return the message."""
    with pytest.raises(InvalidSubmission) as caught:
        grade(competition, submission, answers)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{fragment!r} not in {message!r}"
    return message


def params(competition: str) -> dict:
    return GRADERS[competition]["params"]


# ---------------------------------------------------------------------------------------------------
# Answers in each competition's format (competitions.json "answers_format")


def _one_hot(ids, labels, classes, id_column="id") -> pd.DataFrame:
    matrix = np.zeros((len(labels), len(classes)), dtype=int)
    for row, label in enumerate(labels):
        matrix[row, classes.index(label)] = 1
    frame = pd.DataFrame(matrix, columns=classes)
    frame.insert(0, id_column, ids)
    return frame


def answers_for(competition: str) -> pd.DataFrame:
    """A small answers frame in the competition's private answers format."""
    p = params(competition)
    if competition == "aerial-cactus-identification":  # id, has_cactus (0/1)
        frame = pd.DataFrame(
            {
                "id": [
                    f"{h}.jpg"
                    for h in (
                        "0004be2cfeaba1c0",
                        "000c8a36845c0208",
                        "000d1e9a533f62e5",
                        "0011485b40695e9138e92d0b3fb55128",
                        "0014d7a11e90b62848904c1418fc8cf2",
                        "0017c3c18ddd57a2ea6f9848c79d83d2",
                    )
                ],
                "has_cactus": [1, 1, 0, 1, 0, 0],
            }
        )
    elif competition == "aptos2019-blindness-detection":  # id_code, diagnosis (0-4)
        frame = pd.DataFrame(
            {
                "id_code": [
                    "000c1434d8d7",
                    "001639a390f0",
                    "0024cdab0c1e",
                    "002c21358ce6",
                    "005b95c28852",
                    "0083ee8054ee",
                    "0097f532ac9f",
                    "00a8624548a9",
                ],
                "diagnosis": [2, 4, 1, 0, 0, 4, 0, 2],
            }
        )
    elif competition == "denoising-dirty-documents":  # id (image_row_col), value (0-1)
        ids = [f"{image}_{row}_{col}" for image in (1, 10) for row in (1, 2) for col in (1, 2, 3)]
        frame = pd.DataFrame(
            {
                "id": ids,
                "value": [
                    1.0,
                    0.996078,
                    0.992157,
                    0.25098,
                    1.0,
                    0.0,
                    0.87451,
                    0.5,
                    1.0,
                    0.031373,
                    0.988235,
                    1.0,
                ],
            }
        )
    elif competition == "detecting-insults-in-social-commentary":  # Insult, Date, Comment, Usage
        comments = [
            '"You fuck your dad."',
            '"i really don\'t understand your point."',
            '"shut up"',
            '"A\\\\xc2\\\\xa0majority of Canadians can and has been wrong before now."',
            '"shut up"',
            '"listen if you dont wanna get married to a man or a women DONT DO IT."',
        ]
        frame = pd.DataFrame(
            {
                "Insult": [1, 0, 1, 0, 0, 0],
                "Date": [
                    "20120618192155Z",
                    "20120528192215Z",
                    None,
                    "20120619094753Z",
                    "20120620171226Z",
                    "20120503012628Z",
                ],
                "Comment": comments,
                "Usage": ["PrivateTest"] * 3 + ["PublicTest"] * 3,
            }
        )
    elif competition == "dog-breed-identification":  # one-hot, id + 120 breed columns
        classes = p["class_columns"]
        frame = _one_hot(
            [
                "000621fb3cbb32d8935728e48679680e",
                "00102ee9d8eb90812350685311fe5890",
                "0012a730dfa437f5f3613fb75efcd4ce",
                "001510bc8570bbeee98c8d80c8a95ec1",
            ],
            ["affenpinscher", "beagle", "beagle", "yorkshire_terrier"],
            classes,
        )
    elif competition == "dogs-vs-cats-redux-kernels-edition":  # id (1..N), label (1 = dog)
        frame = pd.DataFrame({"id": [1, 2, 3, 4, 5], "label": [1, 0, 0, 1, 1]})
    elif competition == "histopathologic-cancer-detection":  # id, label
        frame = pd.DataFrame(
            {
                "id": [
                    "f38a6374c348f90b587e046aac6079959adf3835",
                    "c18f2d887b7ae4f6742ee445113fa1aef383ed77",
                    "755db6279dae599ebb4d39a9123cce439965282d",
                    "bc3f0c64fb968ff4a8bd33af6971ecae77c75e08",
                    "068aba587a4950175d04c680d38943fd488d6a9d",
                ],
                "label": [0, 1, 0, 0, 1],
            }
        )
    elif competition == "jigsaw-toxic-comment-classification-challenge":  # id + 6 labels, -1 rows unscored
        labels = [
            [0, 0, 0, 0, 0, 0],
            [1, 0, 1, 0, 1, 0],
            [-1, -1, -1, -1, -1, -1],
            [1, 1, 1, 1, 1, 1],
            [0, 0, 0, 0, 0, 0],
            [-1, -1, -1, -1, -1, -1],
            [1, 0, 0, 0, 1, 1],
            [0, 1, 1, 1, 0, 0],
        ]
        frame = pd.DataFrame(labels, columns=p["target_columns"])
        frame.insert(
            0,
            "id",
            [
                "00001cee341fdb12",
                "0000247867823ef7",
                "00013b17ad220c46",
                "00017563c3f7919a",
                "00017695ad8997eb",
                "0001ea8717f6de06",
                "00024115d4cbde0f",
                "000247e83dcc1211",
            ],
        )
    elif competition == "leaf-classification":  # one-hot, id + 99 species columns
        classes = p["class_columns"]
        frame = _one_hot([4, 7, 9, 12], ["Acer_Opalus", "Quercus_Rubra", "Acer_Opalus", "Zelkova_Serrata"], classes)
    elif competition == "mlsp-2013-birds":  # Id = rec_id*100 + species, Probability (0/1)
        record_ids = [rec * 100 + species for rec in (1, 7) for species in range(19)]
        probability = [0] * len(record_ids)
        for position in (2, 10, 19 + 2, 19 + 18):
            probability[position] = 1
        frame = pd.DataFrame({"Id": record_ids, "Probability": probability})
    elif competition == "new-york-city-taxi-fare-prediction":  # key, fare_amount, coordinates, datetime, passengers
        frame = pd.DataFrame(
            {
                "key": [
                    "2009-06-15 17:26:21.0000001",
                    "2010-01-05 16:52:16.0000002",
                    "2011-08-18 00:35:00.00000049",
                    "2012-04-21 04:30:42.0000001",
                    "2010-03-09 07:51:00.000000135",
                ],
                "fare_amount": [4.5, 16.9, 5.7, 7.7, 5.3],
                "pickup_datetime": [
                    "2009-06-15 17:26:21 UTC",
                    "2010-01-05 16:52:16 UTC",
                    "2011-08-18 00:35:00 UTC",
                    "2012-04-21 04:30:42 UTC",
                    "2010-03-09 07:51:00 UTC",
                ],
                "pickup_longitude": [-73.844311, -74.016048, -73.982738, -73.98713, -73.968095],
                "pickup_latitude": [40.721319, 40.711303, 40.76127, 40.733143, 40.768008],
                "dropoff_longitude": [-73.84161, -73.979268, -73.991242, -73.991567, -73.956655],
                "dropoff_latitude": [40.712278, 40.782004, 40.750562, 40.758092, 40.783762],
                "passenger_count": [1, 1, 2, 1, 1],
            }
        )
    elif competition == "nomad2018-predict-transparent-conductors":  # full rows, id renumbered 1..N
        frame = pd.DataFrame(
            {
                "id": [1, 2, 3, 4],
                "spacegroup": [33, 194, 227, 167],
                "number_of_total_atoms": [80.0, 80.0, 40.0, 30.0],
                "percent_atom_al": [0.625, 0.625, 0.8125, 0.75],
                "lattice_vector_1_ang": [9.9523, 6.184, 9.751, 5.0036],
                "formation_energy_ev_natom": [0.068, 0.249, 0.1821, 0.2172],
                "bandgap_energy_ev": [3.4387, 2.921, 2.7438, 3.3492],
            }
        )
    elif competition == "plant-pathology-2020-fgvc7":  # image_id, healthy, multiple_diseases, rust, scab
        frame = _one_hot(
            [f"Test_{i}" for i in (3, 0, 11, 5, 8, 1)],
            ["healthy", "rust", "scab", "multiple_diseases", "rust", "healthy"],
            p["target_columns"],
            id_column="image_id",
        )
    elif competition == "random-acts-of-pizza":  # request_id, requester_received_pizza (0/1)
        frame = pd.DataFrame(
            {
                "request_id": ["t3_i8iy4", "t3_1mfqi0", "t3_lclka", "t3_1jdgdj", "t3_t2qt4"],
                "requester_received_pizza": [0, 0, 1, 0, 1],
            }
        )
    elif competition == "ranzcr-clip-catheter-line-classification":  # StudyInstanceUID, 11 labels, PatientID
        all_labels = p["target_columns"] + ["CVC - Normal", "Swan Ganz Catheter Present"]
        rng = np.random.default_rng(3)
        matrix = (rng.random((6, 11)) < 0.5).astype(int)
        matrix[0, :] = 1
        matrix[1, :] = 0
        frame = pd.DataFrame(matrix, columns=all_labels)
        frame.insert(
            0,
            "StudyInstanceUID",
            [
                f"1.2.826.0.1.3680043.8.498.{n}"
                for n in (
                    46923145579096002617106567297135160932,
                    84006870176700002541004547853456430458,
                    12219033294413119947515494720687541672,
                    84994474380235968109906845540706092671,
                    35798987793805669662572108881745201372,
                    21302335311153236802526215209893245591,
                )
            ],
        )
        frame["PatientID"] = ["ec89415d1", "bf4c6da3c", "3fc1c97e5", "c31019814", "207685cd1", "a4a1ad1fb"]
    elif competition == "siim-isic-melanoma-classification":  # image_name, target (+ metadata)
        frame = pd.DataFrame(
            {
                "image_name": [
                    "ISIC_2637011",
                    "ISIC_0015719",
                    "ISIC_0052212",
                    "ISIC_0068279",
                    "ISIC_0074268",
                ],
                "patient_id": ["IP_7279968", "IP_3075186", "IP_2842074", "IP_6890425", "IP_8723313"],
                "sex": ["male", "female", "female", None, "female"],
                "age_approx": [45.0, 45.0, 50.0, 45.0, 55.0],
                "target": [0, 1, 0, 0, 1],
            }
        )
    elif competition == "spooky-author-identification":  # one-hot: id, EAP, HPL, MWS
        frame = _one_hot(
            ["id02310", "id24541", "id00134", "id27757", "id04081"],
            ["EAP", "HPL", "MWS", "EAP", "HPL"],
            p["class_columns"],
        )
    elif competition == "tabular-playground-series-dec-2021":  # full rows incl. Cover_Type
        frame = pd.DataFrame(
            {
                "Id": [4000000, 4000001, 4000002, 4000003, 4000004, 4000005],
                "Elevation": [3189, 3026, 3106, 3022, 2906, 3120],
                "Aspect": [40, 182, 13, 276, 186, 28],
                "Cover_Type": [1, 2, 2, 1, 3, 7],
            }
        )
    elif competition == "tabular-playground-series-may-2022":  # full rows incl. target
        frame = pd.DataFrame(
            {
                "id": [900000, 900001, 900002, 900003, 900004],
                "f_00": [-1.373246, 1.697021, 1.681726, -0.118172, 1.148481],
                "f_27": ["ABABDADBAB", "ACACCADCEB", "AAAEABCKAD", "BDBBAACBCB", "BDBCBBCHFE"],
                "target": [0, 1, 1, 0, 1],
            }
        )
    elif competition in (
        "text-normalization-challenge-english-language",
        "text-normalization-challenge-russian-language",
    ):  # id, after (QUOTE_NONNUMERIC)
        words = (
            ["Brillantaisia", "is", "a", "genus", "of", "plant", "in", "family", "Acanthaceae", "."]
            if "english" in competition
            else ["Другие", "способы", "произношения", "sil", "1", "января", "NA", "."]
        )
        frame = pd.DataFrame({"id": [f"{i // 4}_{i % 4}" for i in range(len(words))], "after": words})
        return roundtrip(frame, quoting=csv.QUOTE_NONNUMERIC)
    elif competition == "the-icml-2013-whale-challenge-right-whale-redux":  # clip, probability (0/1)
        frame = pd.DataFrame(
            {
                "clip": [
                    "20090330_000000_015s2ms_Test0.aif",
                    "20090330_000000_020s0ms_Test1.aif",
                    "20090330_000000_025s8ms_Test2.aif",
                    "20090330_000000_028s0ms_Test3.aif",
                ],
                "probability": [0, 1, 0, 1],
            }
        )
    else:
        raise KeyError(competition)
    return roundtrip(frame)


def submission_columns(competition: str) -> list[str]:
    p = params(competition)
    if "class_columns" in p:
        return [p["id_column"], *p["class_columns"]]
    if "target_columns" in p:
        return ([p["id_column"]] if "id_column" in p else ["id"]) + list(p["target_columns"])
    return [p["id_column"], p["target_column"]]


def perfect_submission(competition: str, answers: pd.DataFrame) -> pd.DataFrame:
    """The sample submission's columns filled with the answers (unscored -1 labels become 0)."""
    columns = submission_columns(competition)
    frame = answers[columns].copy()
    if competition.startswith("jigsaw"):
        targets = params(competition)["target_columns"]
        frame[targets] = frame[targets].clip(lower=0)
    return roundtrip(frame)
