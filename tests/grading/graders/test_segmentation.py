"""RLE segmentation graders: contrails (global Dice), HuBMAP (mean Dice), TGS (IoU sweep), UW-Madison
(Dice + 3-D Hausdorff) and Vesuvius (pixel F0.5).

Expected scores come from a plain-Python decoder and metric loops written here, from scikit-learn's
``fbeta_score``, scipy's ``directed_hausdorff`` and numpy's ``histogram2d`` (TGS), never from the graders'
own helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import directed_hausdorff
from sklearn.metrics import fbeta_score

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders.segmentation.rle import parse_column

from .frames import GRADERS, csv_frame, grade, reject, roundtrip

CONTRAILS = "google-research-identify-contrails-reduce-global-warming"
HUBMAP = "hubmap-kidney-segmentation"
TGS = "tgs-salt-identification-challenge"
UW = "uw-madison-gi-tract-image-segmentation"
VESUVIUS = "vesuvius-challenge-ink-detection"


# ---------------------------------------------------------------------------------------------------
# An independent reference: decode pixel by pixel, score with loops


def decode(rle, height: int, width: int, *, order: str = "column") -> np.ndarray:
    """A 2-D mask: pixels numbered from 1 down each column ('column') or along each row ('row')."""
    flat = [False] * (height * width)
    if isinstance(rle, str) and rle.strip() not in ("", "-"):
        numbers = [int(t) for t in rle.split()]
        for start, length in zip(numbers[0::2], numbers[1::2]):
            for pixel in range(start - 1, start - 1 + length):
                if pixel < len(flat):
                    flat[pixel] = True
    if order == "column":
        return np.array(flat).reshape(width, height).T
    return np.array(flat).reshape(height, width)


def encode(mask: np.ndarray, *, order: str = "column") -> str:
    flat = (mask.T if order == "column" else mask).ravel().tolist() + [False]
    pairs, start = [], None
    for pixel, on in enumerate(flat):
        if on and start is None:
            start = pixel
        elif not on and start is not None:
            pairs += [start + 1, pixel - start]
            start = None
    return " ".join(map(str, pairs))


def dice(a: np.ndarray, b: np.ndarray):
    total = int(a.sum()) + int(b.sum())
    return None if total == 0 else 2 * int((a & b).sum()) / total


def random_masks(rng, count: int, height: int, width: int, *, empty_share: float = 0.3) -> list[np.ndarray]:
    masks = []
    for _ in range(count):
        mask = np.zeros((height, width), dtype=bool)
        if rng.random() >= empty_share:
            for _ in range(int(rng.integers(1, 3))):
                y, x = rng.integers(0, height), rng.integers(0, width)
                mask[max(0, y - 2) : y + int(rng.integers(1, 5)), max(0, x - 3) : x + int(rng.integers(1, 4))] = True
        masks.append(mask)
    return masks


def jitter(rng, masks: list[np.ndarray]) -> list[np.ndarray]:
    """Each mask moved by up to a pixel, with some pixels flipped: overlaps of every size."""
    out = []
    for mask in masks:
        moved = np.roll(mask, (int(rng.integers(-1, 2)), int(rng.integers(-1, 2))), axis=(0, 1))
        moved ^= rng.random(mask.shape) < 0.03
        out.append(moved)
    return out


def unchanged(*frames: pd.DataFrame):
    """Copies to compare with after grading: the graders must not modify their inputs."""
    return [f.copy(deep=True) for f in frames]


def assert_same(before: list[pd.DataFrame], *after: pd.DataFrame) -> None:
    for old, new in zip(before, after):
        pd.testing.assert_frame_equal(old, new)


# ---------------------------------------------------------------------------------------------------
# The RLE parser


def test_the_parser_reads_what_python_reads_and_refuses_the_rest():
    runs = parse_column(pd.Series(["1 3 10 2", "", " 5\t5\n", "+5 1", "1_0 2", "０3 1", np.nan, "007 2"]), column="m")
    assert runs.offsets.tolist() == [0, 2, 2, 3, 4, 5, 6, 6, 7]
    assert runs.starts.tolist() == [0, 9, 4, 4, 9, 2, 6]
    assert (runs.ends - runs.starts).tolist() == [3, 2, 5, 1, 2, 1, 2]
    for text, fragment in (
        ("1 2.5", "'2.5'"),
        ("1 x", "'x'"),
        ("1 -2", "has length -2"),
        ("1 2 3", "odd count of numbers"),
        ("1 99999999999999999999", "far beyond any image size"),
    ):
        with pytest.raises(InvalidSubmission, match="row 2") as caught:
            parse_column(pd.Series(["1 1", text]), column="m")
        assert fragment in str(caught.value)


def test_the_parser_reads_a_column_of_only_empty_or_blank_cells_as_empty_masks():
    for cells in ([""], ["", " \t", np.nan], ["\x0c\r"]):
        runs = parse_column(pd.Series(cells, dtype=object), column="m")
        assert runs.offsets.tolist() == [0] * (len(cells) + 1) and not len(runs.starts)


def test_the_parser_agrees_with_python_on_random_text():
    rng = np.random.default_rng(4)
    cells = []
    for _ in range(300):
        count = int(rng.integers(0, 30))
        lengths = rng.integers(1, 9, size=count)
        gaps = rng.integers(1, 10 ** int(rng.integers(1, 12)), size=count)
        starts = np.cumsum(gaps + lengths) - lengths
        pieces = [str(v) for pair in zip(starts.tolist(), lengths.tolist()) for v in pair]
        spaces = rng.choice([" ", "  ", "\t", " \n "], size=len(pieces))
        cells.append("".join(g + p for g, p in zip(spaces, pieces)) + " " * int(rng.integers(0, 2)))
    runs = parse_column(pd.Series(cells), column="m")
    for row, text in enumerate(cells):
        numbers = [int(t) for t in text.split()]
        lo, hi = runs.offsets[row], runs.offsets[row + 1]
        assert (runs.starts[lo:hi] + 1).tolist() == numbers[0::2]
        assert (runs.ends[lo:hi] - runs.starts[lo:hi]).tolist() == numbers[1::2]


def test_the_parser_reports_answers_problems_as_such():
    with pytest.raises(AnswersProblem, match="the answers' column 'm'"):
        parse_column(pd.Series(["0 1"]), column="m", error=AnswersProblem, whose="the answers' ")


# ---------------------------------------------------------------------------------------------------
# Contrails: global Dice


def contrails_answers(masks: list[np.ndarray], ids=None) -> pd.DataFrame:
    ids = ids if ids is not None else [1000834164244036115 + 7919 * k for k in range(len(masks))]
    texts = [encode(m) or "-" for m in masks]
    return roundtrip(pd.DataFrame({"record_id": ids, "encoded_pixels": texts, "height": 8, "width": 6}))


def contrails_submission(answers: pd.DataFrame, masks: list[np.ndarray]) -> pd.DataFrame:
    texts = [encode(m) or "-" for m in masks]
    return roundtrip(pd.DataFrame({"record_id": answers["record_id"], "encoded_pixels": texts}))


def test_contrails_scores_dice_over_all_pixels_at_once():
    rng = np.random.default_rng(0)
    truth = random_masks(rng, 12, 8, 6)
    answers = contrails_answers(truth)
    assert grade(CONTRAILS, contrails_submission(answers, truth), answers) == 1.0
    predicted = jitter(rng, truth)
    submission = contrails_submission(answers, predicted)
    before = unchanged(submission, answers)
    shared = sum(int((p & t).sum()) for p, t in zip(predicted, truth))
    total = sum(int(p.sum()) + int(t.sum()) for p, t in zip(predicted, truth))
    assert grade(CONTRAILS, submission, answers) == pytest.approx(2 * shared / total)
    per_image_mean = np.mean([d for d in map(dice, predicted, truth) if d is not None])
    assert grade(CONTRAILS, submission, answers) != pytest.approx(per_image_mean)  # global, not per image
    assert_same(before, submission, answers)
    shuffled = submission.iloc[::-1].reset_index(drop=True)
    assert grade(CONTRAILS, shuffled, answers) == grade(CONTRAILS, submission, answers)


def test_contrails_hand_worked_example():
    # record 1: truth pixels 1-3 and 10-11, prediction 1-3; record 2: both '-'; record 3: truth 5-9,
    # prediction 5-6 and 20-21. Dice = 2 x (3 + 2) / ((5 + 3) + (5 + 4)) = 10 / 17
    answers = csv_frame("record_id,encoded_pixels,height,width\n1,1 3 10 2,5,5\n2,-,5,5\n3,5 5,5,5\n")
    submission = csv_frame("record_id,encoded_pixels\n3,5 2 20 2\n2,-\n1,1 3\n")
    assert grade(CONTRAILS, submission, answers) == pytest.approx(10 / 17)


def test_contrails_is_nan_when_every_mask_is_empty_and_cuts_runs_at_the_image_end():
    answers = csv_frame("record_id,encoded_pixels,height,width\n1,-,4,4\n2,-,4,4\n")
    assert math.isnan(grade(CONTRAILS, csv_frame("record_id,encoded_pixels\n1,-\n2,-\n"), answers))
    answers = csv_frame("record_id,encoded_pixels,height,width\n1,15 2,4,4\n2,-,4,4\n")
    # pixels 15-16 are the last two; 15-24 is cut at 16 and 30-31 draws nothing
    submission = csv_frame("record_id,encoded_pixels\n1,15 10\n2,30 2\n")
    assert grade(CONTRAILS, submission, answers) == 1.0


def test_contrails_refuses_empty_cells_bad_ids_and_bad_runs():
    answers = csv_frame("record_id,encoded_pixels,height,width\n11,1 3,5,5\n12,-,5,5\n13,5 5,5,5\n")
    reject(
        CONTRAILS,
        csv_frame("record_id,encoded_pixels\n11,1 3\n12,\n13,5 5\n"),
        answers,
        "1 empty cell",
        "row 2 (id 12)",
        "write '-'",
    )
    reject(CONTRAILS, csv_frame("record_id,encoded_pixels\n11,1 3\n14,-\n13,5 5\n"), answers, "12", "14")
    reject(CONTRAILS, csv_frame("record_id,encoded_pixels\n11,1 3\n13,5 5\n"), answers, "expected 3 rows")
    reject(CONTRAILS, csv_frame("record_id,mask\n11,1 3\n12,-\n13,5 5\n"), answers, "missing encoded_pixels")
    for bad, fragment in (
        ("5 2 1 1", "pair 2 (1 1) starts before the pair in front of it (5 2)"),
        ("1 3 3 1", "pair 2 (3 1) overlaps the pair in front of it (1 3, pixels 1 to 3)"),
        ("0 2", "pair 1 (0 2) starts at 0"),
        ("3 0", "pair 1 (3 0) has length 0"),
    ):
        submission = csv_frame(f"record_id,encoded_pixels\n11,1 3\n12,-\n13,{bad}\n")
        reject(CONTRAILS, submission, answers, "row 3 (id 13)", fragment)
    touching = csv_frame("record_id,encoded_pixels\n11,1 2 3 1\n12,-\n13,5 5\n")
    assert grade(CONTRAILS, touching, answers) == 1.0  # touching runs do not overlap


def test_contrails_refuses_a_column_of_numbers():
    answers = csv_frame("record_id,encoded_pixels,height,width\n11,1 3,5,5\n12,-,5,5\n")
    reject(CONTRAILS, csv_frame("record_id,encoded_pixels\n11,3\n12,4\n"), answers, "holds 2 numbers", "row 1")


# ---------------------------------------------------------------------------------------------------
# HuBMAP: mean per-image Dice


def hubmap_frames(truth: list[np.ndarray], predicted: list[np.ndarray | None]):
    ids = ["aaa6a05cc", "2f6ecfcdf", "cb2d976f4", "0486052bb"][: len(truth)]
    answers = roundtrip(
        pd.DataFrame(
            {
                "id": ids,
                "encoding": [encode(m) or None for m in truth],
                "width_pixels": [m.shape[1] for m in truth],
                "height_pixels": [m.shape[0] for m in truth],
            }
        )
    )
    texts = [None if p is None else (encode(p) or None) for p in predicted]
    return roundtrip(pd.DataFrame({"id": ids, "predicted": texts})), answers


def test_hubmap_averages_the_dice_of_each_image():
    rng = np.random.default_rng(1)
    truth = [random_masks(rng, 1, 30, 20, empty_share=0)[0] for _ in range(3)]
    perfect, answers = hubmap_frames(truth, truth)
    assert grade(HUBMAP, perfect, answers) == 1.0
    predicted = jitter(rng, truth)
    submission, _ = hubmap_frames(truth, predicted)
    before = unchanged(submission, answers)
    expected = np.mean([dice(p, t) for p, t in zip(predicted, truth)])
    assert grade(HUBMAP, submission, answers) == pytest.approx(expected)
    assert grade(HUBMAP, submission.iloc[[2, 0, 1]], answers) == pytest.approx(expected)
    assert_same(before, submission, answers)


def test_hubmap_counts_an_image_with_both_masks_empty_as_one_and_reads_empty_cells_as_empty():
    empty = np.zeros((6, 5), dtype=bool)
    full = np.ones((6, 5), dtype=bool)
    submission, answers = hubmap_frames([empty, full, full], [None, None, full])
    assert submission["predicted"].isna().sum() == 2
    assert grade(HUBMAP, submission, answers) == pytest.approx((1 + 0 + 1) / 3)


def test_hubmap_refuses_bad_ids_numbers_and_bad_runs():
    full = np.ones((6, 5), dtype=bool)
    submission, answers = hubmap_frames([full, full], [full, full])
    reject(HUBMAP, submission.assign(id=["aaa6a05cc", "x"]), answers, "'2f6ecfcdf'", "'x'")
    reject(HUBMAP, submission.assign(predicted=[3, np.nan]), answers, "holds 1 number", "row 1 (id 'aaa6a05cc')")
    reject(HUBMAP, submission.assign(predicted=["1 30", "4 2 2 2"]), answers, "row 2 (id '2f6ecfcdf')", "pair 2")
    reject(HUBMAP, submission.drop(columns="predicted"), answers, "missing predicted")


# ---------------------------------------------------------------------------------------------------
# TGS salt: IoU sweep


TGS_PIXELS = 101 * 101
THRESHOLDS = [0.5 + 0.05 * k for k in range(10)]  # 0.5 + 0.05 * 2 = 0.6000000000000001, like numpy


def histogram_iou(truth: np.ndarray, predicted: np.ndarray) -> float:
    """The salt IoU as the public TGS kernels compute it: numpy's histogram2d with two bins per mask over
    the values present, the background row and column dropped."""
    t, p = truth.astype(np.uint8).ravel(), predicted.astype(np.uint8).ravel()
    intersection = np.histogram2d(t, p, bins=(2, 2))[0]
    area_true = np.histogram(t, bins=2)[0][:, None]
    area_predicted = np.histogram(p, bins=2)[0][None, :]
    union = area_true + area_predicted - intersection
    return float(intersection[1, 1] / union[1, 1])


def iou_sweep_reference(predicted: np.ndarray, truth: np.ndarray) -> float:
    if not truth.any():  # an image without salt: 1 for an empty prediction, else 0
        return 0.0 if predicted.any() else 1.0
    iou = histogram_iou(truth, predicted)
    return sum(1.0 if iou > t else 0.0 for t in THRESHOLDS) / len(THRESHOLDS)


def tgs_frames(truth: list[np.ndarray], predicted: list[np.ndarray]):
    ids = [f"{k:03d}a1742c7" for k in range(len(truth))]
    answers = roundtrip(pd.DataFrame({"id": ids, "rle_mask": [encode(m) or None for m in truth]}))
    submission = roundtrip(pd.DataFrame({"id": ids, "rle_mask": [encode(m) or None for m in predicted]}))
    return submission, answers


def test_tgs_scores_each_image_by_the_thresholds_its_iou_exceeds():
    rng = np.random.default_rng(2)
    truth = [np.pad(m, ((0, 91), (0, 91))) for m in random_masks(rng, 40, 10, 10)]
    submission, answers = tgs_frames(truth, truth)
    assert grade(TGS, submission, answers) == 1.0
    predicted = jitter(rng, truth)
    submission, answers = tgs_frames(truth, predicted)
    before = unchanged(submission, answers)
    expected = np.mean([iou_sweep_reference(p, t) for p, t in zip(predicted, truth)])
    assert grade(TGS, submission, answers) == pytest.approx(expected)
    assert grade(TGS, submission.sample(frac=1, random_state=0), answers) == pytest.approx(expected)
    assert_same(before, submission, answers)


def test_tgs_matches_the_kernels_histogram_on_empty_and_full_masks():
    rng = np.random.default_rng(12)
    empty, full = np.zeros((101, 101), dtype=bool), np.ones((101, 101), dtype=bool)
    truth, predicted = [], []
    for k in range(60):
        mask = np.zeros((101, 101), dtype=bool)
        mask[: int(rng.integers(1, 101)), : int(rng.integers(1, 101))] = True  # 0% to 100% salt
        truth.append([mask, full, empty][k % 3])
        predicted.append([empty, full, mask, np.roll(mask, 3, axis=1)][k % 4])
    submission, answers = tgs_frames(truth, predicted)
    expected = np.mean([iou_sweep_reference(p, t) for p, t in zip(predicted, truth)])
    assert expected > 0.2  # the empty predictions of images with salt do earn something
    assert grade(TGS, submission, answers) == pytest.approx(expected, abs=1e-12)


# Masks of 101 x 101 = 10201 pixels. numpy.histogram(bins=2) splits [min, max] of the values present in
# two; a constant mask has the range [v - 0.5, v + 0.5], and the last bin is closed:
#   mixed 0/1 mask: edges [0, 0.5, 1]      -> 0 in bin 0 (background), 1 in bin 1 (salt)
#   empty (all 0):  edges [-0.5, 0, 0.5]   -> 0 in bin 1: every pixel counts as salt
#   full (all 1):   edges [0.5, 1, 1.5]    -> 1 in bin 1: every pixel is salt, as it should be
# IoU = histogram2d[1, 1] / (area_true[1] + area_predicted[1] - histogram2d[1, 1]); the image scores the
# share of thresholds 0.5, 0.55, ..., 0.95 that the IoU strictly exceeds.
@pytest.mark.parametrize(
    ("truth", "predicted", "iou", "expected"),
    [
        # salt 6000 px, nothing predicted: [[0, 4201], [0, 6000]], areas [4201, 6000] and [0, 10201]
        ("1 6000", None, 6000 / TGS_PIXELS, 0.2),  # IoU 0.588 passes 0.50 and 0.55
        # all salt, nothing predicted: [[0, 0], [0, 10201]], areas [0, 10201] and [0, 10201]
        ("1 10201", None, 1.0, 1.0),
        # salt 5000 px, nothing predicted: IoU 0.490 passes no threshold
        ("1 5000", None, 5000 / TGS_PIXELS, 0.0),
        # salt 6000 px, all predicted: [[0, 4201], [0, 6000]], areas [4201, 6000] and [0, 10201]
        ("1 6000", "1 10201", 6000 / TGS_PIXELS, 0.2),
        # all salt, 9000 px predicted: [[0, 0], [1201, 9000]], areas [0, 10201] and [1201, 9000]
        ("1 10201", "1 9000", 9000 / TGS_PIXELS, 0.8),  # IoU 0.882 passes 0.50 to 0.85
        # no salt: the histogram would give IoU 6000 / 10201 and 1, but such an image scores 0
        (None, "1 6000", 6000 / TGS_PIXELS, 0.0),
        (None, "1 10201", 1.0, 0.0),
        (None, None, 1.0, 1.0),
    ],
)
def test_tgs_bins_empty_and_full_masks_as_numpys_histogram_does(truth, predicted, iou, expected):
    true_mask, predicted_mask = decode(truth, 101, 101), decode(predicted, 101, 101)
    assert histogram_iou(true_mask, predicted_mask) == pytest.approx(iou)
    assert iou_sweep_reference(predicted_mask, true_mask) == expected
    answers = roundtrip(pd.DataFrame({"id": ["0a1742c740", "b"], "rle_mask": [truth, "1 1"]}))
    submission = roundtrip(pd.DataFrame({"id": ["0a1742c740", "b"], "rle_mask": [predicted, "1 1"]}))
    assert grade(TGS, submission, answers) == pytest.approx((expected + 1) / 2)


@pytest.mark.parametrize(
    ("truth", "predicted", "expected"),
    [
        ("1 10", "1 8", 0.6),  # IoU 0.8 passes 0.50-0.75 but not 0.8000000000000003
        ("1 4", "1 3", 0.5),  # IoU exactly 0.75 does not exceed 0.7500000000000002
        ("1 20", "1 19", 0.9),  # IoU 0.95 passes every threshold below 0.9500000000000004
        ("1 2", "1 1", 0.0),  # IoU 0.5 is not above 0.5
        (None, None, 1.0),  # both empty
        (None, "7 3", 0.0),  # salt predicted where there is none
        ("7 3", None, 0.0),  # salt missed: the empty prediction's IoU is 3 / 10201
    ],
)
def test_tgs_hand_worked_thresholds(truth, predicted, expected):
    answers = roundtrip(pd.DataFrame({"id": ["0a1742c740", "b"], "rle_mask": [truth, "1 1"]}))
    submission = roundtrip(pd.DataFrame({"id": ["0a1742c740", "b"], "rle_mask": [predicted, "1 1"]}))
    assert grade(TGS, submission, answers) == pytest.approx((expected + 1) / 2)


def test_tgs_accepts_a_column_of_empty_cells():
    answers = csv_frame("id,rle_mask\n0a1742c740,\nb,1 5\n")
    submission = csv_frame("id,rle_mask\n0a1742c740,\nb,\n")
    assert submission["rle_mask"].dtype == np.float64
    assert grade(TGS, submission, answers) == 0.5


def test_tgs_refuses_extra_columns_numbers_and_bad_ids():
    answers = csv_frame("id,rle_mask\n0a1742c740,1 5\nb,\n")
    perfect = csv_frame("id,rle_mask\n0a1742c740,1 5\nb,\n")
    assert grade(TGS, perfect, answers) == 1.0
    reject(TGS, perfect.assign(extra=1), answers, "expected exactly the columns id, rle_mask", "extra")
    reject(
        TGS,
        csv_frame("id,rle_mask\n0a1742c740,5\nb,\n"),
        answers,
        "'rle_mask' must hold text",
        "5.0 in row 1",
    )
    reject(TGS, csv_frame("id,rle_mask\n1,1 5\n2,\n"), answers, "'id' must hold text", "row 1")
    reject(TGS, csv_frame("id,rle_mask\n0a1742c740,1 5\nc,\n"), answers, "'b'", "'c'")
    reject(
        TGS,
        csv_frame("id,rle_mask\n0a1742c740,1 5 3 3\nb,\n"),
        answers,
        "row 1 (id '0a1742c740')",
        "overlaps",
    )


# ---------------------------------------------------------------------------------------------------
# UW-Madison: 0.4 x Dice + 0.6 x (1 - Hausdorff)


def uw_frames(volumes: dict[str, list[list[np.ndarray]]]):
    """volumes: case-day -> slices -> 3 masks (large bowel, small bowel, stomach)."""
    rows = []
    for case_day, slices in volumes.items():
        for number, masks in enumerate(slices, start=1):
            for organ, mask in zip(("large_bowel", "small_bowel", "stomach"), masks):
                rows.append((f"{case_day}_slice_{number:04d}", organ, encode(mask) or None, *mask.shape))
    return roundtrip(pd.DataFrame(rows, columns=["id", "class", "predicted", "image_height", "image_width"]))


def uw_reference(truth: dict, predicted: dict) -> float:
    dices = []
    for case_day, slices in truth.items():
        for true_slice, predicted_slice in zip(slices, predicted[case_day]):
            dices += [d for d in map(dice, predicted_slice, true_slice) if d is not None]
    distances = []
    for case_day, slices in truth.items():
        true = np.stack([np.logical_or.reduce(masks) for masks in slices])
        pred = np.stack([np.logical_or.reduce(masks) for masks in predicted[case_day]])
        if not true.any() and not pred.any():
            continue
        if (true == pred).all():
            distances.append(0.0)
        elif not true.any() or not pred.any() or pred.sum() > 10 * true.sum():
            distances.append(1.0)
        else:
            u, v = np.argwhere(pred) / np.array(pred.shape), np.argwhere(true) / np.array(true.shape)
            distances.append(max(directed_hausdorff(u, v)[0], directed_hausdorff(v, u)[0]) / math.sqrt(3))
    return 0.4 * np.mean(dices) + 0.6 * (1 - np.mean(distances))


def uw_volumes(rng, case_days: int, depth: int, height: int, width: int) -> dict:
    return {
        f"case{7 + k}_day{k % 3}": [random_masks(rng, 3, height, width, empty_share=0.6) for _ in range(depth)]
        for k in range(case_days)
    }


def test_uw_matches_dice_and_scipy_hausdorff():
    rng = np.random.default_rng(3)
    truth = uw_volumes(rng, 3, 9, 14, 11)
    answers = uw_frames(truth)
    perfect = answers[["id", "class", "predicted"]].copy()
    assert grade(UW, perfect, answers) == 1.0
    predicted = {case: [jitter(rng, masks) for masks in slices] for case, slices in truth.items()}
    submission = uw_frames(predicted)[["id", "class", "predicted"]]
    before = unchanged(submission, answers)
    assert grade(UW, submission, answers) == pytest.approx(uw_reference(truth, predicted), abs=1e-12)
    assert_same(before, submission, answers)


def test_uw_hausdorff_search_is_exact_on_large_sparse_volumes():
    # many voxels far apart: the block search must still find the farthest voxel exactly
    rng = np.random.default_rng(5)
    truth = uw_volumes(rng, 1, 30, 60, 50)
    predicted = {case: [jitter(rng, masks) for masks in slices] for case, slices in truth.items()}
    case = next(iter(predicted))
    predicted[case][29][2] = predicted[case][29][2].copy()
    predicted[case][29][2][59, 49] = True  # one stray voxel in the far corner
    answers = uw_frames(truth)
    submission = uw_frames(predicted)[["id", "class", "predicted"]]
    assert grade(UW, submission, answers) == pytest.approx(uw_reference(truth, predicted), abs=1e-12)


def test_uw_special_cases_of_the_hausdorff_term():
    empty, blob = np.zeros((6, 5), dtype=bool), np.zeros((6, 5), dtype=bool)
    blob[1:3, 1:3] = True
    big = np.ones((6, 5), dtype=bool)
    truth = {"case1_day0": [[blob, empty, empty]], "case2_day0": [[empty, empty, empty]]}
    answers = uw_frames(truth)
    # case 2 is empty on both sides: skipped; case 1 identical: 0
    assert grade(UW, answers[["id", "class", "predicted"]], answers) == 1.0
    # a prediction in the empty case 2 makes its distance 1 and adds no Dice row for it (both empty)
    stray = uw_frames({"case1_day0": [[blob, empty, empty]], "case2_day0": [[empty, blob, empty]]})
    assert grade(UW, stray[["id", "class", "predicted"]], answers) == pytest.approx(0.4 * (1 + 0) / 2 + 0.6 * 0.5)
    # more than 10x the true voxels: distance 1 (30 predicted voxels > 10 x 2 true ones)
    small = np.zeros((6, 5), dtype=bool)
    small[0, 0:2] = True
    truth = {"case1_day0": [[small, empty, empty]]}
    flooded = uw_frames({"case1_day0": [[big, empty, empty]]})[["id", "class", "predicted"]]
    assert grade(UW, flooded, uw_frames(truth)) == pytest.approx(0.4 * (2 * 2 / 32) + 0.6 * 0)


def test_uw_pairs_rows_by_position_and_ignores_submitted_ids():
    rng = np.random.default_rng(6)
    truth = uw_volumes(rng, 2, 4, 8, 7)
    answers = uw_frames(truth)
    perfect = answers[["id", "class", "predicted"]].copy()
    relabelled = perfect.assign(id="whatever", **{"class": "stomach"})
    assert grade(UW, relabelled, answers) == 1.0
    one, two = np.zeros((8, 7), dtype=bool), np.zeros((8, 7), dtype=bool)
    one[1:3, 1:3], two[5:7, 4:6] = True, True
    answers = uw_frames({"case1_day0": [[one, two, two]]})
    swapped = answers[["id", "class", "predicted"]].iloc[[1, 0, 2]].reset_index(drop=True)
    # rows 1 and 2 now hold each other's masks: Dice 0 for both, 1 for row 3; the volume is unchanged
    assert grade(UW, swapped, answers) == pytest.approx(0.4 * (1 / 3) + 0.6 * 1)


def test_uw_refuses_missing_columns_bad_runs_and_another_row_count():
    truth = {"case1_day0": [[np.ones((4, 4), dtype=bool)] * 3]}
    answers = uw_frames(truth)
    perfect = answers[["id", "class", "predicted"]]
    reject(UW, perfect.drop(columns="class"), answers, "missing class")
    reject(UW, perfect.iloc[:2], answers, "expected 3 rows")
    reject(
        UW,
        perfect.assign(predicted=["1 16", "1 4 2 2", "1 16"]),
        answers,
        "row 2 (id 'case1_day0_slice_0001')",
    )


def test_uw_scores_a_file_with_only_the_header_nan():
    # the reference's Dice is nanmean over the submitted rows: over none it is NaN, a valid score
    answers = uw_frames({"case1_day0": [[np.ones((4, 4), dtype=bool)] * 3]})
    header_only = csv_frame("id,class,predicted\n")
    assert len(header_only) == 0
    assert math.isnan(grade(UW, header_only, answers))
    reject(UW, csv_frame("id,predicted\n"), answers, "missing class")


# ---------------------------------------------------------------------------------------------------
# Vesuvius: pixel F0.5


def vesuvius_frames(truth: list[np.ndarray], predicted: list[np.ndarray]):
    ids = list("ab")[: len(truth)]
    answers = roundtrip(
        pd.DataFrame(
            {
                "Id": ids,
                "Predicted": [encode(m, order="row") for m in truth],
                "width": [m.shape[1] for m in truth],
                "height": [m.shape[0] for m in truth],
            }
        )
    )
    submission = roundtrip(pd.DataFrame({"Id": ids, "Predicted": [encode(m, order="row") for m in predicted]}))
    return submission, answers


def test_vesuvius_matches_scikit_learn_fbeta_on_row_major_masks():
    rng = np.random.default_rng(7)
    truth = [random_masks(rng, 1, 40, 30, empty_share=0)[0] for _ in range(2)]
    submission, answers = vesuvius_frames(truth, truth)
    assert grade(VESUVIUS, submission, answers) == 1.0
    predicted = jitter(rng, truth)
    submission, answers = vesuvius_frames(truth, predicted)
    before = unchanged(submission, answers)
    decoded = [
        decode(text, 40, 30, order="row") for text in submission["Predicted"]
    ]  # the row-major layout round-trips
    assert all((d == p).all() for d, p in zip(decoded, predicted))
    expected = np.mean([fbeta_score(t.ravel(), p.ravel(), beta=0.5) for t, p in zip(truth, predicted)])
    assert grade(VESUVIUS, submission, answers) == pytest.approx(expected, abs=1e-15)
    assert_same(before, submission, answers)


def test_vesuvius_scores_no_ink_found_as_zero():
    truth = np.zeros((5, 4), dtype=bool)
    truth[2, 1:3] = True
    answers = roundtrip(pd.DataFrame({"Id": ["a"], "Predicted": [encode(truth, order="row")], "width": 4, "height": 5}))
    assert grade(VESUVIUS, csv_frame("Id,Predicted\na, \n"), answers) == 0.0  # whitespace: an empty mask
    expected = fbeta_score(truth.ravel(), np.zeros(20, dtype=bool), beta=0.5, zero_division=0)
    assert expected == 0.0


def test_vesuvius_refuses_empty_cells_other_ids_and_extra_columns():
    answers = csv_frame("Id,Predicted,width,height\na,1 3,4,5\n")
    reject(VESUVIUS, csv_frame("Id,Predicted\na,\n"), answers, "1 empty cell", "row 1 (id 'a')")
    reject(VESUVIUS, csv_frame("Id,Predicted\nb,1 3\n"), answers, "row 1 (id 'b') should be 'a'")
    reject(VESUVIUS, csv_frame("Id,Predicted,x\na,1 3,1\n"), answers, "exactly the 2 columns Id, Predicted")
    reject(VESUVIUS, csv_frame("Id,Ink\na,1 3\n"), answers, "missing Predicted")
    reject(VESUVIUS, csv_frame("Id,Predicted\na,1 3\na,1 3\n"), answers, "expected 1 row")
    reject(VESUVIUS, csv_frame("Id,Predicted\na,3 2 1 1\n"), answers, "starts before")


# ---------------------------------------------------------------------------------------------------
# Configuration


def test_the_five_competitions_use_the_segmentation_graders():
    names = {c: GRADERS[c]["grader"] for c in (CONTRAILS, HUBMAP, TGS, UW, VESUVIUS)}
    assert names == {
        CONTRAILS: "rle_global_dice",
        HUBMAP: "rle_mean_dice",
        TGS: "rle_iou_sweep",
        UW: "rle_dice_hausdorff",
        VESUVIUS: "rle_fbeta",
    }


def test_answers_with_broken_sizes_are_our_problem_not_the_teams():
    answers = csv_frame("record_id,encoded_pixels,height,width\n1,1 3,0,5\n")
    with pytest.raises(AnswersProblem, match="'height'"):
        grade(CONTRAILS, csv_frame("record_id,encoded_pixels\n1,1 3\n"), answers)
