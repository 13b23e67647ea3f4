"""Masks as run-length encodings: drawing synthetic shapes, a target kind for the simulated agent, and the
builders of the five segmentation competitions' answers.

Shapes are (rotated) ellipses: contrails are long thin ones, salt bodies and glomeruli round ones, ink
strokes short thick ones arranged in lines of text, organs stacks of ellipses that grow and shrink from
slice to slice. Each ellipse is cut into runs line by line with the quadratic formula, all ellipses at
once, so a whole-slide image of 1.5 billion pixels costs as much as its few hundred thousand runs.

Pixels are numbered along a *fast* axis inside lines of a *slow* axis: down each column for the
column-major encodings (fast = the image height), along each row for Vesuvius' row-major one (fast = the
width). The agent only moves runs along the fast axis, so it never needs to know which one that is.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from competitions.demo import fields
from grading.engine.graders.segmentation.rle import Runs, merge, parse_column

# ---------------------------------------------------------------------------------------------------
# Drawing


@dataclass
class Ellipses:
    """Ellipses to draw, each in one mask: centre (slow, fast), semi-axes, angle, and its mask's size."""

    mask: np.ndarray
    slow: np.ndarray
    fast: np.ndarray
    a: np.ndarray
    b: np.ndarray
    angle: np.ndarray
    slow_len: np.ndarray
    fast_len: np.ndarray

    @staticmethod
    def concat(parts: list[Ellipses]) -> Ellipses:
        return Ellipses(*(np.concatenate([getattr(p, f) for p in parts]) for f in Ellipses.__annotations__))


def draw(ellipses: Ellipses, sizes: np.ndarray) -> Runs:
    """The union of the ellipses of each mask, as runs (a pixel is in when its centre is)."""
    e = ellipses
    cos, sin = np.cos(e.angle), np.sin(e.angle)
    reach = np.sqrt((e.a * cos) ** 2 + (e.b * sin) ** 2)
    first = np.maximum(np.ceil(e.slow - reach), 0).astype(np.int64)
    last = np.minimum(np.floor(e.slow + reach), e.slow_len - 1).astype(np.int64)
    lines = np.maximum(last - first + 1, 0)
    owner = np.repeat(np.arange(len(lines)), lines)
    line = first[owner] + np.arange(int(lines.sum())) - np.repeat(np.cumsum(lines) - lines, lines)
    d = line - e.slow[owner]
    a2, b2 = e.a[owner] ** 2, e.b[owner] ** 2
    c, s = cos[owner], sin[owner]
    qa = s * s / a2 + c * c / b2
    qb = 2 * d * c * s * (1 / a2 - 1 / b2)
    qc = d * d * (c * c / a2 + s * s / b2) - 1
    root = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    low = np.maximum(np.ceil(e.fast[owner] + (-qb - root) / (2 * qa)), 0).astype(np.int64)
    high = np.minimum(np.floor(e.fast[owner] + (-qb + root) / (2 * qa)), e.fast_len[owner] - 1).astype(np.int64)
    hit = (low <= high) & (qb * qb - 4 * qa * qc >= 0)
    owner, line, low, high = owner[hit], line[hit], low[hit], high[hit]
    return runs_of_masks(e.mask[owner], line * e.fast_len[owner] + low, line * e.fast_len[owner] + high + 1, sizes)


def runs_of_masks(mask: np.ndarray, starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray) -> Runs:
    """Runs (0-based, any order, possibly overlapping) merged into each mask's sorted, disjoint runs.

    Masks are laid end to end with a one-pixel gap, so runs of neighbouring masks never merge."""
    sizes = np.asarray(sizes, dtype=np.int64)
    base = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes + 1, out=base[1:])
    starts, ends = merge(starts + base[mask], ends + base[mask])
    owner = np.searchsorted(base, starts, side="right") - 1
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=len(sizes)), out=offsets[1:])
    return Runs(offsets, starts - base[owner], ends - base[owner])


def rle_texts(runs: Runs, *, empty: object) -> np.ndarray:
    """Each mask as 'start length' text (1-based starts), ``empty`` for a mask without pixels."""
    pairs = np.empty(2 * len(runs.starts), dtype=np.int64)
    pairs[0::2] = runs.starts + 1
    pairs[1::2] = runs.ends - runs.starts
    numbers = pairs.tolist()
    out = np.full(runs.n, empty, dtype=object)
    bounds = (2 * runs.offsets).tolist()
    for mask in np.flatnonzero(runs.counts).tolist():
        out[mask] = " ".join(map(str, numbers[bounds[mask] : bounds[mask + 1]]))
    return out


def _ellipses(mask: Any, slow: Any, fast: Any, a: Any, b: Any, angle: Any, slow_len: Any, fast_len: Any) -> Ellipses:
    size = len(np.atleast_1d(mask))

    def full(value: Any, dtype: type = np.float64) -> np.ndarray:
        return np.broadcast_to(np.asarray(value, dtype=dtype), (size,)).copy()

    return Ellipses(
        full(mask, np.int64),
        full(slow),
        full(fast),
        full(a),
        full(b),
        full(angle),
        full(slow_len, np.int64),
        full(fast_len, np.int64),
    )


# ---------------------------------------------------------------------------------------------------
# The simulated agent's target kind


@dataclass(frozen=True)
class RleMasks:
    """A mask column in run-length encoding, scored against the answers' masks.

    The agent knows a row (``per_run=False``) or, for a few huge masks, a run (``per_run=True``) when its
    draw ``u < quality`` and copies it; otherwise it moves it along the fast axis (a whole row's mask by
    5-35% of a line, or a run by 0.5-2 of its length), and an empty row gets a small false blob half the
    time. The noise is drawn for every row whatever the quality, so more quality only ever replaces noise
    by the truth.
    """

    column: str  # in the submission
    truth_column: str  # in the answers
    height: str | int  # answers column or fixed size
    width: str | int
    fast_axis: str = "height"  # "height": numbered down columns; "width": along rows
    empty: object = np.nan  # how an empty mask is written: an empty cell, or a token such as '-'
    per_run: bool = False
    sample_value: object = np.nan
    is_text: ClassVar[bool] = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def generate(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        raise NotImplementedError("mask answers come from the competition's builder")

    def _side(self, truth: pd.DataFrame, side: str | int) -> np.ndarray:
        if isinstance(side, int):
            return np.full(len(truth), side, dtype=np.int64)
        return truth[side].to_numpy(dtype=np.int64)

    def predict(self, rng: np.random.Generator, truth: pd.DataFrame, quality: float) -> dict[str, np.ndarray]:
        n = len(truth)
        heights, widths = self._side(truth, self.height), self._side(truth, self.width)
        sizes, line = heights * widths, heights if self.fast_axis == "height" else widths
        empty_token = self.empty if isinstance(self.empty, str) else None
        runs = parse_column(
            truth[self.truth_column], column=self.truth_column, empty_token=empty_token, error=ValueError
        ).clip(sizes)
        owner = runs.mask_of_run()
        lengths = runs.ends - runs.starts
        if self.per_run:
            known = rng.random(len(lengths)) < quality
            sign = rng.choice([-1, 1], size=len(lengths))
            shift = sign * (np.ceil(lengths * rng.uniform(0.5, 2.0, size=len(lengths))).astype(np.int64) + 1)
            blobs = np.zeros(n, dtype=bool)
        else:
            known_rows = rng.random(n) < quality
            sign = rng.choice([-1, 1], size=n)
            row_shift = sign * np.maximum(1, (line * rng.uniform(0.05, 0.35, size=n)).astype(np.int64))
            known, shift = known_rows[owner], row_shift[owner]
            blobs = ~known_rows & (runs.counts == 0) & (rng.random(n) < 0.5)
        moved = np.where(known, 0, shift)
        starts = np.clip(runs.starts + moved, 0, sizes[owner])
        ends = np.clip(runs.ends + moved, 0, sizes[owner])
        extra = _false_blobs(rng, np.flatnonzero(blobs), line, sizes)
        keep = ends > starts
        noisy = runs_of_masks(
            np.concatenate([owner[keep], extra[0]]),
            np.concatenate([starts[keep], extra[1]]),
            np.concatenate([ends[keep], extra[2]]),
            sizes,
        )
        return {self.column: rle_texts(noisy, empty=self.empty)}

    def out_of_range(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """A run starting at pixel 0: starts count from 1, so every grader refuses it."""
        values = np.asarray(values, dtype=object).copy()
        values[rows] = "0 1"
        return values


def _false_blobs(
    rng: np.random.Generator, masks: np.ndarray, line: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small rectangle (2-6 lines of 2-10 pixels) somewhere in each of ``masks``."""
    count = len(masks)
    lines, length = rng.integers(2, 7, size=count), rng.integers(2, 11, size=count)
    at = (rng.random(count) * sizes[masks]).astype(np.int64)
    owner = np.repeat(masks, lines)
    step = np.arange(int(lines.sum())) - np.repeat(np.cumsum(lines) - lines, lines)
    starts = np.repeat(at, lines) + step * line[owner]
    ends = np.minimum(starts + np.repeat(length, lines), sizes[owner])
    inside = starts < ends
    return owner[inside], starts[inside], ends[inside]


# ---------------------------------------------------------------------------------------------------
# google-research-identify-contrails: 256 x 256 records, thin streaks, '-' for none

CONTRAIL_SIDE = 256


def contrails(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = fields.unique_ints(rng, n, low=10**18, high=9_200_000_000_000_000_000)
    streaks = np.where(rng.random(n) < 0.45, 1 + rng.poisson(1.5, size=n), 0)
    mask = np.repeat(np.arange(n), streaks)
    count = len(mask)
    side = CONTRAIL_SIDE
    shapes = _ellipses(
        mask,
        rng.uniform(0, side, count),
        rng.uniform(0, side, count),
        rng.uniform(10, 80, count),
        rng.uniform(0.8, 2.5, count),
        rng.uniform(0, np.pi, count),
        side,
        side,
    )
    sizes = np.full(n, side * side, dtype=np.int64)
    answers = pd.DataFrame(
        {
            "record_id": ids,
            "encoded_pixels": rle_texts(draw(shapes, sizes), empty="-"),
            "height": side,
            "width": side,
        }
    )
    answers["encoded_pixels"] = answers["encoded_pixels"].astype("str")
    sample = pd.DataFrame({"record_id": ids, "encoded_pixels": "-"})
    return answers, sample


# ---------------------------------------------------------------------------------------------------
# hubmap-kidney-segmentation: 3 whole-slide images with glomeruli

# (height, width) of three whole-slide images, within the competition's 13k-50k pixel sides
HUBMAP_FULL_SHAPES = ((31278, 25794), (16180, 27020), (38160, 39000))
HUBMAP_SMALL_SCALE = 16  # small packs: sides and glomeruli 16 times smaller
_PIXELS_PER_GLOMERULUS = 2_500_000


def hubmap(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n == 3 (the full size) draws the whole-slide sizes; any other n, images 16 times smaller."""
    if n == len(HUBMAP_FULL_SHAPES):
        shapes, scale = np.array(HUBMAP_FULL_SHAPES), 1
    else:
        scale = HUBMAP_SMALL_SCALE
        sides = rng.uniform(16_000, 40_000, size=(n, 2)) / scale
        shapes = sides.astype(np.int64)
    heights, widths = shapes[:, 0], shapes[:, 1]
    glomeruli = np.maximum(1, (heights * widths * scale * scale) // _PIXELS_PER_GLOMERULUS)
    mask = np.repeat(np.arange(n), glomeruli)
    count = len(mask)
    radius = rng.uniform(70, 160, count) / scale
    stretch = rng.uniform(0.8, 1.25, count)
    # column-major: lines are columns (slow = x across the width), pixels run down them (fast = y)
    shapes_ = _ellipses(
        mask,
        rng.uniform(0, 1, count) * widths[mask],
        rng.uniform(0, 1, count) * heights[mask],
        radius * stretch,
        radius / stretch,
        rng.uniform(0, np.pi, count),
        widths[mask],
        heights[mask],
    )
    ids = fields.hex_ids(9)(rng, n)
    texts = rle_texts(draw(shapes_, heights * widths), empty=np.nan)
    answers = pd.DataFrame({"id": ids, "encoding": texts, "width_pixels": widths, "height_pixels": heights})
    sample = pd.DataFrame({"id": ids, "predicted": np.full(n, np.nan, dtype=object)})
    return answers, sample


# ---------------------------------------------------------------------------------------------------
# tgs-salt-identification-challenge: 101 x 101 seismic images, ~39% without salt

TGS_SIDE = 101


def tgs_salt(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = np.sort(fields.hex_ids(10)(rng, n))
    salted = rng.random(n) >= 0.39
    bodies = np.where(salted, rng.integers(1, 3, size=n), 0)
    mask = np.repeat(np.arange(n), bodies)
    count = len(mask)
    side = TGS_SIDE
    radius = np.where(rng.random(count) < 0.15, rng.uniform(90, 200, count), rng.uniform(8, 70, count))
    shapes = _ellipses(
        mask,
        rng.uniform(-20, side + 20, count),
        rng.uniform(-20, side + 20, count),
        radius * rng.uniform(0.6, 1.6, count),
        radius,
        rng.uniform(0, np.pi, count),
        side,
        side,
    )
    # a body centred outside the image may miss it; put one more at the centre of such images
    runs = draw(shapes, np.full(n, side * side))
    missed = np.flatnonzero(salted & (runs.counts == 0))
    if len(missed):
        extra = _ellipses(missed, side / 2, side / 2, 20.0, 12.0, 0.3, side, side)
        runs = draw(Ellipses.concat([shapes, extra]), np.full(n, side * side))
    answers = pd.DataFrame({"id": ids, "rle_mask": rle_texts(runs, empty=np.nan)}).astype({"rle_mask": "str"})
    sample = pd.DataFrame({"id": ids, "rle_mask": "1 1"})
    return answers, sample


# ---------------------------------------------------------------------------------------------------
# uw-madison-gi-tract-image-segmentation: 3 rows (organs) per MRI slice, whole case-days

UW_CLASSES = ("large_bowel", "small_bowel", "stomach")
UW_FULL_ROWS = 20_400
_UW_FULL_PLAN = (144,) * 45 + (80,) * 4  # slices per case-day: 6,800 slices
_UW_SMALL_DEPTH = 40
_UW_SHAPES_144 = ((266, 266), (310, 360))  # (height, width)
_UW_SHAPES_80 = ((276, 276), (234, 234))


def uw_rows(n: int) -> int:
    return 3 * max(1, -(-n // 3))


def uw_madison(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    slices = n // 3
    if n == UW_FULL_ROWS:
        plan = list(rng.permutation(np.array(_UW_FULL_PLAN)))
    else:
        plan = [_UW_SMALL_DEPTH] * (slices // _UW_SMALL_DEPTH) + (
            [slices % _UW_SMALL_DEPTH] if slices % _UW_SMALL_DEPTH else []
        )
    # distinct (case, day) pairs, several days of some cases, in id order
    case_days = np.sort(fields.unique_ints(rng, len(plan), low=0, high=155 * 40))
    cases, days = 2 + case_days // 40, case_days % 40
    ids, heights, widths, parts = [], [], [], []
    first_slice = 0
    for k, depth in enumerate(int(d) for d in plan):
        options = _UW_SHAPES_144 if depth == 144 else _UW_SHAPES_80
        height, width = options[int(rng.random() < 0.3)]
        ids += [f"case{cases[k]}_day{days[k]}_slice_{s:04d}" for s in range(1, depth + 1)]
        heights += [height] * depth
        widths += [width] * depth
        parts += _organs(rng, first_slice, depth, height, width)
        first_slice += depth
    heights_a, widths_a = np.repeat(heights, 3), np.repeat(widths, 3)
    runs = draw(Ellipses.concat(parts), heights_a * widths_a)
    answers = pd.DataFrame(
        {
            "id": np.repeat(ids, 3),
            "class": np.tile(UW_CLASSES, slices),
            "predicted": rle_texts(runs, empty=np.nan),
            "image_height": heights_a,
            "image_width": widths_a,
        }
    ).astype({"predicted": "str"})
    sample = answers[["id", "class"]].assign(predicted=np.full(n, np.nan, dtype=object))
    return answers, sample


def _organs(rng: np.random.Generator, first: int, depth: int, height: int, width: int) -> list[Ellipses]:
    """Each organ in a band of slices: blobs whose radius swells and shrinks like an ellipsoid's, centres
    drifting from slice to slice (rows: 3 per slice, large bowel, small bowel, stomach)."""
    parts = []
    for organ, (share, blobs, size) in enumerate(((0.6, 3, 0.07), (0.45, 4, 0.045), (0.35, 1, 0.12))):
        span = max(2, int(depth * share * rng.uniform(0.7, 1.3)))
        top = int(rng.integers(0, max(1, depth - span)))
        z = np.arange(top, min(depth, top + span))
        swell = np.sqrt(np.clip(1 - ((z - z.mean()) / (len(z) / 2 + 1)) ** 2, 0.05, 1))
        for _ in range(blobs):
            centre = rng.uniform(0.25, 0.75, size=2) * (width, height)
            drift = np.cumsum(rng.normal(0, 1.5, size=(len(z), 2)), axis=0)
            radius = size * min(height, width) * rng.uniform(0.7, 1.3) * swell
            rows = 3 * (first + z) + organ
            # column-major: lines are columns (slow = x), pixels run down them (fast = y)
            parts.append(
                _ellipses(
                    rows,
                    centre[0] + drift[:, 0],
                    centre[1] + drift[:, 1],
                    radius * rng.uniform(0.8, 1.4),
                    radius,
                    rng.uniform(0, np.pi),
                    width,
                    height,
                )
            )
    return parts


# ---------------------------------------------------------------------------------------------------
# vesuvius-challenge-ink-detection: one fragment's ink, row-major

VESUVIUS_FULL_SHAPE = (7606, 5249)  # (height, width) of train fragment 3, the test fragment
VESUVIUS_SMALL_SCALE = 10


def vesuvius(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n == 1 (the full size) draws one fragment of the real size; n > 1, n fragments 10 times smaller."""
    scale = 1 if n == 1 else VESUVIUS_SMALL_SCALE
    height, width = (side // scale for side in VESUVIUS_FULL_SHAPE)
    parts = []
    for fragment in range(n):
        line_gap, letter_gap = 150 / scale, 60 / scale
        rows = np.arange(line_gap / 2, height - line_gap / 2, line_gap)
        letters = np.arange(letter_gap / 2, width - letter_gap / 2, letter_gap)
        centre_y, centre_x = (g.ravel() for g in np.meshgrid(rows, letters, indexing="ij"))
        written = rng.random(len(centre_y)) < 0.7
        centre_y, centre_x = centre_y[written], centre_x[written]
        strokes = rng.integers(2, 4, size=len(centre_y))
        y = np.repeat(centre_y, strokes) + rng.normal(0, 12 / scale, strokes.sum())
        x = np.repeat(centre_x, strokes) + rng.normal(0, 12 / scale, strokes.sum())
        count = len(y)
        # row-major: lines are rows (slow = y), pixels run along them (fast = x)
        parts.append(
            _ellipses(
                np.full(count, fragment),
                y,
                x,
                rng.uniform(15, 40, count) / scale,
                np.maximum(rng.uniform(4, 9, count) / scale, 0.8),
                rng.uniform(0, np.pi, count),
                height,
                width,
            )
        )
    runs = draw(Ellipses.concat(parts), np.full(n, height * width))
    ids = [string.ascii_lowercase[k % 26] + (str(k // 26) if k >= 26 else "") for k in range(n)]
    answers = pd.DataFrame(
        {"Id": ids, "Predicted": rle_texts(runs, empty=""), "width": width, "height": height}
    ).astype({"Id": "str", "Predicted": "str"})
    sample = pd.DataFrame({"Id": ids, "Predicted": "1 1 5 1"})
    return answers, sample
