"""Small hooks for the formats a generic spec cannot express.

- extras: metadata or feature columns the real answers files carry beside the target;
- samplers: value distributions of regression targets;
- row plans and id makers for structured ids (denoising pixels, MLSP recording x species);
- builders for competitions whose answers are not "id + target" (text normalisation, insults).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from competitions.demo import fields, vocab

Columns = dict[str, np.ndarray]

# --- denoising-dirty-documents: 29 cleaned images of 540 columns x 258 or 420 rows --------------
DENOISING_FULL_ROWS = 9 * 258 * 540 + 20 * 420 * 540  # 5,789,880
_SMALL_SHAPES = ((6, 20), (10, 20))  # scaled-down images for small packs


def denoising_rows(n: int) -> int:
    if n == DENOISING_FULL_ROWS:
        return n
    total, i = 0, 0
    while total < max(n, 1):
        height, width = _SMALL_SHAPES[i % 2]
        total, i = total + height * width, i + 1
    return total


def denoising_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    if n == DENOISING_FULL_ROWS:
        heights = [258] * 9 + [420] * 20
        width = 540
    else:
        heights, total = [], 0
        while total < n:
            height, width = _SMALL_SHAPES[len(heights) % 2]
            heights.append(height)
            total += height * width
    images = np.sort(rng.choice(np.arange(1, 217), size=len(heights), replace=False))
    order = rng.permutation(len(heights))
    shapes = [(int(images[i]), heights[j], width) for i, j in enumerate(order)]
    return fields.pixel_ids(shapes)


def pixel_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Cleaned-page intensities k/255: mostly white paper, some dark ink."""
    ink = rng.random(n) < 0.12
    levels = np.where(ink, rng.integers(0, 230, size=n), 255)
    return levels / 255.0


# --- mlsp-2013-birds: Id = rec_id * 100 + species_id, 19 species per recording ----------------
def mlsp_rows(n: int) -> int:
    return 19 * max(1, -(-n // 19))


def mlsp_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    recordings = np.sort(fields.unique_ints(rng, n // 19, low=0, high=max(322, 5 * (n // 19))))
    return (recordings[:, None] * 100 + np.arange(19)[None, :]).ravel()


# --- regression samplers ---------------------------------------------------------------------
def taxi_fares(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.round(np.clip(np.exp(rng.normal(2.2, 0.55, size=n)), 2.5, 250.0), 2)


def formation_energy(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.round(np.clip(rng.gamma(2.2, 0.085, size=n), 0.0, 0.66), 4)


def bandgap_energy(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.round(np.clip(rng.normal(2.08, 1.0, size=n), 0.0001, 5.29), 4)


# --- extras ----------------------------------------------------------------------------------
def taxi_extras(rng: np.random.Generator, columns: Columns, n: int) -> Columns:
    pickup = np.char.add(np.asarray(columns["key"], dtype="U19"), " UTC")
    out: Columns = {"pickup_datetime": pickup}
    for name, centre in (("pickup", (-73.975, 40.751)), ("dropoff", (-73.974, 40.752))):
        missing = rng.random(n) < 0.02  # the real data has 0,0 coordinates
        out[f"{name}_longitude"] = np.where(missing, 0.0, np.round(rng.normal(centre[0], 0.035, n), 6))
        out[f"{name}_latitude"] = np.where(missing, 0.0, np.round(rng.normal(centre[1], 0.03, n), 6))
    out["passenger_count"] = fields.choice(rng, n, [1, 2, 3, 4, 5, 6], [69, 15, 4, 2, 7, 3]).astype(np.int64)
    return out


def nomad_extras(rng: np.random.Generator, columns: Columns, n: int) -> Columns:
    al = rng.integers(0, 33, size=n)
    ga = (rng.random(n) * (33 - al)).astype(np.int64)
    gamma_hex = rng.random(n) < 0.3
    return {
        "spacegroup": fields.choice(rng, n, [12, 33, 167, 194, 206, 227], [13, 17, 14, 20, 18, 18]).astype(np.int64),
        "number_of_total_atoms": fields.choice(rng, n, [10, 20, 30, 40, 60, 80], [5, 10, 10, 25, 10, 40]).astype(
            np.float64
        ),
        "percent_atom_al": al / 32,
        "percent_atom_ga": ga / 32,
        "percent_atom_in": (32 - al - ga) / 32,
        "lattice_vector_1_ang": np.round(rng.uniform(3.0, 24.9, n), 4),
        "lattice_vector_2_ang": np.round(rng.uniform(3.0, 10.3, n), 4),
        "lattice_vector_3_ang": np.round(rng.uniform(4.5, 25.4, n), 4),
        "lattice_angle_alpha_degree": np.round(90 + rng.normal(0, 0.8, n), 4),
        "lattice_angle_beta_degree": np.round(90 + rng.normal(0, 3.0, n), 4),
        "lattice_angle_gamma_degree": np.round(np.where(gamma_hex, 120.0, 90.0) + rng.normal(0, 0.3, n), 4),
    }


FOREST_FEATURES = [
    "Elevation",
    "Aspect",
    "Slope",
    "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology",
    "Horizontal_Distance_To_Roadways",
    "Hillshade_9am",
    "Hillshade_Noon",
    "Hillshade_3pm",
    "Horizontal_Distance_To_Fire_Points",
]


def forest_extras(rng: np.random.Generator, columns: Columns, n: int) -> Columns:
    lows = (1800, -33, -3, -92, -317, -287, -4, 49, -53, -277)
    highs = (4400, 408, 65, 1602, 648, 7667, 302, 280, 273, 8075)
    out: Columns = {
        name: rng.integers(low, high, size=n, dtype=np.int64) for name, low, high in zip(FOREST_FEATURES, lows, highs)
    }
    wilderness = rng.choice(4, size=n, p=[0.26, 0.04, 0.65, 0.05])
    for k in range(4):
        out[f"Wilderness_Area{k + 1}"] = (wilderness == k).astype(np.int64)
    for k in range(40):
        out[f"Soil_Type{k + 1}"] = (rng.random(n) < 0.03).astype(np.int64)
    return out


def tps_may_extras(rng: np.random.Generator, columns: Columns, n: int) -> Columns:
    out: Columns = {}
    for k in range(7):
        out[f"f_{k:02d}"] = np.round(rng.normal(0, 1, n), 6)
    for k in range(7, 19):
        out[f"f_{k:02d}"] = rng.poisson(2.5, n).astype(np.int64)
    for k in range(19, 27):
        out[f"f_{k:02d}"] = np.round(rng.normal(0, 2.4, n), 6)
    out["f_27"] = fields.random_tokens(rng, n, length=10, alphabet=b"AAABBBCDEFGHIJKLMNOPQRST")
    out["f_28"] = np.round(rng.normal(0, 238.0, n), 6)
    out["f_29"] = (rng.random(n) < 0.35).astype(np.int64)
    out["f_30"] = rng.choice(3, size=n, p=[0.35, 0.33, 0.32]).astype(np.int64)
    return out


def ranzcr_extras(rng: np.random.Generator, columns: Columns, n: int) -> Columns:
    patients = fields.random_tokens(rng, max(1, int(n * 0.75)), length=9, alphabet=b"0123456789abcdef")
    return {"PatientID": patients[rng.integers(0, len(patients), size=n)]}


# --- builders --------------------------------------------------------------------------------
def text_normalization(
    tokens: tuple[tuple[str, str, float], ...],
) -> Callable[[np.random.Generator, int], tuple[pd.DataFrame, pd.DataFrame]]:
    """Answers id='{sentence}_{token}', after=normalised text; the sample submission copies 'before'.

    Tokens the normalisation changes are drawn far more often than in real text (3 in 4 of the tokens other
    than the sentences' full stops, against about 1 in 25): on real data every Kaggle team beats the sample
    submission's ~0.9, but the simulated teams' noise is another row's text, so with real shares the sample
    (~0.96) would earn gold on the simulated board. With these it scores about 0.3 and earns nothing.
    """
    before = np.array([t[0] for t in tokens], dtype=object)
    after = np.array([t[1] for t in tokens], dtype=object)
    weights = np.array([t[2] for t in tokens], dtype=float)
    changed = before != after
    weights[changed] *= 3.0 * weights[~changed].sum() / weights[changed].sum()
    full_stop = int(np.flatnonzero(before == ".")[0])

    def build(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        lengths = rng.poisson(11, size=n // 4 + 2) + 2
        starts = np.concatenate([[0], np.cumsum(lengths)])
        sentence_count = int(np.searchsorted(starts, n, side="left"))
        sentence = np.repeat(np.arange(sentence_count), lengths[:sentence_count])[:n]
        token = np.arange(n) - starts[sentence]
        picked = rng.choice(len(tokens), size=n, p=weights / weights.sum())
        last = np.append(sentence[1:] != sentence[:-1], True)
        picked[last] = full_stop
        pairs = zip(sentence.tolist(), token.tolist(), strict=True)
        ids = np.array([f"{s}_{t}" for s, t in pairs], dtype=object)
        answers = pd.DataFrame({"id": ids, "after": after[picked]})
        sample = pd.DataFrame({"id": answers["id"], "after": before[picked]})
        return answers, sample

    return build


def insults(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, None]:
    """Kaggle's test_with_solutions.csv: Insult, Date, Comment (quoted text, the id), Usage."""
    label = (rng.random(n) < 0.26).astype(np.int64)
    label[: min(2, n)] = 1
    label[min(2, n) : min(4, n)] = 0
    neutral, rude = np.array(vocab.NEUTRAL_WORDS), np.array(vocab.INSULT_WORDS)
    comments, seen = [], set()
    for i in range(n):
        while True:
            words = list(rng.choice(neutral, size=int(rng.integers(4, 16))))
            if label[i]:
                words.insert(int(rng.integers(0, len(words))), f"you {rng.choice(rude)}")
            text = '"' + " ".join(words).capitalize() + str(rng.choice([".", "!", "?", "...", ""])) + '"'
            if text not in seen:
                break
        seen.add(text)
        comments.append(text)
    seconds = rng.integers(0, 90 * 86_400, size=n)
    stamps = np.datetime_as_string(np.datetime64("2012-06-01T00:00:00") + seconds.astype("timedelta64[s]"))
    date = np.char.add(np.char.replace(np.char.replace(np.char.replace(stamps, "-", ""), ":", ""), "T", ""), "Z")
    # NumPy's stubs refuse None as np.where's value, which it takes as an object scalar.
    date = np.where(rng.random(n) < 0.2, None, date.astype(object))  # type: ignore[call-overload]
    usage = np.where(rng.random(n) < 0.62, "PrivateTest", "PublicTest")
    frame = pd.DataFrame({"Insult": label, "Date": date, "Comment": comments, "Usage": usage})
    return frame.iloc[rng.permutation(n)].reset_index(drop=True), None
