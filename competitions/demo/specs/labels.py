"""Specs of the class-label competitions: accuracy, top-1 error, macro F1 and quadratic weighted kappa."""

from __future__ import annotations

from competitions.demo import fields
from competitions.demo.specs._labels_kinds import (
    LongTailLabels,
    TextLabels,
    camera_trap_uuids,
    cassava_images,
    essay_text,
    sequential_class_ids,
    spaced_class_ids,
    speech_clips,
)
from competitions.demo.specs.base import Spec
from competitions.demo.targets import Labels

_SPEECH_CORE = "yes no up down left right on off stop go zero one two three four five six seven eight nine"
_SPEECH_AUXILIARY = "bed bird cat dog happy house marvin sheila tree wow"
# MLE-bench's test labels are the training folder names (README known issue: the label range is wider than
# Kaggle's 12 submission labels); _background_noise_ holds 6 of the 64,727 files.
_SPEECH_WORDS = (*_SPEECH_CORE.split(), *_SPEECH_AUXILIARY.split(), "_background_noise_")
_SPEECH_SHARES = (2370.0,) * 20 + (1730.0,) * 10 + (6.0,)

_IWILDCAM_2019_CLASSES = (0, 1, 3, 4, 5, 8, 10, 11, 13, 14, 16, 17, 18, 19, 22)
_IWILDCAM_2019_SHARES = (
    0.60,
    0.05,
    0.04,
    0.03,
    0.02,
    0.03,
    0.08,
    0.02,
    0.02,
    0.01,
    0.04,
    0.02,
    0.02,
    0.01,
    0.01,
)


def _herbarium(*, classes: int, full_rows: int, images: int) -> Spec:
    return Spec(
        id_format=f"distinct image ids from 0..{images - 1:,}; Predicted is an integer category id",
        make_ids=fields.int_ids(low=0, high=images),
        targets=(LongTailLabels("Predicted", sequential_class_ids, classes=classes, full_rows=full_rows),),
        public_columns=("Id", "Predicted"),
    )


SPECS: dict[str, Spec] = {
    "cassava-leaf-disease-classification": Spec(
        id_format="'<integer>.jpg' image file names; label is 0-4",
        make_ids=cassava_images,
        targets=(Labels("label", (0, 1, 2, 3, 4), (0.051, 0.102, 0.112, 0.615, 0.120), sample_value=4),),
        public_columns=("image_id", "label"),
    ),
    "cdiscount-image-classification-challenge": Spec(
        id_format="0..N-1 (test products renumbered from 0); category_id is a 10-digit category",
        make_ids=fields.sequential_ids(start=0),
        targets=(
            LongTailLabels(
                "category_id",
                spaced_class_ids(low=1_000_000_000, high=1_000_020_000, total=5_270, seed=5_270),
                classes=5_270,
                full_rows=706_990,
                spread=1.5,
                sample_value=1_000_016_018,
            ),
        ),
        public_columns=("_id", "category_id"),
    ),
    "herbarium-2020-fgvc7": _herbarium(classes=32_093, full_rows=219_124, images=1_030_747),
    "herbarium-2021-fgvc8": _herbarium(classes=64_500, full_rows=477_000, images=2_257_759),
    "herbarium-2022-fgvc9": _herbarium(classes=15_501, full_rows=174_000, images=839_772),
    "inaturalist-2019-fgvc6": Spec(
        id_format="distinct image ids from 0..265,212; predicted is a category id 0-1009",
        make_ids=fields.int_ids(low=0, high=265_213),
        targets=(LongTailLabels("predicted", sequential_class_ids, classes=1_010, full_rows=32_300, spread=0.8),),
        public_columns=("id", "predicted"),
    ),
    "iwildcam-2019-fgvc6": Spec(
        id_format="camera-trap image UUIDs such as 'b005e5b2-2c0b-11e9-bcad-06f10d5896c4'",
        make_ids=camera_trap_uuids("11e9"),
        targets=(Labels("Category", _IWILDCAM_2019_CLASSES, _IWILDCAM_2019_SHARES, sample_value=0),),
        public_columns=("Id", "Category"),
    ),
    "iwildcam-2020-fgvc7": Spec(
        id_format="camera-trap image UUIDs such as '8b31d3c0-21bc-11ea-a13a-137349068a90'",
        make_ids=camera_trap_uuids("11ea"),
        targets=(
            LongTailLabels(
                "Category",
                spaced_class_ids(low=0, high=676, total=216, seed=2020),
                classes=216,
                full_rows=60_760,
                spread=2.0,
            ),
        ),
        public_columns=("Id", "Category"),
    ),
    "learning-agency-lab-automated-essay-scoring-2": Spec(
        id_format="7 hex digits; score is 1-6",
        make_ids=fields.hex_ids(7),
        targets=(Labels("score", (1, 2, 3, 4, 5, 6), (0.072, 0.273, 0.363, 0.228, 0.056, 0.009), sample_value=3),),
        public_columns=("essay_id", "score"),
        extras=essay_text,
        targets_last=True,
    ),
    "tensorflow-speech-recognition-challenge": Spec(
        id_format="'clip_<9 hex digits>.wav'; label is the spoken word (the training folder name)",
        make_ids=speech_clips,
        targets=(TextLabels("label", _SPEECH_WORDS, _SPEECH_SHARES, sample_value="silence"),),
        public_columns=("fname", "label"),
    ),
}
