"""Object detection graders: Lyft 3D mAP, SIIM-COVID-19 mAP, VinBigData COCO AP@0.4, Kuzushiji F1.

Each metric is checked against a plain-Python reference written here from the metric text (loops, no
vectorisation), on hand-worked cases and on random submissions.
"""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from grading.engine.graders.detection.geometry import rotated_overlap_areas

from .frames import grade, reject, roundtrip

LYFT = "3d-object-detection-for-autonomous-vehicles"
SIIM = "siim-covid19-detection"
VINBIG = "vinbigdata-chest-xray-abnormalities-detection"
KUZUSHIJI = "kuzushiji-recognition"


# ---------------------------------------------------------------------------------------------------
# Plain-Python references


def _clip_area(subject, clipper) -> float:
    """Sutherland-Hodgman intersection area of two counter-clockwise convex polygons."""
    out = list(subject)
    for i in range(len(clipper)):
        (x0, y0), (x1, y1) = clipper[i], clipper[(i + 1) % len(clipper)]
        points, out = out, []

        def side(p, x0=x0, y0=y0, x1=x1, y1=y1):
            return (x1 - x0) * (p[1] - y0) - (y1 - y0) * (p[0] - x0)

        for j in range(len(points)):
            cur, prev = points[j], points[j - 1]
            sc, sp = side(cur), side(prev)
            if sc >= 0:
                if sp < 0:
                    t = sp / (sp - sc)
                    out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
                out.append(cur)
            elif sp >= 0:
                t = sp / (sp - sc)
                out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
    if len(out) < 3:
        return 0.0
    return abs(sum(out[k][0] * out[k - 1][1] - out[k - 1][0] * out[k][1] for k in range(len(out)))) / 2


def _corners(x, y, w, l, yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return [
        (x + l / 2 * c + w / 2 * s, y + l / 2 * s - w / 2 * c),
        (x + l / 2 * c - w / 2 * s, y + l / 2 * s + w / 2 * c),
        (x - l / 2 * c - w / 2 * s, y - l / 2 * s + w / 2 * c),
        (x - l / 2 * c + w / 2 * s, y - l / 2 * s - w / 2 * c),
    ]


def _iou3d(p, g) -> float:
    """p, g = (x, y, z, w, l, h, yaw)."""
    area = _clip_area(_corners(p[0], p[1], p[3], p[4], p[6]), _corners(g[0], g[1], g[3], g[4], g[6]))
    height = max(0.0, min(p[2] + p[5] / 2, g[2] + g[5] / 2) - max(p[2] - p[5] / 2, g[2] - g[5] / 2))
    inter = area * height
    return min(max(inter / (p[3] * p[4] * p[5] + g[3] * g[4] * g[5] - inter), 0.0), 1.0)


def _lyft_objects(text):
    if not isinstance(text, str):
        return []
    t = text.split()
    return [(float(t[i]), tuple(float(v) for v in t[i + 1 : i + 8]), t[i + 8]) for i in range(0, len(t), 9)]


def _voc_ap(recall, precision) -> float:
    recall = [0.0, *recall, 1.0]
    precision = [0.0, *precision, 0.0]
    for i in range(len(precision) - 1, 0, -1):
        precision[i - 1] = max(precision[i - 1], precision[i])
    return sum((recall[i + 1] - recall[i]) * precision[i + 1] for i in range(len(recall) - 1))


def lyft_reference(submission, answers) -> float:
    predicted = dict(zip(submission["Id"], submission["PredictionString"]))
    pairs = []
    for sample, truth_text in zip(answers["Id"], answers["PredictionString"]):
        truth, preds = _lyft_objects(truth_text), _lyft_objects(predicted[sample])
        classes = sorted({name for _, _, name in truth})
        for threshold in [0.5 + 0.05 * k for k in range(10)]:
            aps = []
            for name in classes:
                gts = [box for _, box, n in truth if n == name]
                mine = sorted([(c, box) for c, box, n in preds if n == name], key=lambda x: -x[0])
                if not mine:
                    aps.append(0.0)
                    continue
                used = [False] * len(gts)
                tp = fp = 0
                recall, precision = [], []
                for _, box in mine:
                    ious = [_iou3d(box, g) for g in gts]
                    best = max(range(len(gts)), key=lambda j: (ious[j], -j))
                    if ious[best] > threshold + 1e-12 and not used[best]:
                        used[best] = True
                        tp += 1
                    else:
                        fp += 1
                    recall.append(tp / len(gts))
                    precision.append(tp / (tp + fp))
                aps.append(_voc_ap(recall, precision))
            pairs.append(sum(aps) / len(aps))
    return sum(pairs) / len(pairs)


def _xyxy_iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _groups6(text):
    t = text.split()
    return [(t[i], float(t[i + 1]), tuple(float(v) for v in t[i + 2 : i + 6])) for i in range(0, len(t), 6)]


def siim_reference(submission, answers) -> float:
    predicted = dict(zip(submission["id"], submission["PredictionString"]))
    truth = {row: _groups6(text) for row, text in zip(answers["id"], answers["PredictionString"])}
    classes = sorted({label for objects in truth.values() for label, _, _ in objects})
    aps = []
    for c in classes:
        y_true, y_score = [], []
        for row, objects in truth.items():
            gts = [box for label, _, box in objects if label == c]
            preds = sorted(
                [(conf, box) for label, conf, box in _groups6(predicted[row]) if label == c],
                key=lambda x: -x[0],
            )
            if not gts and not preds:
                y_true.append(0)
                y_score.append(0.0)
                continue
            free = list(range(len(gts)))
            for conf, box in preds:
                best = max(free, key=lambda j: (_xyxy_iou(box, gts[j]), -j), default=None)
                if best is not None and _xyxy_iou(box, gts[best]) > 0.5:
                    free.remove(best)
                    y_true.append(1)
                else:
                    y_true.append(0)
                y_score.append(conf)
            y_true += [1] * len(free)
            y_score += [0.0] * len(free)
        aps.append(average_precision_score(y_true, y_score))
    return float(np.mean(aps))


def kuzushiji_reference(submission, answers) -> float:
    predicted = dict(zip(submission["image_id"], submission["labels"]))
    tp = fp = fn = 0
    for page, truth in zip(answers["image_id"], answers["labels"]):
        preds = predicted[page]
        p = preds.split(" ") if isinstance(preds, str) else []
        points = [(p[i], float(p[i + 1]), float(p[i + 2])) for i in range(0, len(p), 3)]
        unused = [True] * len(points)
        t = truth.split(" ") if isinstance(truth, str) else []
        for i in range(0, len(t), 5):
            label, x, y, w, h = t[i], float(t[i + 1]), float(t[i + 2]), float(t[i + 3]), float(t[i + 4])
            for k, (pl, px, py) in enumerate(points):
                if unused[k] and pl == label and x < px < x + w and y < py < y + h:
                    unused[k] = False
                    tp += 1
                    break
            else:
                fn += 1
        fp += sum(unused)
    if tp + fp == 0 or tp + fn == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall) if precision and recall else 0.0


# ---------------------------------------------------------------------------------------------------
# Geometry


def test_rotated_overlap_matches_polygon_clipping():
    rng = np.random.default_rng(7)
    n = 400
    a = (
        rng.normal(900, 1, n),
        rng.normal(-1500, 1, n),
        rng.uniform(0.5, 3, n),
        rng.uniform(0.5, 5, n),
        rng.uniform(-4, 4, n),
    )
    b = (
        rng.normal(900, 1, n),
        rng.normal(-1500, 1, n),
        rng.uniform(0.5, 3, n),
        rng.uniform(0.5, 5, n),
        rng.uniform(-4, 4, n),
    )
    areas = rotated_overlap_areas(a, b)
    expected = [_clip_area(_corners(*[v[i] for v in a]), _corners(*[v[i] for v in b])) for i in range(n)]
    assert np.allclose(areas, expected, atol=1e-8)
    assert (areas > 0).mean() > 0.5  # the sample exercises overlaps, not only disjoint pairs


def test_rotated_overlap_of_coincident_and_touching_rectangles():
    zero, one = np.zeros(4), np.ones(4)
    a = (zero, zero, 2 * one, 4 * one, zero)
    b = (np.array([0.0, 1.0, 4.0, 0.0]), np.array([0.0, 0.0, 0.0, 2.0]), 2 * one, 4 * one, zero)
    assert rotated_overlap_areas(a, b).tolist() == [8.0, 6.0, 0.0, 0.0]
    turned = (zero, zero, -2 * one, 4 * one, zero + math.pi)  # the same rectangle, described backwards
    assert rotated_overlap_areas(a, turned) == pytest.approx([8.0] * 4)


# ---------------------------------------------------------------------------------------------------
# Lyft 3D


def _lyft_answers():
    return roundtrip(
        pd.DataFrame(
            {
                "Id": ["a" * 64, "b" * 64, "c" * 64],
                "PredictionString": [
                    "1.0 10 20 -1 2 4.5 1.6 0.3 car 1.0 16 20 -1 2 4.5 1.6 0.3 car "
                    "1.0 12 26 -1 0.8 0.8 1.8 0 pedestrian",
                    "1.0 -5 3 0 2.8 10 3.4 1.2 truck",
                    "1.0 100 100 2 2 4 1.5 -2.0 car",
                ],
            }
        )
    )


def test_lyft_perfect_submission_scores_one_and_rows_match_by_id():
    answers = _lyft_answers()
    submission = answers.iloc[::-1].reset_index(drop=True)
    assert grade(LYFT, submission, answers) == 1.0


def test_lyft_hand_worked_sample_average():
    answers = _lyft_answers()
    submission = answers.copy()
    # sample a: one car exactly (second car missed), pedestrian missed; b: nothing; c: exact
    submission["PredictionString"] = [
        "0.9 10 20 -1 2 4.5 1.6 0.3 car",
        np.nan,
        "0.5 100 100 2 2 4 1.5 -2.0 car",
    ]
    # a: car AP = 0.5 (recall 0.5 at precision 1), pedestrian 0 -> 0.25 at every threshold; b 0; c 1
    assert grade(LYFT, roundtrip(submission), answers) == pytest.approx((0.25 + 0 + 1) / 3)


def test_lyft_a_second_prediction_on_a_taken_box_is_a_false_positive_without_fallback():
    answers = roundtrip(
        pd.DataFrame({"Id": ["s"], "PredictionString": ["1.0 0 0 0 2 4 1.5 0 car 1.0 0 3 0 2 4 1.5 0 car"]})
    )
    # both predictions sit nearest box 1 (the second is 1.4 m off box 1 and 1.6 m off box 2)
    submission = roundtrip(
        pd.DataFrame({"Id": ["s"], "PredictionString": ["0.9 0 0 0 2 4 1.5 0 car 0.8 0 1.4 0 2 4 1.5 0 car"]})
    )
    # at every threshold: TP then FP -> recall 0.5, precision 1 -> AP 0.5
    assert grade(LYFT, submission, answers) == pytest.approx(0.5)
    assert grade(LYFT, submission, answers) == pytest.approx(lyft_reference(submission, answers))


def test_lyft_iou_must_be_strictly_above_the_threshold_and_other_classes_are_ignored():
    answers = roundtrip(pd.DataFrame({"Id": ["s"], "PredictionString": ["1.0 0 0 0 2 4 1 0 car"]}))
    # a box shifted by a third of its length overlaps 2/3 of it: IoU = (8/3) / (8 + 8 - 8/3) = 0.2 exactly
    # in 2D is below every threshold; shifting 0.5 m along gives IoU 3.5/4.5 = 0.777...
    submission = roundtrip(
        pd.DataFrame({"Id": ["s"], "PredictionString": ["0.9 0.5 0 0 2 4 1 0 car 0.99 0 0 0 2 4 1 0 bus"]})
    )
    expected = sum(1.0 for t in [0.5 + 0.05 * k for k in range(10)] if 3.5 / 4.5 > t) / 10
    assert grade(LYFT, submission, answers) == pytest.approx(expected)


def test_lyft_random_submissions_match_the_reference():
    rng = np.random.default_rng(3)
    ids, truth, preds = [], [], []
    for s in range(12):
        objects, guesses = [], []
        for _ in range(int(rng.integers(1, 7))):
            name = str(rng.choice(["car", "pedestrian", "truck"]))
            box = [
                rng.uniform(-15, 15),
                rng.uniform(-15, 15),
                rng.normal(0, 0.2),
                rng.uniform(1, 2.5),
                rng.uniform(2, 5),
                rng.uniform(1, 2),
                rng.uniform(-3, 3),
            ]
            objects.append("1.0 " + " ".join(f"{v:.3f}" for v in box) + f" {name}")
            for _ in range(int(rng.integers(0, 3))):
                noisy = [v + rng.normal(0, 0.25) for v in box[:3]] + box[3:6] + [box[6] + rng.normal(0, 0.2)]
                guesses.append(f"{rng.random():.3f} " + " ".join(f"{v:.3f}" for v in noisy) + f" {name}")
        ids.append(f"{s:064d}")
        truth.append(" ".join(objects))
        preds.append(" ".join(guesses) if guesses else np.nan)
    answers = roundtrip(pd.DataFrame({"Id": ids, "PredictionString": truth}))
    submission = roundtrip(pd.DataFrame({"Id": ids[::-1], "PredictionString": preds[::-1]}))
    score = grade(LYFT, submission, answers)
    assert 0.05 < score < 0.95
    assert score == pytest.approx(lyft_reference(submission, answers), abs=1e-9)


def test_lyft_rejects_malformed_prediction_strings_with_row_token_and_field():
    answers = _lyft_answers()
    submission = answers.copy()
    submission.loc[1, "PredictionString"] = "0.9 1 2 3 4 5 6 car"
    reject(LYFT, roundtrip(submission), answers, "groups of 9", "row 2", "8 tokens", "'b")
    submission.loc[1, "PredictionString"] = "0.9 1 2 x 4 5 6 0.1 car"
    reject(LYFT, roundtrip(submission), answers, "row 2", "token 4", "center_z", "'x'")
    submission.loc[1, "PredictionString"] = "nan 1 2 3 4 5 6 0.1 car"
    reject(LYFT, roundtrip(submission), answers, "confidence", "nan", "row 2")


def test_lyft_rejects_wrong_ids_rows_and_columns():
    answers = _lyft_answers()
    reject(LYFT, answers.iloc[1:], answers, "expected 3 rows")
    renamed = answers.assign(Id=["a" * 64, "b" * 64, "d" * 64])
    reject(LYFT, renamed, answers, "do not match", "missing")
    reject(LYFT, answers.rename(columns={"PredictionString": "Prediction"}), answers, "PredictionString")


# ---------------------------------------------------------------------------------------------------
# SIIM-COVID-19


def _siim_answers():
    return roundtrip(
        pd.DataFrame(
            {
                "id": ["s1_study", "s2_study", "i1_image", "i2_image", "i3_image"],
                "PredictionString": [
                    "typical 1 0 0 1 1",
                    "negative 1 0 0 1 1",
                    "opacity 1 100 100 300 400 opacity 1 500 100 700 400",
                    "none 1 0 0 1 1",
                    "opacity 1 50 60 250 260",
                ],
            }
        )
    )


def test_siim_perfect_submission_scores_one():
    answers = _siim_answers()
    assert grade(SIIM, answers.iloc[::-1].reset_index(drop=True), answers) == 1.0


def test_siim_hand_worked_pooled_average_precision():
    answers = _siim_answers()
    submission = answers.copy()
    submission["PredictionString"] = [
        "typical 0.6 0 0 1 1 negative 0.4 0 0 1 1",
        "typical 0.7 0 0 1 1",
        "opacity 0.9 100 100 300 400 opacity 0.8 110 100 300 400",  # second: its best box is taken
        "none 0.5 0 0 1 1 opacity 0.3 0 0 10 10",
        "none 0.2 0 0 1 1",
    ]
    submission = roundtrip(submission)
    # negative: pairs s1 (0,.4), s2 missed (1,0), images (0,0)x3 -> AP 0.2 (one positive at score 0 with 4
    # negatives tied); typical: s1 (1,.6), s2 (0,.7), images (0,0)x3 -> AP 0.5; opacity: i1 (1,.9) (0,.8)
    # (1,0) missed, i2 (0,.3), i3 (1,0) missed, studies (0,0)x2 -> AP 1/3 + 2/3 * 3/7; none: i2 (1,.5),
    # i3 (0,.2), others (0,0)x3 -> AP 1
    opacity = 1 / 3 * 1 + 2 / 3 * (3 / 7)
    expected = (0.2 + 0.5 + opacity + 1.0) / 4
    assert grade(SIIM, submission, answers) == pytest.approx(expected)
    assert grade(SIIM, submission, answers) == pytest.approx(siim_reference(submission, answers))


def test_siim_a_prediction_falls_back_to_the_best_free_box():
    answers = roundtrip(
        pd.DataFrame({"id": ["i_image"], "PredictionString": ["opacity 1 0 0 100 100 opacity 1 40 0 140 100"]})
    )
    # the first prediction takes box 1 (IoU 1); the second prefers box 1 (IoU .74) but takes box 2 (.6)
    submission = roundtrip(
        pd.DataFrame({"id": ["i_image"], "PredictionString": ["opacity 0.9 0 0 100 100 opacity 0.8 15 0 115 100"]})
    )
    assert grade(SIIM, submission, answers) == 1.0


def test_siim_random_submissions_match_sklearn_average_precision():
    rng = np.random.default_rng(5)
    ids, truth, preds = [], [], []
    for r in range(30):
        if r % 3 == 0:
            ids.append(f"{r:012x}_study")
            label = str(rng.choice(["negative", "typical", "indeterminate", "atypical"]))
            truth.append(f"{label} 1 0 0 1 1")
            guess = " ".join(f"{c} {rng.random():.2f} 0 0 1 1" for c in ["negative", "typical", "atypical"])
            preds.append(guess)
            continue
        ids.append(f"{r:012x}_image")
        boxes = []
        for _ in range(int(rng.integers(0, 3))):
            x, y = rng.uniform(0, 500), rng.uniform(0, 500)
            boxes.append((x, y, x + rng.uniform(50, 200), y + rng.uniform(50, 200)))
        truth.append(
            " ".join(f"opacity 1 {b[0]:.1f} {b[1]:.1f} {b[2]:.1f} {b[3]:.1f}" for b in boxes) or "none 1 0 0 1 1"
        )
        guesses = [f"none {rng.random():.2f} 0 0 1 1"]
        for b in boxes:
            jitter = rng.normal(0, 25, 4)
            guesses.append(f"opacity {rng.random():.2f} " + " ".join(f"{v:.1f}" for v in np.add(b, jitter)))
        preds.append(" ".join(guesses))
    answers = roundtrip(pd.DataFrame({"id": ids, "PredictionString": truth}))
    submission = roundtrip(pd.DataFrame({"id": ids, "PredictionString": preds}).sample(frac=1, random_state=1))
    assert grade(SIIM, submission, answers) == pytest.approx(siim_reference(submission, answers), abs=1e-12)


def test_siim_rejects_empty_cells_bad_groups_and_non_finite_confidences():
    answers = _siim_answers()
    submission = answers.copy()
    submission.loc[3, "PredictionString"] = np.nan
    reject(SIIM, roundtrip(submission), answers, "empty cell", "row 4", "none 1 0 0 1 1")
    submission.loc[3, "PredictionString"] = "none 1 0 0 1"
    reject(SIIM, roundtrip(submission), answers, "groups of 6", "row 4", "5 tokens")
    submission.loc[3, "PredictionString"] = "none 1 0 0 one 1"
    reject(SIIM, roundtrip(submission), answers, "token 5", "x_max", "'one'")
    submission.loc[3, "PredictionString"] = "none inf 0 0 1 1"
    reject(SIIM, roundtrip(submission), answers, "finite", "inf")
    reject(SIIM, answers.iloc[:-1], answers, "expected 5 rows")


# ---------------------------------------------------------------------------------------------------
# VinBigData (pycocotools through the public notebook)


def _vinbig_answers():
    return roundtrip(
        pd.DataFrame(
            {
                "image_id": ["img_a", "img_a", "img_b", "img_c"],
                "class_id": [0, 3, 14, 3],
                "class_name": ["Aortic enlargement", "Cardiomegaly", "No finding", "Cardiomegaly"],
                "rad_id": ["R9", "R9", "R1", "R10"],
                "x_min": [100.0, 50.0, 0.0, 60.0],
                "y_min": [100.0, 50.0, 0.0, 40.0],
                "x_max": [200.0, 150.0, 1.0, 160.0],
                "y_max": [180.0, 160.0, 1.0, 150.0],
            }
        )
    )


def _vinbig_gold():
    return roundtrip(
        pd.DataFrame(
            {
                "image_id": ["img_a", "img_b", "img_c"],
                "PredictionString": [
                    "0 1.0 100 100 200 180 3 1.0 50 50 150 160",
                    "14 1.0 0 0 1 1",
                    "3 1.0 60 40 160 150",
                ],
            }
        )
    )


def test_vinbig_gold_loses_only_the_box_with_annotation_id_zero():
    # pycocotools stores the matched annotation id as the match flag, so the first answer box (id 0, class 0)
    # never counts as matched: class 0 has one FP and recall 0 -> AP 0; classes 3 and 14 are perfect.
    # Each perfect class scores 1 / (1 + eps / n) at every recall point (COCO adds np.spacing(1)).
    score = grade(VINBIG, _vinbig_gold(), _vinbig_answers())
    assert score == pytest.approx(2 / 3, abs=1e-12)
    answers = _vinbig_answers()
    flipped = roundtrip(pd.concat([answers.iloc[[2]], answers.drop(index=2)]))  # 'No finding' box gets id 0
    assert grade(VINBIG, _vinbig_gold(), flipped) == pytest.approx(2 / 3, abs=1e-12)


def test_vinbig_boxes_are_read_as_x_y_width_height():
    answers = roundtrip(
        pd.DataFrame(
            {
                "image_id": ["z", "q"],
                "class_id": [14, 3],
                "x_min": [0.0, 10.0],
                "y_min": [0.0, 10.0],
                "x_max": [1.0, 20.0],
                "y_max": [1.0, 20.0],
            }
        )
    )
    # as corners the prediction matches the answer box [10,20]x[10,20] exactly; as x,y,w,h the answer is
    # [10,30]x[10,30] and the prediction [10,20]x[10,20]: IoU 100/400 = 0.25 < 0.4 -> a false positive
    submission = roundtrip(
        pd.DataFrame({"image_id": ["z", "q"], "PredictionString": ["14 1 0 0 1 1", "3 0.9 10 10 10 10"]})
    )
    score = grade(VINBIG, submission, answers)
    # class 14's box has id 0 (never matched): AP 0; class 3: one FP -> AP 0
    assert score == 0.0
    submission.loc[1, "PredictionString"] = "3 0.9 10 10 20 20"
    assert grade(VINBIG, roundtrip(submission), answers) == pytest.approx(0.5, abs=1e-12)


def test_vinbig_ranks_detections_across_images_and_keeps_100_per_image_and_class():
    answers = roundtrip(
        pd.DataFrame(
            {
                "image_id": ["first", "a", "b"],
                "class_id": [14, 3, 3],
                "x_min": [0.0, 10.0, 10.0],
                "y_min": [0.0, 10.0, 10.0],
                "x_max": [1.0, 10.0, 10.0],
                "y_max": [1.0, 10.0, 10.0],
            }
        )
    )
    far = " ".join(["3 0.95 500 500 10 10"] * 100)
    submission = roundtrip(
        pd.DataFrame(
            {
                "image_id": ["first", "a", "b"],
                "PredictionString": ["14 1 0 0 1 1", far + " 3 0.99 10 10 10 10", "3 0.5 10 10 10 10"],
            }
        )
    )
    # image a: the exact box has the highest score but 100 others come first in the file; sorted by score,
    # the 100 kept are the exact one and 99 far ones. Class 3 ranking: TP(.99), 99 FP(.95), TP(.5):
    # precision at recall .5 = 1, at recall 1 = 2/101 -> 101-point average = (51*1 + 50*2/101)/101
    class_3 = (51 * (1 / (1 + np.spacing(1))) + 50 * (2 / (101 + np.spacing(1)))) / 101
    assert grade(VINBIG, submission, answers) == pytest.approx((0 + class_3) / 2, abs=1e-12)


def test_vinbig_accepts_repeated_image_rows_and_rejects_missing_images():
    answers = _vinbig_answers()
    gold = _vinbig_gold()
    extra = pd.DataFrame({"image_id": ["img_c"], "PredictionString": ["3 2.0 500 500 10 10"]})
    split = roundtrip(pd.concat([gold, extra]))
    # the second img_c row adds a class-3 false positive ranked first: class 3 AP 1 -> 2/3
    expected = (0 + 2 / 3 / (1 + 1.5 * np.spacing(1)) + 1 / (1 + np.spacing(1))) / 3
    assert grade(VINBIG, split, answers) == pytest.approx(expected, abs=1e-12)
    reject(VINBIG, gold.iloc[:2], answers, "do not match", "1 test image has no row", "img_c")
    reject(VINBIG, gold.assign(image_id=["img_a", "img_b", "img_x"]), answers, "'img_x' in row 3")


def test_vinbig_rejects_empty_cells_spacing_and_non_numbers():
    answers, gold = _vinbig_answers(), _vinbig_gold()
    bad = gold.copy()
    bad.loc[1, "PredictionString"] = np.nan
    reject(VINBIG, roundtrip(bad), answers, "empty cell", "row 2", "14 1 0 0 1 1")
    bad.loc[1, "PredictionString"] = "14 1 0 0  1 1"
    reject(VINBIG, roundtrip(bad), answers, "row 2", "exactly one space")
    bad.loc[1, "PredictionString"] = "14 1 0 0 1 one"
    reject(VINBIG, roundtrip(bad), answers, "token 6", "y_max", "'one'")
    bad.loc[1, "PredictionString"] = "nan 1 0 0 1 1"
    reject(VINBIG, roundtrip(bad), answers, "class id", "nan")


# ---------------------------------------------------------------------------------------------------
# Kuzushiji


def _kuzushiji_answers():
    return roundtrip(
        pd.DataFrame(
            {
                "image_id": ["p1", "p2", "p3"],
                "labels": [
                    "U+3042 10 10 20 20 U+3044 50 10 20 20 U+3042 90 10 20 20",
                    np.nan,
                    "U+4E00 0 0 100 100",
                ],
            }
        )
    )


def test_kuzushiji_perfect_submission_scores_one_and_empty_pages_count_nothing():
    answers = _kuzushiji_answers()
    submission = roundtrip(
        pd.DataFrame(
            {
                "image_id": ["p3", "p2", "p1"],
                "labels": ["U+4E00 50 50", np.nan, "U+3042 20 20 U+3044 60 20 U+3042 100 20"],
            }
        )
    )
    assert grade(KUZUSHIJI, submission, answers) == 1.0


def test_kuzushiji_points_must_be_strictly_inside_and_each_is_used_once():
    answers = _kuzushiji_answers()
    submission = roundtrip(
        pd.DataFrame(
            {
                "image_id": ["p1", "p2", "p3"],
                "labels": [
                    # on the left edge (x == 10): no match; a point inside two boxes? boxes do not overlap here; one
                    # point for box 3 used, a second identical point is a false positive
                    "U+3042 10 20 U+3042 100 20 U+3042 100 20 U+3044 60 20",
                    "U+3042 5 5",
                    "U+4E01 50 50",
                ],
            }
        )
    )
    # tp 2 (box 3, box 2), fp 4 (edge point, duplicate, p2 point, wrong label), fn 2 (box 1, p3)
    precision, recall = 2 / 6, 2 / 4
    expected = 2 * precision * recall / (precision + recall)
    assert grade(KUZUSHIJI, submission, answers) == pytest.approx(expected)
    assert grade(KUZUSHIJI, submission, answers) == pytest.approx(kuzushiji_reference(submission, answers))


def test_kuzushiji_overlapping_boxes_take_points_in_order():
    answers = roundtrip(pd.DataFrame({"image_id": ["p"], "labels": ["U+3042 0 0 100 100 U+3042 0 0 40 40"]}))
    # box 1 (written first) takes the first point inside it, which is also box 2's only point
    submission = roundtrip(pd.DataFrame({"image_id": ["p"], "labels": ["U+3042 20 20 U+3042 80 80"]}))
    assert grade(KUZUSHIJI, submission, answers) == pytest.approx(kuzushiji_reference(submission, answers))
    assert grade(KUZUSHIJI, submission, answers) == pytest.approx(0.5)


def test_kuzushiji_random_submissions_match_the_reference():
    rng = np.random.default_rng(11)
    labels = [f"U+{0x3042 + k:04X}" for k in range(4)]
    truth, preds = [], []
    for _ in range(15):
        boxes = [
            (str(rng.choice(labels)), *rng.integers(0, 300, 2), *rng.integers(20, 120, 2))
            for _ in range(int(rng.integers(0, 12)))
        ]
        truth.append(" ".join(" ".join(map(str, b)) for b in boxes) or np.nan)
        points = [
            (
                l if rng.random() < 0.8 else str(rng.choice(labels)),
                x + rng.integers(-10, w + 10),
                y + rng.integers(-10, h + 10),
            )
            for l, x, y, w, h in boxes
        ]
        points += [(str(rng.choice(labels)), *rng.integers(0, 400, 2)) for _ in range(int(rng.integers(0, 3)))]
        preds.append(" ".join(" ".join(map(str, p)) for p in points) or np.nan)
    ids = [f"book-{i:03d}" for i in range(15)]
    answers = roundtrip(pd.DataFrame({"image_id": ids, "labels": truth}))
    submission = roundtrip(pd.DataFrame({"image_id": ids, "labels": preds}))
    score = grade(KUZUSHIJI, submission, answers)
    assert 0.2 < score < 0.95
    assert score == pytest.approx(kuzushiji_reference(submission, answers), abs=1e-12)


def test_kuzushiji_rejects_bad_token_counts_and_coordinates():
    answers = _kuzushiji_answers()
    submission = roundtrip(
        pd.DataFrame({"image_id": ["p1", "p2", "p3"], "labels": ["U+3042 20 20 U+3044 60", np.nan, "U+4E00 50 50"]})
    )
    reject(KUZUSHIJI, submission, answers, "groups of 3", "row 1", "5 tokens", "'p1'")
    submission.loc[0, "labels"] = "U+3042 20 twenty"
    reject(KUZUSHIJI, roundtrip(submission), answers, "token 3", "y", "'twenty'")
    submission.loc[0, "labels"] = "U+3042 20 20 "
    reject(KUZUSHIJI, roundtrip(submission), answers, "exactly one space")
    reject(KUZUSHIJI, submission.iloc[:2], answers, "expected 3 rows")


# ---------------------------------------------------------------------------------------------------
# All four


def _cases():
    return {
        LYFT: (_lyft_answers(), _lyft_answers().iloc[::-1].reset_index(drop=True)),
        SIIM: (_siim_answers(), _siim_answers()),
        VINBIG: (_vinbig_answers(), _vinbig_gold()),
        KUZUSHIJI: (
            _kuzushiji_answers(),
            roundtrip(
                pd.DataFrame({"image_id": ["p1", "p2", "p3"], "labels": ["U+3042 20 20", np.nan, "U+4E00 50 50"]})
            ),
        ),
    }


@pytest.mark.parametrize("competition", [LYFT, SIIM, VINBIG, KUZUSHIJI])
def test_graders_do_not_modify_their_inputs(competition):
    answers, submission = _cases()[competition]
    before_answers, before_submission = answers.copy(), submission.copy()
    grade(competition, submission, answers)
    pd.testing.assert_frame_equal(answers, before_answers)
    pd.testing.assert_frame_equal(submission, before_submission)


@pytest.mark.parametrize("competition", [LYFT, SIIM, VINBIG, KUZUSHIJI])
def test_extra_columns_are_ignored_and_a_missing_column_is_named(competition):
    answers, submission = _cases()[competition]
    assert grade(competition, submission.assign(note="x"), answers) == grade(competition, submission, answers)
    column = submission.columns[1]
    reject(competition, submission.drop(columns=[column]), answers, f"missing {column}")
