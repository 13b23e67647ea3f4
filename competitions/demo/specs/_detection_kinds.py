"""Synthetic answers and a simulated agent for the object-detection group.

The answers hold objects in prediction strings (one row per sample, study/image or page) or, for VinBigData,
one row per ground-truth box. Each target kind's agent works per row of the public format: a row it "knows"
(fixed draw ``u < quality``) is predicted exactly, any other row gets noise (boxes moved far off, random
classes, random points), so the score grows with quality from near 0 to the best score.

Where the gold submission differs from the answers (VinBigData, Kuzushiji), the target kind's
``gold_submission`` makes it from the answers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from competitions.demo import fields

TARGET = "PredictionString"


# ---------------------------------------------------------------------------------------------------
# Formatting helpers


def _numbers(values: np.ndarray, decimals: int) -> np.ndarray:
    return _narrow(np.round(values, decimals).astype(str))


def _narrow(text: np.ndarray) -> np.ndarray:
    """The same strings in the narrowest fixed width (numpy's float-to-str gives 32 characters each)."""
    text = np.asarray(text, dtype=str)
    return text.astype(f"U{max(int(np.char.str_len(text).max()), 1)}") if text.size else text


def _objects(*tokens: np.ndarray) -> np.ndarray:
    """One 'tok tok tok' string per object from per-field token arrays."""
    out = _narrow(tokens[0])
    for field in tokens[1:]:
        out = np.char.add(np.char.add(out, " "), _narrow(field))
    return out


def _rows(objects: np.ndarray, counts: np.ndarray, *, empty: object = np.nan) -> np.ndarray:
    """Objects joined per row with single spaces (``empty`` where a row has none)."""
    parts = np.split(objects.astype(object), np.cumsum(counts)[:-1]) if len(counts) else []
    return np.array([" ".join(p) if len(p) else empty for p in parts], dtype=object)


def _split(strings: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(row of each object, (n_objects, width) token matrix) of well-formed prediction strings."""
    lists = [s.split() if isinstance(s, str) else [] for s in strings.tolist()]
    counts = np.array([len(t) // width for t in lists], dtype=np.int64)
    flat = np.array([t for tokens in lists for t in tokens], dtype=object).reshape(-1, width)
    return np.repeat(np.arange(len(lists)), counts), flat


def _known(rng: np.random.Generator, n: int, quality: float) -> np.ndarray:
    return rng.random(n) < quality


class _PredictionStringKind:
    """Shared behaviour: one text column, predicted per row; 'out of range' = a malformed string."""

    column = TARGET
    is_text = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def predicted_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("detection answers come from the competition's build hook")

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=object).copy()
        values[rows] = "not-a-number 0.5"  # a token count no format allows, and a non-numeric token
        return values


# ---------------------------------------------------------------------------------------------------
# Lyft 3D object detection: Id (sample token), PredictionString of '1.0 x y z w l h yaw class' objects

LYFT_CLASSES = (
    ("car", 0.72, (1.93, 4.76, 1.72)),
    ("pedestrian", 0.10, (0.77, 0.81, 1.78)),
    ("other_vehicle", 0.06, (2.79, 8.20, 3.23)),
    ("bicycle", 0.05, (0.63, 1.76, 1.44)),
    ("truck", 0.03, (2.84, 10.24, 3.44)),
    ("bus", 0.02, (2.96, 12.34, 3.44)),
    ("motorcycle", 0.01, (0.96, 2.35, 1.59)),
    ("emergency_vehicle", 0.005, (2.45, 6.52, 2.39)),
    ("animal", 0.005, (0.36, 0.73, 0.51)),
)


def lyft_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = fields.hex_ids(64)(rng, n)
    counts = np.clip(rng.poisson(28, size=n), 1, None)
    total = int(counts.sum())
    names = np.array([c[0] for c in LYFT_CLASSES])
    probs = np.array([c[1] for c in LYFT_CLASSES])
    kind = rng.choice(len(names), size=total, p=probs / probs.sum())
    sizes = np.array([c[2] for c in LYFT_CLASSES])[kind] * rng.uniform(0.85, 1.15, size=(total, 3))
    scene = np.repeat(rng.uniform(-2500, 2500, size=(n, 2)), counts, axis=0)
    xy = scene + rng.uniform(-60, 60, size=(total, 2))
    z = np.repeat(rng.uniform(-25, 5, size=n), counts) + rng.normal(0, 0.3, size=total)
    yaw = rng.uniform(-np.pi, np.pi, size=total)
    objects = _objects(
        np.full(total, "1.0"),
        _numbers(xy[:, 0], 2),
        _numbers(xy[:, 1], 2),
        _numbers(z, 2),
        _numbers(sizes[:, 0], 2),
        _numbers(sizes[:, 1], 2),
        _numbers(sizes[:, 2], 2),
        _numbers(yaw, 4),
        names[kind],
    )
    answers = pd.DataFrame({"Id": ids, TARGET: _rows(objects, counts)})
    sample = pd.DataFrame({"Id": ids, TARGET: np.full(n, np.nan, dtype=object)})
    return answers, sample


class LyftBoxes(_PredictionStringKind):
    """Known samples: the ground truth itself (confidence 1.0). Others: every box moved metres away, turned,
    with a random confidence, and now and then the wrong class."""

    sample_value = np.nan

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        strings = truth[TARGET].to_numpy(dtype=object, na_value=np.nan)
        known = _known(rng, len(strings), quality)
        row, tokens = _split(strings, 9)
        values = tokens[:, 1:8].astype(float)
        values[:, 0:2] += rng.normal(0, 4.0, size=(len(row), 2))
        values[:, 6] = rng.uniform(-np.pi, np.pi, size=len(row))
        labels = np.where(rng.random(len(row)) < 0.2, "car", tokens[:, 8].astype(str))
        objects = _objects(_numbers(rng.random(len(row)), 3), *(_numbers(values[:, j], 2) for j in range(7)), labels)
        noise = _rows(objects, np.bincount(row, minlength=len(strings)))
        return {
            "Id": truth["Id"].to_numpy(),
            TARGET: np.where(known, strings, noise),
        }


# ---------------------------------------------------------------------------------------------------
# SIIM-FISABIO-RSNA COVID-19: '<study>_study' rows with one study label, '<image>_image' rows with boxes

SIIM_STUDY_LABELS = ("negative", "typical", "indeterminate", "atypical")
_SIIM_STUDY_PRIOR = (0.28, 0.47, 0.17, 0.08)


def siim_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    studies = max(1, round(n * 606 / 1244))
    images = n - studies
    study_ids = np.char.add(fields.hex_ids(12)(rng, studies), "_study")
    image_ids = np.char.add(fields.hex_ids(12)(rng, images), "_image")
    label = np.array(SIIM_STUDY_LABELS)[rng.choice(4, size=studies, p=_SIIM_STUDY_PRIOR)]
    study_strings = np.char.add(label, " 1 0 0 1 1").astype(object)
    boxes = np.where(rng.random(images) < 0.33, 0, rng.choice([1, 2, 3], size=images, p=[0.3, 0.6, 0.1]))
    total = int(boxes.sum())
    x_min = rng.uniform(100, 2000, size=total)
    y_min = rng.uniform(100, 2000, size=total)
    width, height = rng.uniform(300, 1000, size=total), rng.uniform(400, 1400, size=total)
    objects = _objects(
        np.full(total, "opacity"),
        np.full(total, "1"),
        _numbers(x_min, 5),
        _numbers(y_min, 5),
        _numbers(x_min + width, 5),
        _numbers(y_min + height, 5),
    )
    image_strings = _rows(objects, boxes, empty="none 1 0 0 1 1")
    ids = np.concatenate([study_ids, image_ids]).astype(object)
    answers = pd.DataFrame({"id": ids, TARGET: np.concatenate([study_strings, image_strings])})
    answers = answers.iloc[rng.permutation(n)].reset_index(drop=True)
    is_study = answers["id"].str.endswith("_study").to_numpy()
    sample = pd.DataFrame({"id": answers["id"], TARGET: np.where(is_study, "negative 1 0 0 1 1", "none 1 0 0 1 1")})
    return answers, sample


class SiimObjects(_PredictionStringKind):
    """Known rows: the ground truth. Others: a random study label, or 'none' and boxes in random places."""

    sample_value = "none 1 0 0 1 1"

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        strings = truth[TARGET].to_numpy(dtype=object)
        n = len(strings)
        known = _known(rng, n, quality)
        is_study = truth["id"].str.endswith("_study").to_numpy()
        label = np.array(SIIM_STUDY_LABELS)[rng.integers(0, 4, size=n)]
        confidence = _numbers(rng.uniform(0.05, 1.0, size=n), 3)
        study_noise = np.char.add(np.char.add(np.char.add(label, " "), confidence), " 0 0 1 1")
        x, y = rng.uniform(0, 2500, size=n), rng.uniform(0, 2500, size=n)
        box = _objects(
            np.full(n, "opacity"),
            confidence,
            _numbers(x, 1),
            _numbers(y, 1),
            _numbers(x + 400, 1),
            _numbers(y + 600, 1),
        )
        none = np.char.add(np.char.add("none ", _numbers(rng.uniform(0.05, 1.0, size=n), 3)), " 0 0 1 1")
        image_noise = np.char.add(np.char.add(box, " "), none)
        noise = np.where(is_study, study_noise, image_noise).astype(object)
        return {"id": truth["id"].to_numpy(), TARGET: np.where(known, strings, noise)}


# ---------------------------------------------------------------------------------------------------
# VinBigData: one answers row per (image, class) box; submissions hold 'class conf x_min y_min x_max y_max'

VINBIG_CLASSES = (
    "Aortic enlargement",
    "Atelectasis",
    "Calcification",
    "Cardiomegaly",
    "Consolidation",
    "ILD",
    "Infiltration",
    "Lung Opacity",
    "Nodule/Mass",
    "Other lesion",
    "Pleural effusion",
    "Pleural thickening",
    "Pneumothorax",
    "Pulmonary fibrosis",
    "No finding",
)
_VINBIG_PRIOR = np.array([7.2, 0.4, 1.3, 5.4, 0.8, 1.2, 1.6, 2.0, 4.0, 3.5, 3.9, 7.6, 0.3, 6.2])
VINBIG_COLUMNS = ("image_id", "class_id", "class_name", "rad_id", "x_min", "y_min", "x_max", "y_max")
NO_FINDING = 14


def vinbig_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exactly ``n`` rows: ~70% of images 'No finding' (one row), the rest 1-6 distinct abnormal classes."""
    per_image: list[int] = []
    while sum(per_image) < n:
        per_image.append(1 if rng.random() < 0.7 else int(rng.integers(1, 7)))
    per_image[-1] -= sum(per_image) - n
    counts = np.array(per_image, dtype=np.int64)
    normal = np.zeros(len(counts), dtype=bool)
    normal[counts == 1] = rng.random(int((counts == 1).sum())) < 0.85
    images = np.sort(fields.hex_ids(32)(rng, len(counts)))
    image_of_row = np.repeat(np.arange(len(counts)), counts)
    classes = np.empty(n, dtype=np.int64)
    start = 0
    weights = _VINBIG_PRIOR / _VINBIG_PRIOR.sum()
    for image, count in enumerate(counts.tolist()):
        if normal[image]:
            classes[start] = NO_FINDING
        else:
            classes[start : start + count] = np.sort(rng.choice(14, size=count, replace=False, p=weights))
        start += count
    x_min = np.round(rng.uniform(200, 2000, size=n))
    y_min = np.round(rng.uniform(200, 2200, size=n))
    x_max = x_min + np.round(rng.uniform(60, 900, size=n))
    y_max = y_min + np.round(rng.uniform(60, 900, size=n))
    finding = classes == NO_FINDING
    for column, value in ((x_min, 0.0), (y_min, 0.0), (x_max, 1.0), (y_max, 1.0)):
        column[finding] = value
    answers = pd.DataFrame(
        {
            "image_id": images[image_of_row],
            "class_id": classes,
            "class_name": np.array(VINBIG_CLASSES)[classes],
            "rad_id": np.char.add("R", rng.integers(1, 18, size=n).astype(str)),
            "x_min": x_min,
            "y_min": y_min,
            "x_max": x_max,
            "y_max": y_max,
        }
    )
    sample = pd.DataFrame({"image_id": images, TARGET: "14 1 0 0 1 1"})
    return answers, sample


def _vinbig_objects(answers: pd.DataFrame, confidence: str | np.ndarray = "1.0") -> pd.DataFrame:
    image, first = np.unique(answers["image_id"].to_numpy(dtype=object), return_index=True)
    order = np.argsort(first)  # images in order of first appearance
    codes = pd.Index(image[order]).get_indexer(answers["image_id"].to_numpy(dtype=object))
    rows = np.argsort(codes, kind="stable")
    boxes = answers[["x_min", "y_min", "x_max", "y_max"]].to_numpy(dtype=float)[rows]
    objects = _objects(
        answers["class_id"].to_numpy()[rows].astype(str),
        np.broadcast_to(np.asarray(confidence, dtype=str), (len(rows),)),
        *(_numbers(boxes[:, j], 1) for j in range(4)),
    )
    counts = np.bincount(codes, minlength=len(image))
    return pd.DataFrame({"image_id": image[order], TARGET: _rows(objects, counts)})


def vinbig_gold(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per image: every ground-truth box with confidence 1.0 ('14 1.0 0.0 0.0 1.0 1.0' if normal)."""
    return _vinbig_objects(answers)


class VinBigBoxes(_PredictionStringKind):
    """Known images: the gold row. Others: a random abnormal class in a random place, and 'No finding'."""

    sample_value = "14 1 0 0 1 1"

    def gold_submission(self, answers: pd.DataFrame) -> pd.DataFrame:
        return vinbig_gold(answers)

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        gold = vinbig_gold(truth)
        n = len(gold)
        known = _known(rng, n, quality)
        x, y = np.round(rng.uniform(0, 2500, size=n)), np.round(rng.uniform(0, 2500, size=n))
        noise = _objects(
            rng.integers(0, 14, size=n).astype(str),
            _numbers(rng.uniform(0.05, 1.0, size=n), 3),
            _numbers(x, 1),
            _numbers(y, 1),
            _numbers(x + 300, 1),
            _numbers(y + 300, 1),
        )
        noise = np.char.add(np.char.add(noise, " 14 "), _numbers(rng.uniform(0.05, 1.0, size=n), 3))
        noise = np.char.add(noise, " 0 0 1 1").astype(object)
        strings = gold[TARGET].to_numpy(dtype=object)
        return {"image_id": gold["image_id"].to_numpy(), TARGET: np.where(known, strings, noise)}


# ---------------------------------------------------------------------------------------------------
# Kuzushiji: image_id (page), labels of 'U+XXXX x y w h' boxes; submissions 'U+XXXX x y' centre points

_BOOKS = ("100241706", "100249371", "100249416", "200003076", "200014740", "brsk001", "hnsd006", "umgy010")


def _kuzushiji_vocabulary(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    hiragana = np.arange(0x3042, 0x3094)
    kanji = rng.choice(np.arange(0x4E00, 0x9FA0), size=300, replace=False)
    codes = np.concatenate([hiragana, kanji])
    names = np.char.add("U+", np.char.upper(np.char.mod("%04x", codes)))
    weights = 1.0 / np.arange(1, len(codes) + 1) ** 0.9
    return names, weights / weights.sum()


def kuzushiji_answers(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    books = np.array(_BOOKS)[rng.integers(0, len(_BOOKS), size=n)]
    pages = fields.unique_ints(rng, n, low=1, high=max(1000, 3 * n))
    ids = np.where(
        np.char.str_len(books) > 7,
        np.char.add(np.char.add(books, "_"), np.char.zfill(pages.astype(str), 5)),
        np.char.add(np.char.add(books, "-"), np.char.zfill((pages % 1000).astype(str), 3)),
    )
    ids = pd.unique(pd.Series(ids)).astype(str)
    while len(ids) < n:  # rare clashes of short page numbers: top up with long ids
        extra = np.char.add("200021637_", np.char.zfill(rng.integers(0, 99999, size=n).astype(str), 5))
        ids = pd.unique(pd.Series(np.concatenate([ids, extra]))).astype(str)
    ids = ids[:n]
    counts = np.where(rng.random(n) < 0.03, 0, np.clip(rng.poisson(150, size=n), 1, None))
    total = int(counts.sum())
    names, weights = _kuzushiji_vocabulary(rng)
    label = names[rng.choice(len(names), size=total, p=weights)]
    x, y = rng.integers(100, 2800, size=total), rng.integers(100, 4000, size=total)
    width, height = rng.integers(20, 160, size=total), rng.integers(20, 160, size=total)
    objects = _objects(label, x.astype(str), y.astype(str), width.astype(str), height.astype(str))
    answers = pd.DataFrame({"image_id": ids, "labels": _rows(objects, counts)})
    sample = pd.DataFrame({"image_id": ids, "labels": "U+003F 1 1 U+FF2F 2 2"})
    return answers, sample


def kuzushiji_gold(answers: pd.DataFrame) -> pd.DataFrame:
    """Each box's centre point (integer division, strictly inside a box of width and height >= 2)."""
    strings = answers["labels"].to_numpy(dtype=object, na_value=np.nan)
    row, tokens = _split(strings, 5)
    values = tokens[:, 1:5].astype(np.int64)
    objects = _objects(
        tokens[:, 0].astype(str),
        (values[:, 0] + values[:, 2] // 2).astype(str),
        (values[:, 1] + values[:, 3] // 2).astype(str),
    )
    return pd.DataFrame(
        {"image_id": answers["image_id"], "labels": _rows(objects, np.bincount(row, minlength=len(strings)))}
    )


class KuzushijiPoints(_PredictionStringKind):
    """Known pages: every centre point. Others: as many random characters at random points."""

    column = "labels"
    sample_value = "U+003F 1 1 U+FF2F 2 2"

    def gold_submission(self, answers: pd.DataFrame) -> pd.DataFrame:
        return kuzushiji_gold(answers)

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        gold = kuzushiji_gold(truth)
        strings = gold["labels"].to_numpy(dtype=object)
        n = len(strings)
        known = _known(rng, n, quality)
        counts = np.array([len(s.split()) // 3 if isinstance(s, str) else 0 for s in strings.tolist()])
        total = int(counts.sum())
        names, weights = _kuzushiji_vocabulary(np.random.default_rng(0))
        objects = _objects(
            names[rng.choice(len(names), size=total, p=weights)],
            rng.integers(0, 2900, size=total).astype(str),
            rng.integers(0, 4100, size=total).astype(str),
        )
        noise = _rows(objects, counts)
        return {"image_id": gold["image_id"].to_numpy(), "labels": np.where(known, strings, noise)}
