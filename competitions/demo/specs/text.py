"""Specs of the text group: edit distance, word-set Jaccard and TF2-QA answer matching."""

from __future__ import annotations

import numpy as np

from competitions.demo.specs import _text_kinds as kinds
from competitions.demo.specs.base import Spec

SPECS: dict[str, Spec] = {
    "billion-word-imputation": Spec(
        id_format="0..N-1 (test sentences in file order)",
        targets=(kinds.CorruptedText("sentence", kinds.drop_or_swap_word),),
        public_columns=("id", "sentence"),
        build=kinds.billion_words,
    ),
    "bms-molecular-translation": Spec(
        id_format="12 hex digits (image file name stem)",
        targets=(kinds.CorruptedText("InChI", kinds.inchi_typos, sample_value="InChI=1S/H2O/h1H2"),),
        public_columns=("image_id", "InChI"),
        build=kinds.bms,
    ),
    "chaii-hindi-and-tamil-question-answering": Spec(
        id_format="9 hex digits",
        targets=(
            kinds.CorruptedText("PredictionString", kinds.span_slip(kinds.HINDI + kinds.TAMIL), sample_value=np.nan),
        ),
        public_columns=("id", "PredictionString"),
        build=kinds.chaii,
        small_rows=112,
    ),
    "multi-modal-gesture-recognition": Spec(
        id_format="distinct integers (sequence numbers)",
        targets=(kinds.GestureList("Sequence", kinds.gesture_slips),),
        public_columns=("Id", "Sequence"),
        build=kinds.gestures,
        small_rows=100,
    ),
    "tensorflow2-question-answering": Spec(
        id_format="'<example_id>_long' and '<example_id>_short' (example ids are signed 64-bit integers)",
        targets=(kinds.NqAnswers(),),
        public_columns=("example_id", "PredictionString"),
        build=kinds.nq_records,
        small_rows=150,
    ),
    "tweet-sentiment-extraction": Spec(
        id_format="10 hex digits",
        targets=(kinds.TweetSpan(),),
        public_columns=("textID", "selected_text"),
        build=kinds.tweets,
    ),
}
