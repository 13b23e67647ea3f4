"""Probability metrics of the split75 group: log loss (lmsys, statoil, cervical spine), ROC AUC (brain tumour,
SETI), ALASKA2's weighted AUC, Jigsaw's bias AUC, HMS's KL divergence and RSNA mammography's pF1.

Expected scores come from plain-Python references written here (loops, pairwise AUC, dense integrals) or
from numbers worked out by hand in the comments.
"""

import math

import numpy as np
import pandas as pd
import pytest

from grading.engine.graders.auc_variants import tpr_weighted_auc
from grading.engine.graders.f_beta import probabilistic_f_beta
from grading.engine.graders.log_loss import EPS

from .frames import grade, params, reject, roundtrip

LMSYS = "lmsys-chatbot-arena"
STATOIL = "statoil-iceberg-classifier-challenge"
SPINE = "rsna-2022-cervical-spine-fracture-detection"
BRATS = "rsna-miccai-brain-tumor-radiogenomic-classification"
SETI = "seti-breakthrough-listen"
ALASKA = "alaska2-image-steganalysis"
JIGSAW = "jigsaw-unintended-bias-in-toxicity-classification"
HMS = "hms-harmful-brain-activity-classification"
BREAST = "rsna-breast-cancer-detection"
ALL = [LMSYS, STATOIL, SPINE, BRATS, SETI, ALASKA, JIGSAW, HMS, BREAST]


# ---------------------------------------------------------------------------------------------------
# Answers in each competition's private format, and plain references


def _pairwise_auc(labels, scores) -> float:
    """ROC AUC as the share of (positive, negative) pairs ranked right, ties counting half."""
    pos = [s for y, s in zip(labels, scores) if y]
    neg = [s for y, s in zip(labels, scores) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


LMSYS_CLASSES = ["winner_model_a", "winner_model_b", "winner_tie"]


def lmsys_answers() -> pd.DataFrame:
    winners = [0, 1, 2, 0, 2, 1]
    frame = pd.DataFrame(
        {
            "id": [30192, 53567, 65089, 96401, 198779, 292873],
            "model_a": [
                "gpt-4-1106-preview",
                "gpt-4-0613",
                "gpt-3.5-turbo-0613",
                "llama-2-13b-chat",
                "koala-13b",
                "vicuna-13b",
            ],
            "model_b": [
                "gpt-4-0613",
                "claude-2.1",
                "mistral-medium",
                "mistral-7b",
                "gpt-4-0613",
                "gpt-4-0314",
            ],
            "prompt": ['["Is it morally right, to try?"]'] * 6,
            "response_a": ['["Yes, \\"mostly\\"."]'] * 6,
            "response_b": ['["No."]'] * 6,
        }
    )
    for j, name in enumerate(LMSYS_CLASSES):
        frame[name] = [int(w == j) for w in winners]
    return roundtrip(frame)


def lmsys_soft(answers: pd.DataFrame) -> pd.DataFrame:
    probs = [
        [0.6, 0.3, 0.1],
        [0.2, 0.5, 0.3],
        [0.25, 0.25, 0.5],
        [0.1, 0.8, 0.1],
        [1 / 3, 1 / 3, 1 / 3],
        [0, 1, 0],
    ]
    frame = pd.DataFrame(probs, columns=LMSYS_CLASSES)
    frame.insert(0, "id", answers["id"].to_numpy())
    return roundtrip(frame)


def statoil_answers() -> pd.DataFrame:
    return roundtrip(
        pd.DataFrame(
            {
                "id": ["5941774d", "4023181e", "b20200e4", "e7f018bb", "4371c8c3"],
                "is_iceberg": [0, 1, 1, 0, 0],
            }
        )
    )


SPINE_TYPES = ["patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]


def spine_answers() -> pd.DataFrame:
    truth = {
        "1.2.826.0.1.3680043.10001": [1, 0, 1, 0, 0, 0, 0, 1],
        "1.2.826.0.1.3680043.10005": [0, 0, 0, 0, 0, 0, 0, 0],
        "1.2.826.0.1.3680043.2243": [1, 1, 0, 0, 0, 0, 0, 0],
    }
    rows = [
        (study, kind, labels[k], f"{study}_{kind}")
        for k, kind in enumerate(SPINE_TYPES)  # melt order: one prediction type after the other
        for study, labels in truth.items()
    ]
    return roundtrip(pd.DataFrame(rows, columns=["StudyInstanceUID", "prediction_type", "fractured", "row_id"]))


def spine_reference(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    predicted = dict(zip(submission["row_id"], submission["fractured"]))
    per_study: dict[str, list[float]] = {}
    for study, kind, y, row_id in answers.itertuples(index=False):
        p = min(max(predicted[row_id], 1e-15), 1 - 1e-15)
        w = (14 if kind == "patient_overall" else 2) if y else (7 if kind == "patient_overall" else 1)
        loss = -math.log(p) if y else -math.log(1 - p)
        total = per_study.setdefault(study, [0.0, 0.0])
        total[0] += w * loss
        total[1] += w
    return sum(t[0] / t[1] for t in per_study.values()) / len(per_study)


def binary_answers(competition: str) -> pd.DataFrame:
    if competition == BRATS:
        return roundtrip(pd.DataFrame({"BraTS21ID": [0, 2, 3, 5, 6, 8, 11], "MGMT_value": [1, 1, 0, 1, 0, 0, 1]}))
    ids = ["0000799a2b2c42d", "00042890562ff68", "0005364cdcb8e5b", "0007a5a46901c56", "0009283e145448e"]
    return roundtrip(pd.DataFrame({"id": ids, "target": [0, 1, 0, 0, 1]}))


def alaska_answers(labels=(1, 1, 0, 0)) -> pd.DataFrame:
    return roundtrip(pd.DataFrame({"Id": [f"{i:04d}.jpg" for i in range(1, len(labels) + 1)], "Label": list(labels)}))


def alaska_submission(answers: pd.DataFrame, scores) -> pd.DataFrame:
    return roundtrip(pd.DataFrame({"Id": answers["Id"], "Label": list(scores)}))


def _roc_points_by_loop(labels, scores):
    """Every (fpr, tpr) of 'predict positive when score >= t' for each distinct t, from (0, 0)."""
    pos = sum(1 for y in labels if y)
    neg = len(labels) - pos
    points = [(0.0, 0.0)]
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for y, s in zip(labels, scores) if y and s >= t)
        fp = sum(1 for y, s in zip(labels, scores) if not y and s >= t)
        points.append((fp / neg, tp / pos))
    return points


def _weighted_auc_by_integral(labels, scores, steps=400_000) -> float:
    """The TPR-band weighted area, integrated numerically over a dense FPR grid."""
    points = _roc_points_by_loop(labels, scores)
    fpr = np.array([p[0] for p in points])
    tpr = np.array([p[1] for p in points])
    # the ROC curve's value at x: the highest TPR reached at FPR <= x (vertical jumps count at once)
    grid = (np.arange(steps) + 0.5) / steps
    reach = np.interp(grid, fpr, tpr, right=1.0)
    low = np.clip(reach, 0, 0.4).mean()
    high = (np.clip(reach, 0.4, 1) - 0.4).mean()
    return (2 * low + 1 * high) / (2 * 0.4 + 1 * 0.6)


JIGSAW_IDENTITIES = params(JIGSAW)["identity_columns"]


def jigsaw_answers(seed: int = 0, n: int = 160) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(7_000_000, 7_000_000 + n),
            "comment_text": [f"comment, number {i}" for i in range(n)],
            "toxicity": np.round(rng.random(n), 6),
            "severe_toxicity": 0.0,
        }
    )
    for name in JIGSAW_IDENTITIES:
        values = np.round(rng.random(n) * (rng.random(n) < 0.5), 6)
        frame[name] = np.where(rng.random(n) < 0.3, np.nan, values)  # not annotated: empty cell
    frame["identity_annotator_count"] = 4
    return roundtrip(frame)


def jigsaw_reference(answers: pd.DataFrame, predictions) -> float:
    """Kaggle's bias metric by loops, with predictions binarised at 0.5 (NaN counts as below)."""
    toxic = [t >= 0.5 for t in answers["toxicity"]]
    pred = [1.0 if (not math.isnan(p) and p >= 0.5) else 0.0 for p in predictions]

    def auc(rows):
        labels = [toxic[i] for i in rows]
        if all(labels) or not any(labels):
            return float("nan")
        return _pairwise_auc(labels, [pred[i] for i in rows])

    def power_mean(values, p=-5):
        return (sum(v**p for v in values) / len(values)) ** (1 / p)

    sub, bpsn, bnsp = [], [], []
    for name in JIGSAW_IDENTITIES:
        member = [(not math.isnan(v) and v >= 0.5) for v in answers[name]]
        rows = range(len(toxic))
        sub.append(auc([i for i in rows if member[i]]))
        bpsn.append(auc([i for i in rows if (member[i] and not toxic[i]) or (not member[i] and toxic[i])]))
        bnsp.append(auc([i for i in rows if (member[i] and toxic[i]) or (not member[i] and not toxic[i])]))
    bias = (power_mean(sub) + power_mean(bpsn) + power_mean(bnsp)) / 3
    return 0.25 * auc(range(len(toxic))) + 0.75 * bias


HMS_VOTES = ["seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote"]


def hms_answers() -> pd.DataFrame:
    votes = [
        [3, 0, 0, 0, 0, 0],
        [3, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 2],
        [0, 0, 5, 5, 0, 0],
        [0, 0, 5, 4, 0, 1],
        [1, 1, 1, 1, 1, 1],
        [0, 0, 0, 0, 14, 1],
    ]
    frame = pd.DataFrame(
        {
            "eeg_id": [568657, 568657, 582999, 1628180742, 1628180742, 1628180742, 2277392603],
            "eeg_sub_id": [0, 1, 0, 0, 1, 2, 0],
            "eeg_label_offset_seconds": [0.0, 6.0, 0.0, 0.0, 2.0, 4.0, 0.0],
            "spectrogram_id": [789577333, 789577333, 1552638400, 353733, 353733, 353733, 924234],
            "spectrogram_sub_id": [0, 1, 0, 0, 1, 2, 0],
            "spectrogram_label_offset_seconds": [0.0, 6.0, 0.0, 0.0, 2.0, 4.0, 0.0],
            "label_id": [1825637029, 1012620863, 2095324181, 127492639, 51679001, 1109543839, 1535226210],
            "patient_id": [20654, 20654, 20230, 42516, 42516, 42516, 30539],
            "expert_consensus": ["Seizure", "Seizure", "Other", "GPD", "GPD", "Seizure", "GRDA"],
        }
    )
    for j, name in enumerate(HMS_VOTES):
        frame[name] = [v[j] for v in votes]
    return roundtrip(frame)


def hms_submission(answers: pd.DataFrame, probs) -> pd.DataFrame:
    frame = pd.DataFrame(np.asarray(probs, dtype=float), columns=HMS_VOTES)
    frame.insert(0, "eeg_id", answers["eeg_id"].to_numpy())
    return roundtrip(frame)


def hms_soft(answers: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(6), size=len(answers))
    return hms_submission(answers, probs)


def hms_reference(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    """Row-by-row KL divergence (submission in the answers' row order; a NaN term counts 0)."""
    total = 0.0
    for i in range(len(answers)):
        counts = [float(answers[c].iloc[i]) for c in HMS_VOTES]
        row = 0.0
        for c, count in zip(HMS_VOTES, counts):
            t = count / sum(counts)
            p = min(max(float(submission[c].iloc[i]), 1e-15), 1 - 1e-15)
            if t != 0 and not math.isnan(p):
                row += t * math.log(t / p)
        total += row
    return total / len(answers)


def breast_answers() -> pd.DataFrame:
    ids = ["10008_L", "10008_R", "10130_L", "10130_R", "1025_L", "1025_R"]
    return roundtrip(pd.DataFrame({"prediction_id": ids, "cancer": [0, 1, 0, 0, 1, 0]}))


def breast_submission(answers: pd.DataFrame, values) -> pd.DataFrame:
    return roundtrip(pd.DataFrame({"prediction_id": answers["prediction_id"], "cancer": list(values)}))


def answers_and_good_submission(competition: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Answers and a valid, imperfect submission."""
    if competition == LMSYS:
        answers = lmsys_answers()
        return answers, lmsys_soft(answers)
    if competition == STATOIL:
        answers = statoil_answers()
        return answers, roundtrip(pd.DataFrame({"id": answers["id"], "is_iceberg": [0.1, 0.7, 0.4, 0.2, 0.9]}))
    if competition == SPINE:
        answers = spine_answers()
        values = np.linspace(0.05, 0.95, len(answers))
        return answers, roundtrip(pd.DataFrame({"row_id": answers["row_id"], "fractured": values}))
    if competition in (BRATS, SETI):
        answers = binary_answers(competition)
        id_column, target = params(competition)["id_column"], params(competition)["target_column"]
        scores = np.linspace(0.1, 0.9, len(answers))[::-1]
        return answers, roundtrip(pd.DataFrame({id_column: answers[id_column], target: scores}))
    if competition == ALASKA:
        answers = alaska_answers()
        return answers, alaska_submission(answers, [0.9, 0.2, 0.5, 0.1])
    if competition == JIGSAW:
        answers = jigsaw_answers()
        rng = np.random.default_rng(1)
        predictions = np.where(rng.random(len(answers)) < 0.7, answers["toxicity"], rng.random(len(answers)))
        return answers, roundtrip(pd.DataFrame({"id": answers["id"], "prediction": predictions}))
    if competition == HMS:
        answers = hms_answers()
        return answers, hms_soft(answers)
    if competition == BREAST:
        answers = breast_answers()
        return answers, breast_submission(answers, [0.1, 0.6, 0.3, 0.0, 0.9, 0.2])
    raise KeyError(competition)


# ---------------------------------------------------------------------------------------------------
# Every competition


@pytest.mark.parametrize("competition", ALL)
def test_grading_does_not_modify_the_inputs(competition):
    answers, submission = answers_and_good_submission(competition)
    before_answers, before_submission = answers.copy(deep=True), submission.copy(deep=True)
    score = grade(competition, submission, answers)
    assert math.isfinite(score)
    pd.testing.assert_frame_equal(answers, before_answers)
    pd.testing.assert_frame_equal(submission, before_submission)


@pytest.mark.parametrize("competition", ALL)
def test_a_row_order_change_does_not_change_the_score(competition):
    answers, submission = answers_and_good_submission(competition)
    if competition == HMS:  # repeated ids are paired by sorted position: give an EEG's windows one guess
        first = submission.groupby("eeg_id")[HMS_VOTES].transform("first")
        submission = roundtrip(pd.concat([submission[["eeg_id"]], first], axis=1))
    order = np.random.default_rng(5).permutation(len(submission))
    shuffled = submission.iloc[order].reset_index(drop=True)
    assert grade(competition, shuffled, answers) == pytest.approx(grade(competition, submission, answers), abs=1e-12)


@pytest.mark.parametrize("competition", ALL)
def test_a_missing_row_or_an_unknown_id_is_refused(competition):
    answers, submission = answers_and_good_submission(competition)
    id_column = params(competition)["id_column"]
    reject(competition, submission.iloc[1:].reset_index(drop=True), answers)
    numeric = pd.api.types.is_numeric_dtype(answers[id_column].dtype)
    stranger = 999_999_999 if numeric else "not-an-id"
    unknown = submission.astype({id_column: object})
    unknown.loc[len(unknown) - 1, id_column] = stranger
    reject(competition, roundtrip(unknown), answers, str(stranger))


@pytest.mark.parametrize("competition", [c for c in ALL if c != JIGSAW])
def test_a_missing_prediction_column_is_refused_by_name(competition):
    answers, submission = answers_and_good_submission(competition)
    column = [c for c in submission.columns if c != params(competition)["id_column"]][-1]
    reject(competition, submission.drop(columns=[column]), answers, "missing", column)


@pytest.mark.parametrize("competition", [c for c in ALL if c != JIGSAW])
def test_text_predictions_are_refused(competition):
    answers, submission = answers_and_good_submission(competition)
    column = next(c for c in submission.columns if c != params(competition)["id_column"])
    text = submission.astype({column: object})
    text.loc[1, column] = "high"
    reject(competition, roundtrip(text), answers, "'high'", "row 2")


# ---------------------------------------------------------------------------------------------------
# lmsys-chatbot-arena: multi-class log loss, rows rounded to 6 decimals must sum to 1


def test_lmsys_scores_the_mean_negative_log_probability_of_the_winner():
    answers = lmsys_answers()
    submission = lmsys_soft(answers)
    expected = 0.0
    for i in range(len(answers)):
        winner = next(c for c in LMSYS_CLASSES if answers[c].iloc[i] == 1)
        expected -= math.log(min(max(submission[winner].iloc[i], EPS), 1 - EPS))
    assert grade(LMSYS, submission, answers) == pytest.approx(expected / len(answers), rel=1e-12)


def test_lmsys_a_one_hot_submission_costs_only_the_clipping():
    answers = lmsys_answers()
    perfect = roundtrip(answers[["id", *LMSYS_CLASSES]])
    assert grade(LMSYS, perfect, answers) == pytest.approx(-math.log1p(-EPS))


def test_lmsys_rows_must_sum_to_one_at_six_decimals():
    answers = lmsys_answers()
    submission = lmsys_soft(answers)
    inside = submission.copy()
    inside.loc[0, "winner_tie"] += 4e-7  # rounds to 1.000000
    assert math.isfinite(grade(LMSYS, inside, answers))
    for offset in (6e-7, -6e-7):  # within numpy.isclose's tolerance, but not 1 at 6 decimals
        outside = submission.copy()
        outside.loc[2, "winner_tie"] += offset
        reject(LMSYS, outside, answers, "rounded to 6 decimals", "row 3")


def test_lmsys_refuses_probabilities_outside_zero_one_and_ignores_extra_columns():
    answers = lmsys_answers()
    submission = lmsys_soft(answers)
    bad = submission.copy()
    bad.loc[1, LMSYS_CLASSES] = [1.25, -0.25, 0.0]
    reject(LMSYS, bad, answers, "within [0, 1]", "row 2", "-0.25")
    extra = submission.assign(model_a="gpt-4")
    assert grade(LMSYS, extra, answers) == grade(LMSYS, submission, answers)


# ---------------------------------------------------------------------------------------------------
# statoil: binary log loss


def test_statoil_binary_log_loss_by_hand():
    answers, submission = answers_and_good_submission(STATOIL)
    expected = -sum(math.log(p if y else 1 - p) for y, p in zip(answers["is_iceberg"], submission["is_iceberg"])) / len(
        answers
    )
    assert grade(STATOIL, submission, answers) == pytest.approx(expected, rel=1e-12)
    perfect = roundtrip(answers[["id", "is_iceberg"]])
    assert grade(STATOIL, perfect, answers) == pytest.approx(0.0, abs=1e-12)


def test_statoil_refuses_out_of_range_and_repeated_ids():
    answers, submission = answers_and_good_submission(STATOIL)
    high = submission.copy()
    high.loc[3, "is_iceberg"] = 1.5
    reject(STATOIL, high, answers, "within [0, 1]", "row 4")
    repeated = pd.concat([submission, submission.iloc[:1]], ignore_index=True)
    reject(STATOIL, repeated, answers, "rows")


# ---------------------------------------------------------------------------------------------------
# rsna-2022-cervical-spine: weighted multi-label log loss, averaged per study


def test_spine_constant_one_half_costs_log_two_whatever_the_weights():
    answers = spine_answers()
    half = roundtrip(pd.DataFrame({"row_id": answers["row_id"], "fractured": 0.5}))
    assert grade(SPINE, half, answers) == pytest.approx(math.log(2), rel=1e-12)


def test_spine_matches_a_per_study_loop_reference():
    answers, submission = answers_and_good_submission(SPINE)
    assert grade(SPINE, submission, answers) == pytest.approx(spine_reference(answers, submission), rel=1e-12)


def test_spine_averages_within_each_study_before_averaging_studies():
    answers = spine_answers()
    perfect = answers[["row_id", "fractured"]].astype({"fractured": float})
    wrong = perfect.copy()
    first = answers.index[answers["row_id"] == "1.2.826.0.1.3680043.10001_patient_overall"][0]
    wrong.loc[first, "fractured"] = 0.0  # a fractured patient called healthy: -log(1e-15) at weight 14
    # study 10001 weighs 14 (overall) + 2 + 2 (C2, C7) + 5 x 1 = 23; the other studies lose nothing
    expected = (14 * -math.log(1e-15) / 23) / 3
    assert grade(SPINE, roundtrip(wrong), answers) == pytest.approx(expected, rel=1e-9)
    global_average = 14 * -math.log(1e-15) / (23 + 7 + 8 * 1 - 1 + 14 + 2)
    assert not math.isclose(expected, global_average, rel_tol=1e-3)


def test_spine_grades_a_subset_of_a_studys_rows():
    answers = spine_answers().iloc[::2].reset_index(drop=True)
    _, submission = answers_and_good_submission(SPINE)
    subset = submission[submission["row_id"].isin(answers["row_id"])].reset_index(drop=True)
    assert grade(SPINE, subset, answers) == pytest.approx(spine_reference(answers, subset), rel=1e-12)


def test_spine_refuses_out_of_range_and_empty_values():
    answers, submission = answers_and_good_submission(SPINE)
    high = submission.copy()
    high.loc[2, "fractured"] = 1.01
    reject(SPINE, high, answers, "within [0, 1]", "row 3")
    empty = submission.copy()
    empty.loc[4, "fractured"] = np.nan
    reject(SPINE, empty, answers, "missing", "row 5")


# ---------------------------------------------------------------------------------------------------
# brain tumour and SETI: plain ROC AUC


@pytest.mark.parametrize("competition", [BRATS, SETI])
def test_binary_auc_matches_the_pairwise_definition(competition):
    answers = binary_answers(competition)
    id_column, target = params(competition)["id_column"], params(competition)["target_column"]
    scores = [0.3, 0.3, 0.8, 0.1, 0.5, 0.9, 0.2][: len(answers)]
    submission = roundtrip(pd.DataFrame({id_column: answers[id_column], target: scores}))
    expected = _pairwise_auc(list(answers[target] == 1), scores)
    assert grade(competition, submission, answers) == pytest.approx(expected, rel=1e-12)
    perfect = roundtrip(answers[[id_column, target]])
    assert grade(competition, perfect, answers) == 1.0


@pytest.mark.parametrize("competition", [BRATS, SETI])
def test_binary_auc_refuses_scores_outside_zero_one(competition):
    answers, submission = answers_and_good_submission(competition)
    target = params(competition)["target_column"]
    bad = submission.copy()
    bad.loc[0, target] = 2.0
    reject(competition, bad, answers, "within [0, 1]", "row 1")


# ---------------------------------------------------------------------------------------------------
# alaska2: TPR-band weighted AUC


def test_alaska_a_perfect_ranking_scores_one_and_a_reversed_one_zero():
    answers = alaska_answers()
    assert grade(ALASKA, alaska_submission(answers, [0.9, 0.8, 0.2, 0.1]), answers) == pytest.approx(1.0)
    assert grade(ALASKA, alaska_submission(answers, [0.1, 0.2, 0.8, 0.9]), answers) == pytest.approx(0.0)


def test_alaska_a_constant_score_gets_the_diagonal_weighted_area():
    # diagonal ROC: band [0, .4] area 0.08 + 0.4 * 0.6 = 0.32 (x2), band [.4, 1] area 0.18 (x1); / 1.4
    answers = alaska_answers()
    assert grade(ALASKA, alaska_submission(answers, [0, 0, 0, 0]), answers) == pytest.approx(0.82 / 1.4)


def test_alaska_interpolates_a_point_where_the_curve_crosses_tpr_point_four():
    # positives 0.5, 0.5; negatives 0.5, 0.1: ROC (0,0) -> (.5,1) -> (1,1), crossing TPR .4 at FPR .2.
    # band [0, .4]: 0.04 + 0.4 * 0.8 = 0.36 (x2); band [.4, 1]: 0.09 + 0.3 = 0.39; (0.72 + 0.39) / 1.4
    answers = alaska_answers((1, 1, 0, 0))
    submission = alaska_submission(answers, [0.5, 0.5, 0.5, 0.1])
    assert grade(ALASKA, submission, answers) == pytest.approx(1.11 / 1.4, rel=1e-12)
    # positives .9 .8 .3, negatives .7 .2: the curve is at TPR 2/3 from FPR 0 on
    answers = alaska_answers((1, 1, 0, 1, 0))
    submission = alaska_submission(answers, [0.9, 0.8, 0.7, 0.3, 0.2])
    expected = (2 * 0.4 + (0.5 * (2 / 3 - 0.4) + 0.5 * 0.6)) / 1.4
    assert grade(ALASKA, submission, answers) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_alaska_matches_a_dense_numerical_integral(seed):
    rng = np.random.default_rng(seed)
    labels = (rng.random(60) < 0.5).astype(int)
    labels[:2] = [0, 1]
    scores = np.round(rng.random(60) + 0.4 * labels, 1)  # rounded: many ties
    answers = alaska_answers(tuple(labels))
    submission = alaska_submission(answers, scores)
    expected = _weighted_auc_by_integral(list(labels), list(scores))
    assert grade(ALASKA, submission, answers) == pytest.approx(expected, abs=1e-5)


def test_alaska_accepts_any_finite_number_and_text_that_reads_as_one():
    answers = alaska_answers()
    base = grade(ALASKA, alaska_submission(answers, [0.9, 0.2, 0.5, 0.1]), answers)
    assert grade(ALASKA, alaska_submission(answers, [90, -20, 5, -100]), answers) == base
    text = roundtrip(pd.DataFrame({"Id": answers["Id"], "Label": [" 0.9", "0.2 ", "0.5", "1e-1"]}))
    assert grade(ALASKA, text, answers) == base


def test_alaska_refuses_empty_infinite_and_non_numeric_labels():
    answers = alaska_answers()
    reject(ALASKA, alaska_submission(answers, [0.9, np.nan, 0.5, 0.1]), answers, "missing", "row 2")
    reject(ALASKA, alaska_submission(answers, [0.9, np.inf, 0.5, 0.1]), answers, "infinite", "row 2")
    text = roundtrip(pd.DataFrame({"Id": answers["Id"], "Label": ["0.9", "high", "0.5", "0.1"]}))
    reject(ALASKA, text, answers, "not a number", "'high'")


def test_alaska_the_weights_are_parameters():
    fpr, tpr = np.array([0.0, 1.0]), np.array([0.0, 1.0])
    assert tpr_weighted_auc(fpr, tpr, [0.0, 1.0], [1.0]) == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------------
# jigsaw-unintended-bias: bias AUCs on predictions binarised at 0.5


def test_jigsaw_perfect_predictions_score_one():
    answers = jigsaw_answers()
    perfect = roundtrip(pd.DataFrame({"id": answers["id"], "prediction": answers["toxicity"]}))
    assert grade(JIGSAW, perfect, answers) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(3))
def test_jigsaw_matches_a_loop_reference_of_kaggles_metric(seed):
    answers = jigsaw_answers(seed)
    rng = np.random.default_rng(seed + 10)
    predictions = np.where(rng.random(len(answers)) < 0.6, answers["toxicity"], rng.random(len(answers)))
    submission = roundtrip(pd.DataFrame({"id": answers["id"], "prediction": predictions}))
    assert grade(JIGSAW, submission, answers) == pytest.approx(
        jigsaw_reference(answers, submission["prediction"]), rel=1e-12
    )


def test_jigsaw_only_the_side_of_one_half_counts():
    answers, submission = answers_and_good_submission(JIGSAW)
    p = submission["prediction"]
    squashed = submission.assign(prediction=np.where(p >= 0.5, 0.5 + (p - 0.5) / 10, p / 3))
    assert grade(JIGSAW, squashed, answers) == grade(JIGSAW, submission, answers)
    flipped = submission.assign(prediction=np.where(p >= 0.5, 0.5, 0.4999))
    assert grade(JIGSAW, flipped, answers) == grade(JIGSAW, submission, answers)


def test_jigsaw_accepts_a_toxicity_column_and_reads_an_empty_prediction_as_below_one_half():
    answers, submission = answers_and_good_submission(JIGSAW)
    renamed = submission.rename(columns={"prediction": "toxicity"})
    assert grade(JIGSAW, renamed, answers) == grade(JIGSAW, submission, answers)
    empty = submission.copy()
    empty.loc[:9, "prediction"] = np.nan
    zero = submission.copy()
    zero.loc[:9, "prediction"] = 0.0
    assert grade(JIGSAW, empty, answers) == grade(JIGSAW, zero, answers)


def test_jigsaw_refuses_a_file_without_a_prediction_column():
    answers, submission = answers_and_good_submission(JIGSAW)
    reject(JIGSAW, submission.rename(columns={"prediction": "score"}), answers, "prediction", "toxicity", "score")


def test_jigsaw_a_subgroup_with_one_class_makes_the_score_nan_as_kaggles_code_does():
    answers = jigsaw_answers()
    one_class = answers.copy()
    one_class.loc[one_class["male"] >= 0.5, "toxicity"] = 0.0
    submission = roundtrip(pd.DataFrame({"id": answers["id"], "prediction": 0.7}))
    assert math.isnan(grade(JIGSAW, submission, one_class))


# ---------------------------------------------------------------------------------------------------
# hms: KL divergence against normalised votes, repeated eeg_ids


def test_hms_perfect_shares_score_zero():
    answers = hms_answers()
    counts = answers[HMS_VOTES].to_numpy(dtype=float)
    perfect = hms_submission(answers, counts / counts.sum(axis=1, keepdims=True))
    assert grade(HMS, perfect, answers) == pytest.approx(0.0, abs=1e-12)


def test_hms_matches_a_row_by_row_reference():
    answers, submission = answers_and_good_submission(HMS)
    assert grade(HMS, submission, answers) == pytest.approx(hms_reference(answers, submission), rel=1e-12)


def test_hms_a_certain_wrong_class_costs_the_clipped_logarithm():
    # row truth (1, 0, ...): predicting class 2 with certainty costs log(1 / 1e-15) = 34.54
    answers = hms_answers().iloc[:1].reset_index(drop=True)
    submission = hms_submission(answers, [[0, 1, 0, 0, 0, 0]])
    assert grade(HMS, submission, answers) == pytest.approx(-math.log(1e-15), rel=1e-12)


def test_hms_rows_must_sum_to_one_at_five_decimals():
    answers, submission = answers_and_good_submission(HMS)
    inside = submission.copy()
    inside.loc[0, "other_vote"] += 4e-6
    assert math.isfinite(grade(HMS, inside, answers))
    outside = submission.copy()
    outside.loc[3, "other_vote"] += 6e-6
    reject(HMS, outside, answers, "rounded to 5 decimals", "row 4")


def test_hms_checks_the_set_of_ids_not_how_often_each_repeats():
    answers, submission = answers_and_good_submission(HMS)
    regrouped = submission.copy()
    regrouped.loc[2, "eeg_id"] = 568657  # 568657 three times, 582999 ... missing
    reject(HMS, roundtrip(regrouped), answers, "582999")
    recounted = submission.copy()
    recounted.loc[1, "eeg_id"] = 1628180742  # same ids, other multiplicities: paired by sorted position
    assert math.isfinite(grade(HMS, roundtrip(recounted), answers))


def test_hms_every_non_id_column_enters_the_probability_checks():
    answers, submission = answers_and_good_submission(HMS)
    zeros = submission.assign(spectrogram_id=0)
    assert grade(HMS, zeros, answers) == grade(HMS, submission, answers)
    ids = submission.assign(spectrogram_id=353733)
    reject(HMS, ids, answers, "at most 1", "spectrogram_id", "remove it")


def test_hms_refuses_negative_values_even_when_rows_sum_to_one():
    answers, submission = answers_and_good_submission(HMS)
    bad = submission.copy()
    bad.loc[0, HMS_VOTES] = [1.2, -0.2, 0, 0, 0, 0]
    reject(HMS, bad, answers, "at least 0", "row 1", "lpd_vote", "-0.2")


def test_hms_an_empty_cell_in_a_row_that_still_sums_to_one_is_skipped_as_in_the_reference():
    answers = hms_answers()
    probs = np.full((len(answers), 6), 1 / 6)
    probs[0] = [np.nan, 0.5, 0.5, 0, 0, 0]  # truth of row 1 is all seizure: its only term is skipped
    submission = hms_submission(answers, probs)
    expected = hms_reference(answers, submission)
    assert grade(HMS, submission, answers) == pytest.approx(expected, rel=1e-12)
    rest = hms_reference(answers.iloc[1:].reset_index(drop=True), submission.iloc[1:].reset_index(drop=True))
    assert expected == pytest.approx(rest * (len(answers) - 1) / len(answers), rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# rsna-breast-cancer: probabilistic F1


def test_breast_pf1_by_hand():
    # positives rows 2 and 5: cTP = 0.6 + 0.9 = 1.5, cFP = 0.1 + 0.3 + 0 + 0.2 = 0.6
    # pF1 = 2 cTP / (cTP + cFP + positives) = 3 / 4.1
    answers, submission = answers_and_good_submission(BREAST)
    assert grade(BREAST, submission, answers) == pytest.approx(3 / 4.1, rel=1e-12)
    perfect = roundtrip(answers[["prediction_id", "cancer"]])
    assert grade(BREAST, perfect, answers) == 1.0


def test_breast_predictions_are_clipped_not_refused():
    answers = breast_answers()
    clipped = breast_submission(answers, [0.0, 1.0, 0.3, 0.0, 0.9, 0.2])
    wild = breast_submission(answers, [-4.0, 7.5, 0.3, -0.1, 0.9, 0.2])
    assert grade(BREAST, wild, answers) == grade(BREAST, clipped, answers)


def test_breast_all_zero_predictions_divide_by_zero_and_are_invalid():
    answers = breast_answers()
    reject(BREAST, breast_submission(answers, [0, 0, 0, 0, 0, 0]), answers, "divides by zero")
    reject(BREAST, breast_submission(answers, [0, -1, 0, 0, -0.5, 0]), answers, "divides by zero")


def test_breast_an_empty_prediction_scores_zero_like_kaggles_pfbeta():
    answers = breast_answers()
    assert grade(BREAST, breast_submission(answers, [0.1, 0.6, np.nan, 0.0, 0.9, 0.2]), answers) == 0.0


def test_breast_only_negatives_predicted_scores_zero():
    answers = breast_answers()
    assert grade(BREAST, breast_submission(answers, [0.5, 0, 0, 0, 0, 0]), answers) == 0.0


def test_pf_beta_weighs_recall_by_beta():
    positive = np.array([True, False, True, False])
    predictions = np.array([0.8, 0.4, 0.2, 0.0])
    precision, recall = 1.0 / 1.4, 1.0 / 2
    expected = 5 * precision * recall / (4 * precision + recall)
    assert probabilistic_f_beta(positive, predictions, 2.0) == pytest.approx(expected, rel=1e-12)
