"""Target kinds and hooks of the regression group (champs, icecube, petfinder, volcanic eruptions,
smartphone-decimeter, OpenVaccine, ventilator).

Float columns are rounded to at most 10 decimals, so the fast CSV writer reproduces them exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from competitions.demo import fields
from competitions.demo.targets import reflect_into

TAU = 2 * np.pi
EARTH_RADIUS_M = 6_371_000.0


# --- icecube-neutrinos-in-deep-ice ------------------------------------------------------------------
@dataclass(frozen=True)
class Direction:
    """A direction as (azimuth in [0, 2pi), zenith in [0, pi]); noise is a uniformly random direction."""

    azimuth: str = "azimuth"
    zenith: str = "zenith"
    sample_values: tuple[float, float] = (1.0, 1.0)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.azimuth, self.zenith)

    @property
    def sample_value(self) -> dict[str, float]:
        return dict(zip(self.columns, self.sample_values))

    @staticmethod
    def _draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Uniform on the sphere, computed in place (13.2 million rows at full size)."""
        azimuth = rng.random(n)
        azimuth *= TAU
        zenith = rng.random(n)
        zenith *= -2.0
        zenith += 1.0
        np.arccos(zenith, out=zenith)
        return azimuth, zenith

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        azimuth, zenith = self._draw(rng, n)
        np.round(azimuth, 10, out=azimuth)
        np.round(zenith, 10, out=zenith)
        return {self.azimuth: azimuth, self.zenith: zenith}

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known = rng.random(n) < quality
        azimuth, zenith = self._draw(rng, n)
        return {
            self.azimuth: np.where(known, truth[self.azimuth].to_numpy(dtype=float), azimuth),
            self.zenith: np.where(known, truth[self.zenith].to_numpy(dtype=float), zenith),
        }

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        """Both angles off by about 0.05 rad, the azimuth wrapped into [0, 2pi), the zenith mirrored into [0, pi]."""
        n = len(truth)
        azimuth = np.mod(predicted[self.azimuth] + rng.normal(0.0, 0.05, size=n), TAU)
        zenith = reflect_into(predicted[self.zenith] + rng.normal(0.0, 0.05, size=n), 0.0, np.pi)
        return {self.azimuth: azimuth, self.zenith: zenith}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """An azimuth beyond 2pi: the same direction, and not an error for the grader."""
        values = values.astype(float)
        values[rows] += TAU
        return values


def icecube(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Increasing event ids with gaps (about 25 ids per event, as in the test batches) and directions.

    The frames are built without copying their arrays, and the sample submission shares the answers' ids
    (pandas' copy-on-write keeps them apart), so 13.2 million rows stay well under 1 GB.
    """
    event_id = np.cumsum(rng.integers(1, 50, size=n, dtype=np.int64))
    event_id += 24
    target = Direction()
    answers = pd.DataFrame({"event_id": event_id, **target.generate(rng, n)}, copy=False)
    sample = {column: np.full(n, value) for column, value in target.sample_value.items()}
    return answers, pd.DataFrame({"event_id": answers["event_id"], **sample}, copy=False)


# --- smartphone-decimeter-2022 -----------------------------------------------------------------------
_ROUTES = ("MTV-1", "MTV-2", "SJC-1", "SJC-2", "RWC-1", "RWC-2", "SVL-1", "LAX-1", "LAX-3", "LAX-5")
_PHONES = ("GooglePixel4", "GooglePixel4XL", "GooglePixel5", "GooglePixel6Pro", "SamsungGalaxyS20Ultra")
_CENTRES = {"MTV": (37.39, -122.08), "SJC": (37.33, -121.89), "RWC": (37.49, -122.23)}
_CENTRES |= {"SVL": (37.37, -122.04), "LAX": (34.05, -118.24)}


@dataclass(frozen=True)
class Position:
    """Latitude/longitude in degrees; noise is the truth moved a few metres (log-normal) in any bearing."""

    latitude: str = "LatitudeDegrees"
    longitude: str = "LongitudeDegrees"
    sample_values: tuple[float, float] = (37.904611, -86.481078)
    median_error_m: float = 4.0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.latitude, self.longitude)

    @property
    def sample_value(self) -> dict[str, float]:
        return dict(zip(self.columns, self.sample_values))

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("positions come from the smartphone_decimeter hook")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known = rng.random(n) < quality
        distance = self.median_error_m * np.exp(rng.normal(0.0, 0.9, size=n))
        bearing = rng.random(n) * TAU
        lat = truth[self.latitude].to_numpy(dtype=float)
        lon = truth[self.longitude].to_numpy(dtype=float)
        dlat = np.degrees(distance * np.cos(bearing) / EARTH_RADIUS_M)
        dlon = np.degrees(distance * np.sin(bearing) / (EARTH_RADIUS_M * np.cos(np.radians(lat))))
        return {
            self.latitude: np.where(known, lat, lat + dlat),
            self.longitude: np.where(known, lon, lon + dlon),
        }

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        """About a metre off in each direction (the phones' own error; noise is a few metres)."""
        n = len(truth)
        lat = predicted[self.latitude]
        dlat = np.degrees(rng.normal(0.0, 1.0, size=n) / EARTH_RADIUS_M)
        dlon = np.degrees(rng.normal(0.0, 1.0, size=n) / (EARTH_RADIUS_M * np.cos(np.radians(lat))))
        return {self.latitude: lat + dlat, self.longitude: predicted[self.longitude] + dlon}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """A latitude beyond 90 degrees: the grader has no range check, it scores a far-off point."""
        values = values.astype(float)
        values[rows] += 180.0
        return values


def smartphone_decimeter(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """Concatenated ground truths of ~1,030-fix traces (1 Hz), trips in tripId order."""
    trips = max(min(3, n), round(n / 1030))
    weights = rng.uniform(0.6, 1.8, size=trips)
    lengths = np.maximum(1, np.floor(weights / weights.sum() * n).astype(np.int64))
    lengths[np.argmax(lengths)] += n - lengths.sum()
    names: set[str] = set()
    while len(names) < trips:
        month, day = int(rng.integers(1, 13)), int(rng.integers(1, 29))
        route, phone = rng.choice(_ROUTES), rng.choice(_PHONES)
        names.add(f"2021-{month:02d}-{day:02d}-US-{route}/{phone}")
    trip_ids = np.array(sorted(names))
    lat_parts, lon_parts, time_parts = [], [], []
    for trip, length in zip(trip_ids, lengths.tolist()):
        centre_lat, centre_lon = _CENTRES[trip.split("-US-")[1][:3]]
        speed = np.clip(rng.normal(12.0, 6.0, size=length), 0.0, 30.0)  # m/s, one fix per second
        heading = np.cumsum(rng.normal(0.0, 0.08, size=length)) + rng.random() * TAU
        north, east = np.cumsum(speed * np.cos(heading)), np.cumsum(speed * np.sin(heading))
        lat0 = centre_lat + rng.normal(0.0, 0.05)
        lat_parts.append(np.round(lat0 + np.degrees(north / EARTH_RADIUS_M), 9))
        lon_parts.append(
            np.round(
                centre_lon + rng.normal(0.0, 0.05) + np.degrees(east / (EARTH_RADIUS_M * np.cos(np.radians(lat0)))),
                9,
            )
        )
        start = 1_609_459_200_000 + int(rng.integers(0, 365 * 86_400)) * 1000
        steps = np.where(rng.random(length) < 0.002, 2000, 1000)
        steps[0] = 0
        time_parts.append(start + np.cumsum(steps))
    answers = pd.DataFrame(
        {
            "tripId": np.repeat(trip_ids, lengths).astype(object),
            "UnixTimeMillis": np.concatenate(time_parts).astype(np.int64),
            "LatitudeDegrees": np.concatenate(lat_parts),
            "LongitudeDegrees": np.concatenate(lon_parts),
        }
    )
    return answers, None


# --- champs-scalar-coupling --------------------------------------------------------------------------
# type: (share of rows, mean, standard deviation) of scalar_coupling_constant in train.csv
CHAMPS_TYPES = {
    "1JHC": (0.152, 94.98, 18.28),
    "1JHN": (0.009, 47.48, 10.92),
    "2JHC": (0.245, -0.27, 4.52),
    "2JHH": (0.081, -10.29, 3.98),
    "2JHN": (0.026, 3.12, 3.67),
    "3JHC": (0.324, 3.69, 3.07),
    "3JHH": (0.126, 4.77, 3.70),
    "3JHN": (0.037, 0.99, 1.32),
}


def champs(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """train.csv rows of whole molecules (about 55 couplings each), ids in train order."""
    counts = rng.poisson(50, size=n // 20 + 2) + 5
    total = np.cumsum(counts)
    molecules = int(np.searchsorted(total, n)) + 1
    counts = counts[:molecules]
    counts[-1] -= int(total[molecules - 1]) - n
    numbers = np.sort(fields.unique_ints(rng, molecules, low=1, high=max(133_886, 2 * molecules)))
    names = np.char.add("dsgdb9nsd_", np.char.zfill(numbers.astype(str), 6))
    skipped = rng.geometric(1 / (9 * 55), size=molecules) - 1  # couplings of molecules not in the test set
    ids = np.arange(n, dtype=np.int64) + np.repeat(np.cumsum(skipped), counts)
    kinds = np.array(list(CHAMPS_TYPES))
    share, mean, std = (np.array(v) for v in zip(*CHAMPS_TYPES.values()))
    kind = rng.choice(len(kinds), size=n, p=share / share.sum())
    answers = pd.DataFrame(
        {
            "id": ids,
            "molecule_name": np.repeat(names, counts).astype(object),
            "atom_index_0": rng.integers(9, 29, size=n),
            "atom_index_1": rng.integers(0, 9, size=n),
            "type": kinds[kind].astype(object),
            "scalar_coupling_constant": np.round(rng.normal(mean[kind], std[kind]), 5),
        }
    )
    return answers, None


# --- samplers and id makers --------------------------------------------------------------------------
def pawpularity(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integers 1-100, right-skewed around 38, with the real data's bump at 100."""
    scores = np.clip(np.rint(rng.gamma(3.4, 11.2, size=n)), 1, 100).astype(np.int64)
    scores[rng.random(n) < 0.03] = 100
    return scores


PETFINDER_FEATURES = {
    "Subject Focus": 0.03,
    "Eyes": 0.77,
    "Face": 0.90,
    "Near": 0.86,
    "Action": 0.01,
    "Accessory": 0.07,
    "Group": 0.13,
    "Collage": 0.05,
    "Human": 0.17,
    "Occlusion": 0.17,
    "Info": 0.06,
    "Blur": 0.07,
}


def petfinder_extras(rng: np.random.Generator, columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    return {name: (rng.random(n) < p).astype(np.int64) for name, p in PETFINDER_FEATURES.items()}


def time_to_eruption(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(6_250, 49_046_088, size=n, dtype=np.int64)


def unused_sampler(rng: np.random.Generator, n: int) -> np.ndarray:
    raise NotImplementedError("this target's values come from its competition's build hook")


# --- stanford-covid-vaccine --------------------------------------------------------------------------
COVID_LENGTH, COVID_SCORED = 107, 68
COVID_TARGETS = ("reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C")


def whole_units(size: int) -> Callable[[int], int]:
    return lambda n: size * max(1, -(-n // size))


def openvaccine(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """id_seqpos for whole 107-base sequences; the first 68 positions are scored (keep), the rest hold 0."""
    sequences = n // COVID_LENGTH
    names = np.char.add("id_", fields.hex_ids(9)(rng, sequences))
    positions = np.tile(np.arange(COVID_LENGTH), sequences)
    ids = np.char.add(np.char.add(np.repeat(names, COVID_LENGTH), "_"), positions.astype(str))
    keep = positions < COVID_SCORED
    columns: dict[str, np.ndarray] = {"id_seqpos": ids.astype(object)}
    for scale, name in zip((0.40, 0.45, 0.45, 0.42, 0.45), COVID_TARGETS):
        values = np.round(rng.gamma(1.3, scale, size=n) - 0.08, 4)
        columns[name] = np.where(keep, values, 0.0)
    columns["keep"] = keep
    return pd.DataFrame(columns), None


# --- ventilator-pressure-prediction ------------------------------------------------------------------
BREATH_STEPS = 80
_PRESSURE_MIN, _PRESSURE_STEP = -1.895744294564641, 0.07030214545121005


def ventilator(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """Whole breaths of 80 steps in train order (train ids), inspiration (u_out 0) for about 1 s."""
    breaths = n // BREATH_STEPS
    index = np.sort(fields.unique_ints(rng, breaths, low=0, high=max(75_450, breaths)))
    ids = (index[:, None] * BREATH_STEPS + np.arange(1, BREATH_STEPS + 1)[None, :]).ravel()
    r = np.repeat(rng.choice([5, 20, 50], size=breaths, p=[0.33, 0.36, 0.31]), BREATH_STEPS)
    c = np.repeat(rng.choice([10, 20, 50], size=breaths, p=[0.30, 0.33, 0.37]), BREATH_STEPS)
    dt = rng.uniform(0.0331, 0.0345, size=(breaths, BREATH_STEPS))
    dt[:, 0] = 0.0
    time_step = np.round(np.cumsum(dt, axis=1).ravel(), 10)
    u_out = (time_step > 0.99).astype(np.int64)
    level = np.repeat(rng.uniform(8.0, 30.0, size=breaths), BREATH_STEPS)
    inspiring = u_out == 0
    u_in = np.round(np.where(inspiring, rng.gamma(2.0, 6.0, size=n), rng.uniform(0.0, 5.0, size=n)), 8)
    target = np.where(inspiring, level + rng.normal(0, 2.0, n), 6.0 + rng.normal(0, 0.8, n))
    steps = np.clip(np.rint((target - _PRESSURE_MIN) / _PRESSURE_STEP), 0, 950)
    answers = pd.DataFrame(
        {
            "id": ids.astype(np.int64),
            "breath_id": np.repeat(index * 5 // 3 + 1, BREATH_STEPS).astype(np.int64),
            "R": r.astype(np.int64),
            "C": c.astype(np.int64),
            "time_step": time_step,
            "u_in": u_in,
            "u_out": u_out,
            "pressure": np.round(_PRESSURE_MIN + steps * _PRESSURE_STEP, 10),
        }
    )
    return answers, None
