"""Specs of the regression group: champs, icecube, petfinder, volcanic eruptions, smartphone-decimeter,
OpenVaccine and ventilator."""

from __future__ import annotations

from competitions.demo import fields
from competitions.demo.specs import _regression_kinds as kinds
from competitions.demo.specs.base import Spec
from competitions.demo.targets import Regression

SPECS: dict[str, Spec] = {
    "champs-scalar-coupling": Spec(
        id_format="train.csv row ids (integers), consecutive within a molecule",
        # Couplings of each type have their own scale (1JHC about 95, 3JHH about 5): a weak model knows that much.
        targets=(Regression("scalar_coupling_constant", kinds.unused_sampler, sample_value=0, group_by="type"),),
        public_columns=("id", "scalar_coupling_constant"),
        build=kinds.champs,
    ),
    "icecube-neutrinos-in-deep-ice": Spec(
        id_format="increasing integer event ids",
        targets=(kinds.Direction(),),
        public_columns=("event_id", "azimuth", "zenith"),
        build=kinds.icecube,
    ),
    "petfinder-pawpularity-score": Spec(
        id_format="32 hex digits (photo file name without '.jpg')",
        make_ids=fields.hex_ids(32),
        targets=(Regression("Pawpularity", kinds.pawpularity, sample_value=38),),
        public_columns=("Id", "Pawpularity"),
        extras=kinds.petfinder_extras,
        targets_last=True,
    ),
    "predict-volcanic-eruptions-ingv-oe": Spec(
        id_format="distinct positive integers (segment file names)",
        make_ids=fields.int_ids(low=513_181, high=2_147_483_647),
        targets=(Regression("time_to_eruption", kinds.time_to_eruption, sample_value=0),),
        public_columns=("segment_id", "time_to_eruption"),
    ),
    "smartphone-decimeter-2022": Spec(
        id_format="'<drive date>-US-<route>/<phone>' trip ids; rows matched by position within a trip",
        targets=(kinds.Position(),),
        public_columns=("tripId", "UnixTimeMillis", "LatitudeDegrees", "LongitudeDegrees"),
        build=kinds.smartphone_decimeter,
        small_rows=400,
    ),
    "stanford-covid-vaccine": Spec(
        id_format="'id_<9 hex>_<position>', 107 positions per sequence, the first 68 scored",
        targets=tuple(Regression(name, kinds.unused_sampler, sample_value=0.0) for name in kinds.COVID_TARGETS),
        public_columns=("id_seqpos", *kinds.COVID_TARGETS),
        build=kinds.openvaccine,
        rows=kinds.whole_units(kinds.COVID_LENGTH),
        small_rows=3 * kinds.COVID_LENGTH,
    ),
    "ventilator-pressure-prediction": Spec(
        id_format="train.csv row ids, 80 consecutive ids per breath",
        targets=(Regression("pressure", kinds.unused_sampler, sample_value=0),),
        public_columns=("id", "pressure"),
        build=kinds.ventilator,
        rows=kinds.whole_units(kinds.BREATH_STEPS),
        small_rows=4 * kinds.BREATH_STEPS,
    ),
}
