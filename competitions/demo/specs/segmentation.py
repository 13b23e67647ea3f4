"""Specs of the segmentation competitions: masks as run-length encodings (see ``_segmentation_kinds``).

Image sizes are the real ones where competitions.json gives them (contrails 256 x 256, TGS 101 x 101,
UW-Madison 234-360 px slices in whole case-days, Vesuvius' 7,606 x 5,249 fragment, HuBMAP's whole-slide
images of 16k-39k px sides). Where the full size is a handful of huge images (HuBMAP 3, Vesuvius 1), any
other size gives that many images scaled down 16 or 10 times, so small packs stay small.
"""

from __future__ import annotations

from competitions.demo.specs import _segmentation_kinds as kinds
from competitions.demo.specs.base import Spec

SPECS: dict[str, Spec] = {
    "google-research-identify-contrails-reduce-global-warming": Spec(
        id_format="19-digit record ids in random order; 256 x 256 masks, '-' when empty",
        targets=(kinds.RleMasks("encoded_pixels", "encoded_pixels", "height", "width", empty="-", sample_value="-"),),
        public_columns=("record_id", "encoded_pixels"),
        build=kinds.contrails,
    ),
    "hubmap-kidney-segmentation": Spec(
        id_format="9 hex digits, one whole-slide image each",
        targets=(kinds.RleMasks("predicted", "encoding", "height_pixels", "width_pixels", per_run=True),),
        public_columns=("id", "predicted"),
        build=kinds.hubmap,
        small_rows=2,
    ),
    "tgs-salt-identification-challenge": Spec(
        id_format="10 hex digits, sorted; 101 x 101 masks, an empty cell when there is no salt",
        targets=(kinds.RleMasks("rle_mask", "rle_mask", kinds.TGS_SIDE, kinds.TGS_SIDE, sample_value="1 1"),),
        public_columns=("id", "rle_mask"),
        build=kinds.tgs_salt,
    ),
    "uw-madison-gi-tract-image-segmentation": Spec(
        id_format="'case<N>_day<M>_slice_<KKKK>', 3 rows (large_bowel, small_bowel, stomach) per slice",
        targets=(kinds.RleMasks("predicted", "predicted", "image_height", "image_width"),),
        public_columns=("id", "class", "predicted"),
        build=kinds.uw_madison,
        rows=kinds.uw_rows,
        small_rows=240,
    ),
    "vesuvius-challenge-ink-detection": Spec(
        id_format="fragment letters ('a'); row-major masks",
        targets=(
            kinds.RleMasks(
                "Predicted",
                "Predicted",
                "height",
                "width",
                fast_axis="width",
                empty="",
                per_run=True,
                sample_value="1 1 5 1",
            ),
        ),
        public_columns=("Id", "Predicted"),
        build=kinds.vesuvius,
        small_rows=2,
    ),
}
