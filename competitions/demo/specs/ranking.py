"""Specs of the ranking group: MAP@k (H&M, hotel-id, whale), micro F1 over label sets (facebook-iii, iMet
2020, plant pathology 2021) and lwlrap (freesound 2019)."""

from __future__ import annotations

from competitions.demo import fields
from competitions.demo.specs._ranking_kinds import (
    FREESOUND_LABELS,
    HM_PURCHASES,
    HOTEL_ID,
    IMET_ATTRIBUTES,
    PLANT_LABELS,
    SO_TAGS,
    WHALE_ID,
    facebook_extras,
    hm_answers,
    hotel_answers,
)
from competitions.demo.specs._ranking_vocab import FREESOUND_CLASSES
from competitions.demo.specs.base import Spec

SPECS: dict[str, Spec] = {
    "facebook-recruiting-iii-keyword-extraction": Spec(
        id_format="integer question Ids drawn from Train.csv's 1..6,034,195",
        make_ids=fields.int_ids(low=1, high=6_034_196),
        targets=(SO_TAGS,),
        public_columns=("Id", "Tags"),
        extras=facebook_extras,
        targets_last=True,
    ),
    "freesound-audio-tagging-2019": Spec(
        id_format="8 hex digits + '.wav' (clip file name)",
        make_ids=fields.hex_ids(8, suffix=".wav"),
        targets=(FREESOUND_LABELS,),
        public_columns=("fname", *FREESOUND_CLASSES),
    ),
    "h-and-m-personalized-fashion-recommendations": Spec(
        id_format="64 hex digits (customer_id); the sample submission also lists customers who bought nothing",
        targets=(HM_PURCHASES,),
        public_columns=("customer_id", "prediction"),
        build=hm_answers,
    ),
    "hotel-id-2021-fgvc8": Spec(
        id_format="16 hex digits + '.jpg' (image file name)",
        targets=(HOTEL_ID,),
        public_columns=("image", "hotel_id"),
        build=hotel_answers,
    ),
    "imet-2020-fgvc7": Spec(
        id_format="32 hex digits",
        make_ids=fields.hex_ids(32),
        targets=(IMET_ATTRIBUTES,),
        public_columns=("id", "attribute_ids"),
    ),
    "plant-pathology-2021-fgvc8": Spec(
        id_format="16 hex digits + '.jpg' (image file name)",
        make_ids=fields.hex_ids(16, suffix=".jpg"),
        targets=(PLANT_LABELS,),
        public_columns=("image", "labels"),
    ),
    "whale-categorization-playground": Spec(
        id_format="8 hex digits + '.jpg' (image file name)",
        make_ids=fields.hex_ids(8, suffix=".jpg"),
        targets=(WHALE_ID,),
        public_columns=("Image", "Id"),
    ),
}
