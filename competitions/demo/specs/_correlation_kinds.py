"""Target kinds and hooks of the correlation group (AI4Code, google-quest-challenge,
nfl-player-contact-detection, osic-pulmonary-fibrosis-progression, us-patent-phrase-to-phrase-matching)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from competitions.demo import fields
from competitions.demo.targets import reflect_into

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _hex8(values: np.ndarray) -> np.ndarray:
    """32-bit integers as 8 lower-case hex digits."""
    shifts = np.arange(28, -1, -4, dtype=np.uint64)
    digits = (values.astype(np.uint64)[:, None] >> shifts) & np.uint64(0xF)
    return np.ascontiguousarray(_HEX[digits]).view("S8").ravel().astype(str)


def _join_rows(items: list[str], lengths: np.ndarray) -> list[str]:
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    return [" ".join(items[a:b]) for a, b in zip(starts, ends)]


def _code_cells_first(rng: np.random.Generator, lengths: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Positions of the concatenated cells, each row's code cells first in their order, then its markdown
    cells shuffled (as AI4Code's test notebooks list them)."""
    row = np.repeat(np.arange(len(lengths)), lengths)
    position = np.arange(len(row), dtype=np.float64)
    return np.lexsort((np.where(code, position, rng.random(len(row))), ~code, row))


# --- AI4Code: space-separated cell ids in their true order -------------------------------------------
@dataclass(frozen=True)
class CellOrder:
    """A notebook's cell ids in order; noise is the notebook's cells in a random order."""

    column: str = "cell_order"
    sample_value: str = ""
    is_text: ClassVar[bool] = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("cell orders come from the AI4Code hook")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        orders = np.array([str(text) for text in truth[self.column].tolist()], dtype=object)
        lists = [text.split() for text in orders.tolist()]
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        known = rng.random(len(orders)) < quality
        # One draw per cell whatever the quality, so a row's noise does not change with it.
        keys = rng.random(int(lengths.sum()))
        noise = np.flatnonzero(~known)
        if len(noise):
            items = np.array([item for k in noise.tolist() for item in lists[k]], dtype=object)
            picked = np.repeat(~known, lengths)
            row = np.repeat(np.arange(len(noise)), lengths[noise])
            shuffled = items[np.argsort(row + keys[picked], kind="stable")].tolist()
            orders[noise] = _join_rows(shuffled, lengths[noise])
        return {self.column: orders}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """A cell id the notebook does not have (not even hex) in place of each chosen row's first cell."""
        values = values.astype(object)
        for row in rows.tolist():
            cells = str(values[row]).split()
            values[row] = " ".join(["zzzzzzzz", *cells[1:]])
        return values


def ai4code(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """test_orders.csv (id, cell_order) and a sample submission listing code cells in order, then markdown.

    Notebooks have 2 to 1000 cells, about 45 on average; cell ids are 8 hex digits, distinct per notebook.
    """
    ids = fields.hex_ids(14)(rng, n)
    lengths = np.clip(np.round(rng.lognormal(np.log(35), 0.7, size=n)), 2, 1000).astype(np.int64)
    row = np.repeat(np.arange(n, dtype=np.uint64), lengths)
    cells = rng.integers(0, 2**32, size=len(row), dtype=np.uint64)
    while True:  # redraw cell ids that repeat within a notebook
        keys = (row << np.uint64(32)) | cells
        _, first = np.unique(keys, return_index=True)
        if len(first) == len(keys):
            break
        repeated = np.ones(len(keys), dtype=bool)
        repeated[first] = False
        cells[repeated] = rng.integers(0, 2**32, size=int(repeated.sum()), dtype=np.uint64)
    items = _hex8(cells).tolist()
    code = rng.random(len(items)) < 0.6
    sample_order = _code_cells_first(rng, lengths, code)
    answers = pd.DataFrame({"id": ids, "cell_order": _join_rows(items, lengths)})
    sample = pd.DataFrame({"id": ids, "cell_order": _join_rows([items[i] for i in sample_order.tolist()], lengths)})
    return answers, sample


# --- google-quest-challenge: 30 crowd ratings in [0, 1] ------------------------------------------------
QUEST_TARGETS = (
    "question_asker_intent_understanding",
    "question_body_critical",
    "question_conversational",
    "question_expect_short_answer",
    "question_fact_seeking",
    "question_has_commonly_accepted_answer",
    "question_interestingness_others",
    "question_interestingness_self",
    "question_multi_intent",
    "question_not_really_a_question",
    "question_opinion_seeking",
    "question_type_choice",
    "question_type_compare",
    "question_type_consequence",
    "question_type_definition",
    "question_type_entity",
    "question_type_instructions",
    "question_type_procedure",
    "question_type_reason_explanation",
    "question_type_spelling",
    "question_well_written",
    "answer_helpful",
    "answer_level_of_information",
    "answer_plausible",
    "answer_relevance",
    "answer_satisfaction",
    "answer_type_instructions",
    "answer_type_procedure",
    "answer_type_reason_explanation",
    "answer_well_written",
)
QUEST_MEANS = (
    0.89, 0.60, 0.06, 0.70, 0.78, 0.80, 0.59, 0.51, 0.24, 0.005, 0.43, 0.28, 0.04, 0.01, 0.03,
    0.06, 0.48, 0.13, 0.10, 0.002, 0.80, 0.93, 0.65, 0.96, 0.97, 0.85, 0.48, 0.13, 0.50, 0.91,
)  # fmt: skip


@dataclass(frozen=True)
class Ratings:
    """Ratings averaged over raters (multiples of 1/6); noise is uniform in [0, 1].

    Continuous noise keeps every predicted column from being constant (a constant column scores NaN): another
    row's ratings would leave a rare column such as question_type_spelling all zero now and then.
    """

    names: tuple[str, ...] = QUEST_TARGETS
    means: tuple[float, ...] = QUEST_MEANS
    sample_value: float = 0.0

    @property
    def columns(self) -> tuple[str, ...]:
        return self.names

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        out = {}
        for name, mean in zip(self.names, self.means):
            draws = rng.beta(mean * 3.0, (1 - mean) * 3.0, size=n)
            values = np.round(np.round(draws * 6) / 6, 6)
            if n >= 2 and len(np.unique(values)) < 2:  # every test column varies (the prepare script sees to it)
                values[rng.choice(n, size=2, replace=False)] = (0.333333, 0.666667)
            out[name] = values
        return out

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known, noise = rng.random(n) < quality, np.round(rng.random((n, len(self.names))), 6)
        exact = truth[list(self.names)].to_numpy(dtype=float)
        predicted = np.where(known[:, None], exact, noise)
        return {name: predicted[:, j] for j, name in enumerate(self.names)}

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        """Each rating off by a few hundredths (the raters' steps are 1/6 apart), kept within [0, 1]."""
        shape = (len(truth), len(self.names))
        error = rng.standard_normal(shape) * (0.01 + 0.05 * rng.random(shape))
        values = np.column_stack([predicted[name] for name in self.names]) + error
        values = reflect_into(values, 0.0, 1.0)
        return {name: values[:, j] for j, name in enumerate(self.names)}


# --- nfl-player-contact-detection: one row per (game_play, step, player pair) --------------------------
_PLAYERS_PER_PLAY = 22
_PAIRS_PER_STEP = _PLAYERS_PER_PLAY * (_PLAYERS_PER_PLAY - 1) // 2 + _PLAYERS_PER_PLAY  # + ground
_ROWS_PER_PLAY = 19_302  # 463,243 rows over 24 plays


def nfl_contacts(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """test.csv: contact_id, game_play, datetime, step, nfl_player_id_1, nfl_player_id_2, contact.

    contact_id is '<game_play>_<step>_<player 1>_<player 2 or G>'; steps are 0.1 s apart. Text that repeats
    (plays, time stamps, second players) is made once and shared between rows, to keep memory low.
    """
    plays = max(1, round(n / _ROWS_PER_PLAY))
    steps = -(-n // (plays * _PAIRS_PER_STEP)) + rng.integers(0, 3, size=plays)
    games = np.sort(fields.unique_ints(rng, plays, low=57_500, high=58_600))
    play_ids = rng.integers(100, 4_000, size=plays)
    first, second = np.triu_indices(_PLAYERS_PER_PLAY, 1)
    ground = np.r_[np.zeros(len(first), dtype=bool), np.ones(_PLAYERS_PER_PLAY, dtype=bool)]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("play", "step", "p1", "p2", "stamp")}
    names: list[str] = []
    partners: list[np.ndarray] = []
    stamps: list[str] = []
    for k in range(plays):
        players = np.sort(fields.unique_ints(rng, _PLAYERS_PER_PLAY, low=25_000, high=55_000))
        p1 = np.r_[players[first], players]
        partner = np.r_[players[second].astype(str), np.full(_PLAYERS_PER_PLAY, "G")].astype(object)
        count = int(steps[k])
        start = np.datetime64("2021-09-09T20:00:00.000") + np.timedelta64(int(rng.integers(0, 120 * 86_400)), "s")
        times = np.datetime_as_string(start + (np.arange(count) * 100).astype("timedelta64[ms]"), unit="ms")
        parts["play"].append(np.full(count * len(p1), k))
        parts["step"].append(np.repeat(np.arange(count), len(p1)))
        parts["p1"].append(np.tile(p1, count))
        parts["p2"].append(np.tile(np.arange(len(p1)) + len(partners) * len(p1), count))
        parts["stamp"].append(np.repeat(np.arange(count) + len(stamps), len(p1)))
        names.append(f"{games[k]}_{play_ids[k]:06d}")
        partners.append(partner)
        stamps.extend(f"{t}Z" for t in times.tolist())
    play, step, p1, p2, stamp = (np.concatenate(parts[key])[:n] for key in ("play", "step", "p1", "p2", "stamp"))
    game_play = np.array(names, dtype=object)[play]
    player_2 = np.concatenate(partners)[p2]
    is_ground = ground[p2 % len(ground)]
    contact = (rng.random(n) < np.where(is_ground, 0.06, 0.008)).astype(np.int64)
    contact_id = [
        f"{g}_{s}_{a}_{b}" for g, s, a, b in zip(game_play.tolist(), step.tolist(), p1.tolist(), player_2.tolist())
    ]
    answers = pd.DataFrame(
        {
            "contact_id": contact_id,
            "game_play": game_play,
            "datetime": np.array(stamps, dtype=object)[stamp],
            "step": step.astype(np.int64),
            "nfl_player_id_1": p1.astype(np.int64),
            "nfl_player_id_2": player_2,
            "contact": contact,
        }
    )
    return answers, None


# --- osic-pulmonary-fibrosis-progression: every patient x every week, FVC where measured ----------------
OSIC_WEEKS = np.arange(-12, 94)  # 106 weeks: 18 patients make the 1,908 answer rows


def osic_rows(n: int) -> int:
    return len(OSIC_WEEKS) * max(1, -(-n // len(OSIC_WEEKS)))


def osic(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """test.csv: Patient, Weeks, FVC, Percent, Age, Sex, SmokingStatus, Patient_Week, Confidence.

    FVC and Percent are empty where nothing was measured (about 9 measured weeks per patient, the first near
    week 0); Confidence is the sample submission's constant 100.
    """
    patients = n // len(OSIC_WEEKS)
    names = np.char.add("ID00", fields.random_tokens(rng, patients, length=21, alphabet=b"0123456789"))
    weeks = np.tile(OSIC_WEEKS, patients)
    patient = np.repeat(np.arange(patients), len(OSIC_WEEKS))
    measured = np.zeros(len(weeks), dtype=bool)
    for k in range(patients):
        first = int(rng.integers(-5, 8))
        visits = first + np.cumsum(np.r_[0, rng.integers(4, 14, size=12)])
        visits = visits[visits <= OSIC_WEEKS[-1]][: int(rng.integers(6, 11))]
        measured[k * len(OSIC_WEEKS) + (visits - OSIC_WEEKS[0])] = True
    baseline = np.clip(rng.normal(2700, 800, size=patients), 900, 5500)
    slope = rng.normal(-3.5, 3.0, size=patients)
    normal = np.clip(baseline / rng.uniform(0.5, 1.0, size=patients), 2000, 6500)
    fvc = np.round(baseline[patient] + slope[patient] * weeks + rng.normal(0, 90, size=len(weeks)))
    fvc = np.where(measured, fvc, np.nan)
    age = rng.integers(50, 89, size=patients)
    sex = np.where(rng.random(patients) < 0.79, "Male", "Female")
    smoking = fields.choice(rng, patients, ["Ex-smoker", "Never smoked", "Currently smokes"], [67, 28, 5])
    answers = pd.DataFrame(
        {
            "Patient": names[patient].astype(object),
            "Weeks": weeks.astype(np.int64),
            "FVC": fvc,
            "Percent": np.round(fvc / normal[patient] * 100, 6),
            "Age": age[patient].astype(np.int64),
            "Sex": sex[patient].astype(object),
            "SmokingStatus": smoking[patient].astype(object),
            "Patient_Week": np.char.add(np.char.add(names[patient], "_"), weeks.astype(str)).astype(object),
            "Confidence": np.full(len(weeks), 100, dtype=np.int64),
        }
    )
    return answers, None


@dataclass(frozen=True)
class FvcWithConfidence:
    """FVC with a confidence (Laplace sigma). A known row is the truth with the smallest useful confidence, 70
    (``honest`` adds a model's error of about 40 mL and up to 60 to the confidence); noise is off by about
    250 mL with a confidence between 100 and 400."""

    fvc: str = "FVC"
    confidence: str = "Confidence"
    sample_values: tuple[int, int] = (2000, 100)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.fvc, self.confidence)

    @property
    def sample_value(self) -> dict[str, int]:
        return dict(zip(self.columns, self.sample_values))

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("OSIC answers come from a competition hook")

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        known = rng.random(n) < quality
        error, spread = rng.normal(0, 250, size=n), rng.uniform(100, 400, size=n)
        measured = truth[self.fvc].astype(float)
        patient_mean = measured.groupby(truth["Patient"].to_numpy()).transform("mean")
        exact = measured.fillna(patient_mean).fillna(2500.0).to_numpy()
        return {
            self.fvc: np.where(known, exact, np.round(exact + error)),
            self.confidence: np.where(known, 70.0, np.round(spread)),
        }

    def honest(self, rng: np.random.Generator, predicted: dict[str, np.ndarray], truth: pd.DataFrame) -> dict:
        """FVC off by a few tens of mL (as floats, as a model writes them), confidence 70 to 130."""
        n = len(truth)
        fvc = predicted[self.fvc] + rng.normal(0.0, 40.0, size=n)
        confidence = predicted[self.confidence] + 60.0 * rng.random(n)
        return {self.fvc: np.round(fvc, 3), self.confidence: np.round(confidence, 3)}


# --- us-patent-phrase-to-phrase-matching: similarity in quarter steps ---------------------------------
_PATENT_WORDS = [
    "abatement",
    "adjustable",
    "engine",
    "fluid",
    "valve",
    "rotor",
    "coupling",
    "signal",
    "layer",
    "substrate",
    "coating",
    "polymer",
    "laser",
    "sensor",
    "battery",
    "circuit",
    "housing",
    "spring",
    "gear",
    "shaft",
    "bearing",
    "nozzle",
    "filter",
    "membrane",
    "catalyst",
    "electrode",
    "antenna",
    "wireless",
    "display",
    "optical",
    "lens",
    "fiber",
    "chamber",
    "piston",
    "pump",
    "heat",
    "exchanger",
    "seal",
    "magnetic",
    "coil",
    "frame",
    "panel",
    "module",
    "control",
    "unit",
    "device",
    "assembly",
    "member",
    "surface",
    "element",
    "portion",
    "material",
]
_CPC = tuple(f"{section}{k:02d}" for section in "ABCDEFGH" for k in (1, 4, 21, 23, 41, 60, 61, 65))


def patent_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    return fields.choice(rng, n, [0.0, 0.25, 0.5, 0.75, 1.0], [20, 32, 34, 11, 3]).astype(np.float64)


def patent_extras(rng: np.random.Generator, columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    words = np.array(_PATENT_WORDS)

    def phrases(longest: int) -> np.ndarray:
        lengths = rng.integers(1, longest + 1, size=n)
        picked = words[rng.integers(0, len(words), size=(n, longest))].tolist()
        return np.array([" ".join(row[:k]) for row, k in zip(picked, lengths.tolist())], dtype=object)

    return {
        "anchor": phrases(3),
        "target": phrases(4),
        "context": np.array(_CPC, dtype=object)[rng.integers(0, len(_CPC), size=n)],
    }
