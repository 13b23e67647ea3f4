"""Object detection: prediction strings of boxes or points scored against ground-truth objects.

* ``lyft_3d_map`` (3d-object-detection-for-autonomous-vehicles): per-sample 3D mAP over IoU thresholds
  0.5..0.95 (see ``detection.lyft``);
* ``siim_covid_map`` (siim-covid19-detection): mean over the answers' classes of scikit-learn's average
  precision of greedily matched predictions, study and image rows pooled (``detection.pooled``);
* ``vinbigdata_coco_ap`` (vinbigdata-chest-xray-abnormalities-detection): pycocotools' AP at IoU 0.4 as the
  public metric notebook computes it, quirks included (``detection.coco``);
* ``kuzushiji_f1`` (kuzushiji-recognition): micro F1 of predicted centre points inside same-label boxes.

Each prediction string is parsed into objects first, so a malformed one is refused with its row, id,
token number and the field that was expected (``detection.tokens``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grading.engine.errors import AnswersProblem, InvalidSubmission
from grading.engine.graders._validation import (
    MAX_EXAMPLES,
    RowIds,
    grader_function,
    plural,
    require_answers_columns,
    require_columns,
    require_frames,
    row_label,
    show,
    show_many,
    submission_ids,
)
from grading.engine.graders.detection.coco import Boxes, coco_ap
from grading.engine.graders.detection.lyft import LYFT_FORMAT, lyft_map
from grading.engine.graders.detection.pooled import kuzushiji_f1, siim_map
from grading.engine.graders.detection.tokens import Objects, TokenFormat
from grading.engine.graders.ids import Pairing, pair_by_sorted_ids
from grading.engine.registry import register

SIIM_FORMAT = TokenFormat(
    fields=("label", "confidence", "x_min", "y_min", "x_max", "y_max"),
    label_field=0,
    separator=None,
    empty_cell="invalid",
    example="'opacity 0.7 789 582 1026 1373'",
    empty_hint=" ('none 1 0 0 1 1' for an image without opacity, 'negative 1 0 0 1 1' for a negative study)",
)
VINBIGDATA_FORMAT = TokenFormat(
    fields=("class_id", "confidence", "x_min", "y_min", "x_max", "y_max"),
    label_field=None,
    separator=" ",
    empty_cell="invalid",
    example="'3 0.8 691 1375 1653 1831'",
    empty_hint=" ('14 1 0 0 1 1' for an image with no finding)",
)
KUZUSHIJI_FORMAT = TokenFormat(
    fields=("unicode", "x", "y"),
    label_field=0,
    separator=" ",
    empty_cell="no_objects",
    example="'U+306F 1231 3465'",
)
KUZUSHIJI_ANSWERS_FORMAT = TokenFormat(
    fields=("unicode", "x", "y", "width", "height"),
    label_field=0,
    separator=" ",
    empty_cell="no_objects",
    example="'U+306F 1231 3465 133 53'",
)


@register("lyft_3d_map")
@grader_function
def grade_lyft_3d_map(
    submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, prediction_column: str
) -> float:
    """Lyft 3D mAP: ``confidence cx cy cz width length height yaw class_name`` objects per sample."""
    require_frames(submission, answers, [id_column, prediction_column])
    sample_of_row = _answers_row_of(pair_by_sorted_ids(submission, answers, id_column), len(answers))
    ids = submission_ids(submission, id_column)
    predicted = LYFT_FORMAT.parse(submission[prediction_column], prediction_column, ids)
    _require_no_nan(predicted.values[:, 0], predicted.row, ids, prediction_column, "confidence")
    truth = LYFT_FORMAT.parse_answers(answers[prediction_column], prediction_column)
    return lyft_map(truth, predicted, sample_of_row[predicted.row], len(answers))


@register("siim_covid_map")
@grader_function
def grade_siim_covid_map(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    prediction_column: str,
    iou_threshold: float = 0.5,
) -> float:
    """Mean AP over the answers' classes of ``label confidence x_min y_min x_max y_max`` objects."""
    require_frames(submission, answers, [id_column, prediction_column])
    answer_row = _answers_row_of(pair_by_sorted_ids(submission, answers, id_column), len(answers))
    ids = submission_ids(submission, id_column)
    predicted = SIIM_FORMAT.parse(submission[prediction_column], prediction_column, ids)
    confidence = predicted.values[:, 0]
    if not np.isfinite(confidence).all():
        example = _first_non_finite(confidence, predicted.row, ids)
        raise InvalidSubmission(
            f"column {show(prediction_column)}: every confidence must be a finite number (average precision "
            f"cannot rank nan or inf); {example}"
        )
    truth = SIIM_FORMAT.parse_answers(answers[prediction_column], prediction_column)
    return siim_map(truth, predicted, answer_row[predicted.row], len(answers), iou_threshold)


@register("vinbigdata_coco_ap")
@grader_function
def grade_vinbigdata_coco_ap(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    id_column: str,
    prediction_column: str,
    class_column: str,
    box_columns: list[str],
    iou_threshold: float,
    no_finding_class: int,
) -> float:
    """COCO AP at one IoU threshold of ``class_id confidence x_min y_min x_max y_max`` objects per image;
    the answers hold one row per ground-truth box."""
    require_answers_columns(answers, [id_column, class_column, *box_columns])
    require_columns(submission, [id_column, prediction_column])
    answer_ids = answers[id_column].to_numpy(dtype=object, na_value=np.nan)
    image_of_answer, images = pd.factorize(answer_ids)  # images in order of first appearance
    sub_ids = submission[id_column].to_numpy(dtype=object, na_value=np.nan)
    _require_same_id_set(sub_ids, images, id_column)
    ids = submission_ids(submission, id_column)
    predicted = VINBIGDATA_FORMAT.parse(submission[prediction_column], prediction_column, ids)
    category = _class_ids(predicted, ids, prediction_column)
    image_of_row = pd.Index(images).get_indexer(sub_ids)
    detections = Boxes(
        image=image_of_row[predicted.row],
        category=category,
        box=predicted.values[:, 2:6],
        score=predicted.values[:, 1],
        ident=np.arange(len(predicted), dtype=np.int64),
    )
    return coco_ap(
        _vinbigdata_truth(answers, image_of_answer, class_column, box_columns, no_finding_class),
        detections,
        iou_threshold=iou_threshold,
    )


@register("kuzushiji_f1")
@grader_function
def grade_kuzushiji_f1(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str, labels_column: str) -> float:
    """Micro F1 of ``unicode x y`` centre points against ``unicode x y width height`` boxes."""
    require_frames(submission, answers, [id_column, labels_column])
    page_of_row = _answers_row_of(pair_by_sorted_ids(submission, answers, id_column), len(answers))
    ids = submission_ids(submission, id_column)
    predicted = KUZUSHIJI_FORMAT.parse(submission[labels_column], labels_column, ids)
    truth = KUZUSHIJI_ANSWERS_FORMAT.parse_answers(answers[labels_column], labels_column)
    return kuzushiji_f1(truth, predicted, page_of_row[predicted.row])


# ---------------------------------------------------------------------------------------------------
# Helpers


def _answers_row_of(pairing: Pairing, n: int) -> np.ndarray:
    """The answers row paired with each submission row."""
    out = np.empty(n, dtype=np.intp)
    sub_rows = np.arange(n) if pairing.sub_rows is None else pairing.sub_rows
    out[sub_rows] = np.arange(n) if pairing.ans_rows is None else pairing.ans_rows
    return out


def _first_non_finite(values: np.ndarray, rows: np.ndarray, ids: RowIds | None) -> str:
    bad = np.flatnonzero(~np.isfinite(values))
    shown = "; ".join(f"{row_label(int(rows[b]), ids)} has {float(values[b])}" for b in bad[:MAX_EXAMPLES])
    return f"{plural(len(bad), 'value')}, e.g. {shown}"


def _require_no_nan(values: np.ndarray, rows: np.ndarray, ids: RowIds | None, column: str, field: str) -> None:
    if np.isnan(values).any():
        bad = np.flatnonzero(np.isnan(values))
        shown = ", ".join(row_label(int(rows[b]), ids) for b in bad[:MAX_EXAMPLES])
        raise InvalidSubmission(
            f"column {show(column)}: {plural(len(bad), field)} {'is' if len(bad) == 1 else 'are'} nan "
            f"(e.g. in {shown}); predictions are ranked by {field}, so write a number"
        )


def _require_same_id_set(sub_ids: np.ndarray, images: np.ndarray, id_column: str) -> None:
    """The reference compares the sets of ids: every test image at least once, nothing else."""
    expected = set(images.tolist())
    present = pd.unique(sub_ids).tolist()
    unknown = [v for v in present if v not in expected]
    missing = [v for v in images.tolist() if v not in set(present)]
    if not unknown and not missing:
        return
    parts = []
    if missing:
        parts.append(
            f"{plural(len(missing), 'test image')} {'has' if len(missing) == 1 else 'have'} no row "
            f"(e.g. {show_many(missing[:MAX_EXAMPLES])})"
        )
    if unknown:
        positions = {v: i for i, v in reversed(list(enumerate(sub_ids.tolist())))}
        shown = ", ".join(f"{show(v)} in row {positions[v] + 1}" for v in unknown[:MAX_EXAMPLES])
        parts.append(
            f"{plural(len(unknown), 'id')} {'is' if len(unknown) == 1 else 'are'} not in the test set (e.g. {shown})"
        )
    raise InvalidSubmission(
        f"the ids in column {show(id_column)} do not match the test set: "
        + "; ".join(parts)
        + ". Submit a row for every image of the sample submission, with the ids written exactly as there"
    )


def _class_ids(predicted: Objects, ids: RowIds | None, column: str) -> np.ndarray:
    """``int(class_id)`` as the reference takes it (truncation toward zero); nan or inf cannot be one."""
    raw = predicted.values[:, 0]
    if not np.isfinite(raw).all():
        raise InvalidSubmission(
            f"column {show(column)}: the first token of each object is its class id, a whole number; "
            f"{_first_non_finite(raw, predicted.row, ids)}"
        )
    truncated = np.trunc(raw)
    representable = np.abs(truncated) < 2.0**62
    # a class id too large for int64 matches no category: map it to one that cannot occur
    return np.where(representable, truncated, -(2**62)).astype(np.int64)


def _vinbigdata_truth(
    answers: pd.DataFrame,
    image_of_answer: np.ndarray,
    class_column: str,
    box_columns: list[str],
    no_finding_class: int,
) -> Boxes:
    category = answers[class_column].to_numpy()
    if not (pd.api.types.is_integer_dtype(answers[class_column].dtype)):
        raise AnswersProblem(f"the answers' {class_column!r} column must hold integers")
    category = category.astype(np.int64)
    box = answers[list(box_columns)].to_numpy(dtype=np.float64, na_value=np.nan).copy()
    no_finding = category == no_finding_class
    box[no_finding] = (0.0, 0.0, 1.0, 1.0)
    if np.isnan(box).any():
        row = int(np.flatnonzero(np.isnan(box).any(axis=1))[0])
        raise AnswersProblem(f"the answers' box in row {row + 1} has an empty coordinate")
    order = np.lexsort((np.arange(len(category)), image_of_answer))  # ids count images, then rows in order
    ident = np.empty(len(category), dtype=np.int64)
    ident[order] = np.arange(len(category))
    return Boxes(image=image_of_answer, category=category, box=box, score=np.zeros(len(category)), ident=ident)
