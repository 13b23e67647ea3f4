"""Specs of the 22 Low-tier (Lite) competitions."""

from __future__ import annotations

import numpy as np

from competitions.demo import fields, hooks, vocab
from competitions.demo.specs.base import Spec, binary
from competitions.demo.targets import Binary, Labels, MultiLabel, OneHot, Regression, Text

_DOGS = OneHot(vocab.DOG_BREEDS)
_LEAVES = OneHot(vocab.LEAF_SPECIES)

SPECS: dict[str, Spec] = {
    "aerial-cactus-identification": binary(
        "id",
        fields.hex_ids(32, suffix=".jpg"),
        "has_cactus",
        0.75,
        id_format="32 hex digits + '.jpg' (image file name)",
    ),
    "aptos2019-blindness-detection": Spec(
        id_format="12 hex digits",
        make_ids=fields.hex_ids(12),
        targets=(Labels("diagnosis", (0, 1, 2, 3, 4), (0.49, 0.10, 0.27, 0.05, 0.08), sample_value=0),),
        public_columns=("id_code", "diagnosis"),
    ),
    "denoising-dirty-documents": Spec(
        id_format="'<image>_<row>_<col>' pixel ids (1-based), whole images of 540 columns",
        make_ids=hooks.denoising_ids,
        targets=(Regression("value", hooks.pixel_values, sample_value=1),),
        public_columns=("id", "value"),
        rows=hooks.denoising_rows,
        small_rows=320,
    ),
    "detecting-insults-in-social-commentary": Spec(
        id_format="the comment text itself (quoted, unique)",
        targets=(Binary("Insult", 0.26, sample_value=0),),
        public_columns=("Insult", "Date", "Comment"),
        build=hooks.insults,
    ),
    "dog-breed-identification": Spec(
        id_format="32 hex digits",
        make_ids=fields.hex_ids(32),
        targets=(_DOGS,),
        public_columns=("id", *vocab.DOG_BREEDS),
    ),
    "dogs-vs-cats-redux-kernels-edition": binary(
        "id", fields.sequential_ids(start=1), "label", 0.5, id_format="1..N (test images renumbered)"
    ),
    "histopathologic-cancer-detection": binary(
        "id", fields.hex_ids(40), "label", 0.405, sample=0, id_format="40 hex digits"
    ),
    "jigsaw-toxic-comment-classification-challenge": Spec(
        id_format="16 hex digits; about 58% of rows are unscored (-1 in every label)",
        make_ids=fields.hex_ids(16),
        targets=(MultiLabel(vocab.JIGSAW_LABELS, vocab.JIGSAW_PREVALENCE, unscored_fraction=0.582),),
        public_columns=("id", *vocab.JIGSAW_LABELS),
    ),
    "leaf-classification": Spec(
        id_format="distinct integers from 1..1584",
        make_ids=fields.int_ids(low=1, high=1585),
        targets=(_LEAVES,),
        public_columns=("id", *vocab.LEAF_SPECIES),
        small_rows=99,
    ),
    "mlsp-2013-birds": Spec(
        id_format="rec_id * 100 + species_id (19 species, 0-18)",
        make_ids=hooks.mlsp_ids,
        targets=(Binary("Probability", 0.08, sample_value=0),),
        public_columns=("Id", "Probability"),
        rows=hooks.mlsp_rows,
        small_rows=19 * 16,
    ),
    "new-york-city-taxi-fare-prediction": Spec(
        id_format="'YYYY-MM-DD HH:MM:SS.<9 digits>' keys",
        make_ids=fields.taxi_keys,
        targets=(Regression("fare_amount", hooks.taxi_fares, sample_value=11.35),),
        public_columns=("key", "fare_amount"),
        extras=hooks.taxi_extras,
    ),
    "nomad2018-predict-transparent-conductors": Spec(
        id_format="1..N in file order (graded by row position)",
        make_ids=fields.sequential_ids(start=1),
        targets=(
            Regression("formation_energy_ev_natom", hooks.formation_energy, sample_value=0.1779),
            Regression("bandgap_energy_ev", hooks.bandgap_energy, sample_value=1.8892),
        ),
        public_columns=("id", "formation_energy_ev_natom", "bandgap_energy_ev"),
        extras=hooks.nomad_extras,
        targets_last=True,
        small_rows=240,
    ),
    "plant-pathology-2020-fgvc7": Spec(
        id_format="'Test_<i>'",
        make_ids=fields.labelled_ids("Test_{i}"),
        targets=(OneHot(vocab.PLANT_LABELS, (0.28, 0.05, 0.34, 0.33)),),
        public_columns=("image_id", *vocab.PLANT_LABELS),
        small_rows=183,
    ),
    "random-acts-of-pizza": binary(
        "request_id",
        fields.reddit_ids,
        "requester_received_pizza",
        0.25,
        sample=0,
        id_format="'t3_' + 5-6 base-36 characters",
    ),
    "ranzcr-clip-catheter-line-classification": Spec(
        id_format="DICOM UIDs '1.2.826.0.1.3680043.8.498.<digits>'",
        make_ids=fields.dicom_uids,
        targets=(
            MultiLabel(vocab.RANZCR_LABELS, vocab.RANZCR_PREVALENCE, predicted=vocab.RANZCR_SCORED, sample_value=0),
        ),
        public_columns=("StudyInstanceUID", *vocab.RANZCR_SCORED),
        extras=hooks.ranzcr_extras,
    ),
    "siim-isic-melanoma-classification": binary(
        "image_name",
        fields.prefixed_ids("ISIC_", low=0, high=9_999_999, width=7),
        "target",
        0.018,
        sample=0,
        id_format="'ISIC_' + 7 digits",
    ),
    "spooky-author-identification": Spec(
        id_format="'id' + 5 digits",
        make_ids=fields.prefixed_ids("id", low=0, high=100_000, width=5),
        targets=(
            OneHot(
                vocab.SPOOKY_AUTHORS,
                (0.403, 0.288, 0.309),
                sample_values=(0.403493538995863, 0.287808366106543, 0.308698094897594),
            ),
        ),
        public_columns=("id", *vocab.SPOOKY_AUTHORS),
    ),
    "tabular-playground-series-dec-2021": Spec(
        id_format="distinct integers from 0..3,999,999",
        make_ids=fields.int_ids(low=0, high=4_000_000),
        targets=(
            Labels(
                "Cover_Type",
                (1, 2, 3, 4, 5, 6, 7),
                (0.3669, 0.5656, 0.0489, 0.0001, 0.0001, 0.0028, 0.0156),
                sample_value=2,
            ),
        ),
        public_columns=("Id", "Cover_Type"),
        extras=hooks.forest_extras,
        targets_last=True,
    ),
    "tabular-playground-series-may-2022": Spec(
        id_format="consecutive integers after the 800,000 training ids",
        make_ids=lambda rng, n: rng.permutation(np.arange(800_000, 800_000 + n, dtype=np.int64)),
        targets=(Binary("target", 0.486),),
        public_columns=("id", "target"),
        extras=hooks.tps_may_extras,
        targets_last=True,
    ),
    "text-normalization-challenge-english-language": Spec(
        id_format="'<sentence_id>_<token_id>'",
        targets=(Text("after"),),
        public_columns=("id", "after"),
        build=hooks.text_normalization(vocab.EN_TOKENS),
        csv_quoting="nonnumeric",
    ),
    "text-normalization-challenge-russian-language": Spec(
        id_format="'<sentence_id>_<token_id>'",
        targets=(Text("after"),),
        public_columns=("id", "after"),
        build=hooks.text_normalization(vocab.RU_TOKENS),
        csv_quoting="nonnumeric",
    ),
    "the-icml-2013-whale-challenge-right-whale-redux": binary(
        "clip",
        fields.whale_clips,
        "probability",
        0.18,
        sample=0,
        id_format="'YYYYMMDD_HHMMSS_<sss>s<t>ms_Test<i>.aif' clip file names",
    ),
}
