"""Specs of the probability-metric group: log loss, ROC AUC and its variants, KL divergence, pF1."""

from __future__ import annotations

from competitions.demo import fields
from competitions.demo.specs import _probabilities_kinds as kinds
from competitions.demo.specs.base import Spec, binary
from competitions.demo.targets import Binary, OneHot

_LMSYS = ("winner_model_a", "winner_model_b", "winner_tie")

SPECS: dict[str, Spec] = {
    "alaska2-image-steganalysis": Spec(
        id_format="'0001.jpg' .. numbered test images",
        make_ids=kinds.alaska_ids,
        targets=(Binary("Label", 0.5, sample_value=0),),
        public_columns=("Id", "Label"),
    ),
    "hms-harmful-brain-activity-classification": Spec(
        id_format="integer eeg_id, repeated once per labelled window (the submission repeats it too)",
        targets=(kinds.VoteShares(kinds.HMS_VOTES),),
        public_columns=("eeg_id", *kinds.HMS_VOTES),
        build=kinds.hms_build,
    ),
    "jigsaw-unintended-bias-in-toxicity-classification": Spec(
        id_format="integers from 7,000,000 (comment ids)",
        targets=(kinds.ToxicityScore("toxicity", "prediction"),),
        public_columns=("id", "prediction"),
        build=kinds.jigsaw_bias_build,
        small_rows=600,
    ),
    "lmsys-chatbot-arena": Spec(
        id_format="integer conversation ids",
        make_ids=fields.int_ids(low=30_000, high=4_294_967_295),
        targets=(OneHot(_LMSYS, (0.35, 0.34, 0.31)),),
        public_columns=("id", *_LMSYS),
        extras=kinds.lmsys_extras,
        targets_last=True,
    ),
    "rsna-2022-cervical-spine-fracture-detection": Spec(
        id_format="'{StudyInstanceUID}_{patient_overall|C1..C7}', 8 rows per study",
        targets=(Binary("fractured", 0.2, sample_value=0.5),),
        public_columns=("row_id", "fractured"),
        build=kinds.cervical_build,
        rows=kinds.whole_groups(8),
        small_rows=8 * 40,
    ),
    "rsna-breast-cancer-detection": Spec(
        id_format="'{patient_id}_{L|R}', 2 rows per patient",
        make_ids=kinds.breast_ids,
        targets=(Binary("cancer", 0.021, sample_value=0.021),),
        public_columns=("prediction_id", "cancer"),
        rows=kinds.whole_groups(2),
    ),
    "rsna-miccai-brain-tumor-radiogenomic-classification": Spec(
        id_format="integer BraTS21ID from 0..1010",
        make_ids=fields.int_ids(low=0, high=1011),
        targets=(Binary("MGMT_value", 0.52, sample_value=0.5),),
        public_columns=("BraTS21ID", "MGMT_value"),
        small_rows=59,
    ),
    "seti-breakthrough-listen": binary("id", fields.hex_ids(15), "target", 0.1, sample=0.5, id_format="15 hex digits"),
    "statoil-iceberg-classifier-challenge": binary(
        "id", fields.hex_ids(8), "is_iceberg", 0.47, sample=0.5, id_format="8 hex digits"
    ),
}
