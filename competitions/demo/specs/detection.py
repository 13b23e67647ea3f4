"""Specs of the object-detection group: 3D boxes (Lyft), chest X-ray boxes (SIIM, VinBigData), Kuzushiji."""

from __future__ import annotations

from competitions.demo.specs import _detection_kinds as kinds
from competitions.demo.specs.base import Spec

SPECS: dict[str, Spec] = {
    "3d-object-detection-for-autonomous-vehicles": Spec(
        id_format="64 hex digits (lidar sample tokens); objects '1.0 x y z width length height yaw class'",
        targets=(kinds.LyftBoxes(),),
        public_columns=("Id", "PredictionString"),
        build=kinds.lyft_answers,
        small_rows=120,
    ),
    "siim-covid19-detection": Spec(
        id_format="12 hex digits + '_study' (study label) or '_image' (opacity boxes or 'none')",
        targets=(kinds.SiimObjects(),),
        public_columns=("id", "PredictionString"),
        build=kinds.siim_answers,
        small_rows=200,
    ),
    "vinbigdata-chest-xray-abnormalities-detection": Spec(
        id_format="32 hex digits (one answers row per image and class, 'No finding' = class 14, box 0 0 1 1)",
        targets=(kinds.VinBigBoxes(),),
        public_columns=("image_id", "PredictionString"),
        build=kinds.vinbig_answers,
        small_rows=240,
    ),
    "kuzushiji-recognition": Spec(
        id_format="'<book>_<page>' or '<book>-<page>' page ids; boxes 'U+XXXX x y width height'",
        targets=(kinds.KuzushijiPoints(),),
        public_columns=("image_id", "labels"),
        build=kinds.kuzushiji_answers,
        small_rows=40,
    ),
}
