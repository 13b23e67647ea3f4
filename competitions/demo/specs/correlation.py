"""Specs of the correlation group: AI4Code, google-quest-challenge, nfl-player-contact-detection,
osic-pulmonary-fibrosis-progression and us-patent-phrase-to-phrase-matching."""

from __future__ import annotations

from competitions.demo import fields
from competitions.demo.specs import _correlation_kinds as kinds
from competitions.demo.specs.base import Spec
from competitions.demo.targets import Labels, Regression

SPECS: dict[str, Spec] = {
    "AI4Code": Spec(
        id_format="14 hex digits (notebook ids); cell_order lists 8-hex-digit cell ids separated by spaces",
        targets=(kinds.CellOrder(),),
        public_columns=("id", "cell_order"),
        build=kinds.ai4code,
    ),
    "google-quest-challenge": Spec(
        id_format="distinct integer qa_ids from the training set",
        make_ids=fields.int_ids(low=0, high=9_650),
        targets=(kinds.Ratings(),),
        public_columns=("qa_id", *kinds.QUEST_TARGETS),
    ),
    "nfl-player-contact-detection": Spec(
        id_format="'<game>_<play>_<step>_<player 1>_<player 2 or G>' (G: contact with the ground)",
        targets=(Labels("contact", (0, 1), (0.9875, 0.0125), sample_value=0),),
        public_columns=("contact_id", "contact"),
        build=kinds.nfl_contacts,
    ),
    "osic-pulmonary-fibrosis-progression": Spec(
        id_format="'<Patient>_<Weeks>' for every patient and every week from -12 to 93",
        targets=(kinds.FvcWithConfidence(),),
        public_columns=("Patient_Week", "FVC", "Confidence"),
        build=kinds.osic,
        rows=kinds.osic_rows,
    ),
    "us-patent-phrase-to-phrase-matching": Spec(
        id_format="16 hex digits",
        make_ids=fields.hex_ids(16),
        targets=(Regression("score", kinds.patent_scores, sample_value=0),),
        public_columns=("id", "score"),
        extras=kinds.patent_extras,
        targets_last=True,
    ),
}
