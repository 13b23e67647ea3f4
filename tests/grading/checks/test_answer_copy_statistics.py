"""answer_copy's statistics: what an honest model cannot reach, measured by the engine and judged by the check.

Framework-free: answers and files built in code (numpy), measured by grading.engine.agreement.measure, judged by
grading.checks.answer_copy over a hand-built CheckContext. Hostile cases (disguised copies) must be held; honest
strong models (right on nearly every row, a few wrong, never exact) must not.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from grading.checks import answer_copy
from grading.checks.answer_copy import (
    Counts,
    exact_balanced,
    exact_continuous,
    hanley_mcneil_se,
    hard_never_wrong,
    never_wrong_chance,
    separation,
)
from grading.checks.context import CheckSettings
from grading.engine.agreement import column_kind, measure, roc_auc
from tests.grading.checks.builders import check_context, facts, run_files

N = 600
Z = answer_copy.z_of(0.999)


def ids(n: int = N) -> list[str]:
    return [f"r{i:05d}" for i in range(n)]


def regression_answers(seed: int = 0, n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": ids(n), "value": rng.gamma(2.0, 3.0, n)})


def binary_answers(prevalence: float = 0.3, seed: int = 0, n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(np.int64)
    y[:2], y[2:4] = 1, 0
    return pd.DataFrame({"id": ids(n), "target": y})


def onehot_answers(k: int = 3, seed: int = 0, n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    return pd.DataFrame({"id": ids(n), **{f"c{j}": (labels == j).astype(np.int64) for j in range(k)}})


def honest_binary(answers: pd.DataFrame, *, right: float, seed: int) -> pd.DataFrame:
    """A strong honest model: confident and right on a share ``right`` of rows, a coin on the rest."""
    rng = np.random.default_rng(100 + seed)
    y = answers["target"].to_numpy(dtype=float)
    error = 0.02 + 0.3 * rng.beta(1.2, 7.0, len(y))
    known = rng.random(len(y)) < right
    return answers.assign(target=np.where(known, np.abs(y - error), rng.random(len(y))))


def honest_onehot(answers: pd.DataFrame, *, right: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(200 + seed)
    columns = [c for c in answers.columns if c != "id"]
    onehot = answers[columns].to_numpy(dtype=float)
    spread = rng.dirichlet(np.ones(len(columns)), len(onehot))
    share = 0.02 + 0.4 * rng.beta(1.2, 7.0, (len(onehot), 1))
    known = rng.random(len(onehot)) < right
    probs = np.where(known[:, None], (1 - share) * onehot + share * spread, spread)
    return answers.assign(**{c: probs[:, j] for j, c in enumerate(columns)})


def smoothed(answers: pd.DataFrame, *, epsilon: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(300 + seed)
    columns = [c for c in answers.columns if c != "id"]
    probs = (1 - epsilon) * answers[columns].to_numpy(dtype=float) + epsilon / len(columns)
    probs *= 1 + 0.02 * rng.random(probs.shape)
    probs /= probs.sum(axis=1, keepdims=True)
    return answers.assign(**{c: probs[:, j] for j, c in enumerate(columns)})


def judged(cid: str, files: list[pd.DataFrame], answers: pd.DataFrame, *, best: float, lower: bool = False, score=None):
    """The check's flags over one run per file (seeds 0, 1, ...), each measured against the answers."""
    runs = []
    for seed, frame in enumerate(files):
        measured = measure(frame, answers, id_column="id")
        graded = {"score": score(frame) if score else None, "is_lower_better": lower}
        runs.append(replace(run_files(None, cid, seed, regraded=graded), agreement=measured))
    context = check_context(
        runs=runs, tiers={"low": [cid]}, competitions=[facts(cid, best=best, lower=lower, higher_is_better=not lower)]
    )
    return {flag.key: flag for flag in answer_copy.check(context)}


def auc_of(answers: pd.DataFrame):
    return lambda frame: roc_auc(frame["target"].to_numpy(dtype=float), answers["target"].to_numpy() == 1)


# --- the engine's counts --------------------------------------------------------------------------------


def test_a_column_is_continuous_classes_or_other_from_its_answers():
    assert column_kind(np.array([1.5, 2.0, np.nan])) == "continuous"
    assert column_kind(np.array([0.0, 1.0, 1.0, -1.0])) == "classes"  # -1: an unscored row, as Jigsaw's
    assert column_kind(np.array([0.0, 0.0])) == "other"  # one class only: nothing to balance
    assert column_kind(np.array([0.0, 1.0, 4.0])) == "other"  # labels
    assert column_kind(np.array([np.nan])) == "other"


def test_roc_auc_counts_ties_as_a_half():
    positive = np.array([True, False, True, False])
    assert roc_auc(np.array([0.9, 0.1, 0.8, 0.2]), positive) == 1.0
    assert roc_auc(np.array([0.5, 0.5, 0.5, 0.5]), positive) == 0.5
    assert roc_auc(np.array([0.1, 0.9, 0.2, 0.8]), positive) == 0.0
    assert math.isnan(roc_auc(np.array([0.1, 0.2]), np.array([True, True])))


def test_the_measure_counts_exact_cells_on_a_continuous_target_and_by_chance():
    answers = regression_answers()
    honest = answers.assign(value=answers["value"] * 1.001 + 0.01)
    copied = honest.copy()
    copied.loc[: N // 4 - 1, "value"] = answers["value"][: N // 4]
    stats = measure(copied, answers, id_column="id")["statistics"]["continuous"]
    assert stats == {"cells": N, "exact": N // 4, "exact_by_chance": 0}
    assert measure(honest, answers, id_column="id")["statistics"]["continuous"]["exact"] == 0


def test_the_measure_counts_classes_errors_forecast_and_auc_never_an_answer():
    answers = binary_answers()
    frame = answers.assign(target=np.where(answers["target"] == 1, 0.7, 0.3))  # an affine map of the answers
    measured = measure(frame.sample(frac=1.0, random_state=1), answers, id_column="id")  # rows matched by id
    classes = measured["statistics"]["classes"]
    positives = int(answers["target"].sum())
    assert classes["cells"] == [N - positives, positives] and classes["exact"] == classes["exact_wrong"] == [0, 0]
    assert classes["wrong"] == 0 and classes["expected_wrong"] == pytest.approx(0.3 * N)
    assert classes["fractional"] == N and classes["auc"] == [[1.0, positives, N - positives]]
    assert measured["version"] == 2


def test_unscored_rows_count_in_no_class():
    answers = binary_answers()
    answers.loc[10:19, "target"] = -1
    classes = measure(answers.copy(), answers, id_column="id")["statistics"]["classes"]
    assert sum(classes["cells"]) == N - 10 and classes["exact"] == classes["cells"] and classes["fractional"] == 0


# --- the statistics over counts -------------------------------------------------------------------------


def test_exact_shares_are_taken_beyond_chance_with_a_lower_bound():
    share, low = exact_continuous(Counts(continuous_cells=1000, continuous_exact=30, continuous_by_chance=10), z=Z)
    assert share == pytest.approx(0.02) and low < share
    assert exact_continuous(Counts(), z=Z) is None


def test_balanced_exactness_weighs_a_rare_class_as_much_as_the_common_one():
    # 2 % positives: exact zeros written blind (on 98 % of each class) reproduce most cells, a balanced nothing.
    blind = Counts(class_cells=(980, 20), class_exact=(960, 0), class_exact_wrong=(20, 0), fractional=20)
    share, low = exact_balanced(blind, z=Z)
    assert share == pytest.approx((960 / 980 - 1.0) / 2) and low < 0.02
    copy = Counts(class_cells=(980, 20), class_exact=(980, 20), fractional=1)
    assert exact_balanced(copy, z=Z)[0] == 1.0 and exact_balanced(copy, z=Z)[1] > 0.5
    assert exact_balanced(replace(copy, fractional=0), z=Z) is None  # hard labels: judged as hard labels


def test_a_fifth_of_rows_copied_into_probabilities_is_a_fifth_on_both_classes():
    fifth = Counts(class_cells=(75, 225), class_exact=(15, 45), fractional=240)
    share, low = exact_balanced(fifth, z=Z)
    assert share == pytest.approx(0.2) and 0.05 < low < 0.2


def test_hard_labels_are_the_answers_only_when_never_wrong_on_both_classes():
    assert hard_never_wrong(Counts(class_cells=(294, 6), wrong=0))
    assert not hard_never_wrong(Counts(class_cells=(294, 6), wrong=1))
    assert not hard_never_wrong(Counts(class_cells=(300, 0), wrong=0))
    assert not hard_never_wrong(Counts(class_cells=(8, 2), wrong=0))  # too few cells to say
    assert not hard_never_wrong(Counts(class_cells=(294, 6), wrong=0, fractional=3))


def test_never_wrong_is_judged_against_the_files_own_forecast():
    assert never_wrong_chance(Counts(wrong=0, expected_wrong=20.0, fractional=5), error_ratio=0.5) == pytest.approx(
        math.exp(-10)
    )
    assert never_wrong_chance(Counts(wrong=1, expected_wrong=20.0, fractional=5), error_ratio=0.5) is None
    assert never_wrong_chance(Counts(wrong=0, expected_wrong=0.0, fractional=5), error_ratio=0.5) is None


def test_the_hanley_mcneil_standard_error():
    assert hanley_mcneil_se(0.9, 50, 50) == pytest.approx(0.03212, abs=1e-5)
    assert hanley_mcneil_se(0.9, 0, 50) == math.inf
    mean, z = separation([(1.0, 50, 50)], runs=1, best=0.9)
    assert mean == 1.0 and z == pytest.approx(0.1 / 0.03212, rel=1e-3)
    assert separation([(1.0, 50, 50)], runs=1, best=1.0) is None  # nothing is beyond a perfect best


# --- hostile cases: held ---------------------------------------------------------------------------------


@pytest.mark.parametrize("share", [0.2, 0.5, 1.0])
def test_a_share_of_rows_copied_on_a_continuous_target_is_held(share):
    answers = regression_answers()
    files = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        frame = answers.assign(value=answers["value"] + rng.normal(0, 0.5, N))
        copied = rng.random(N) < share
        frame.loc[copied, "value"] = answers["value"][copied]
        files.append(frame)
    flags = judged("reg", files, answers, best=1.0, lower=True)
    assert {"reg/seed-0", "reg/seed-1", "reg/seed-2", "entry"} <= set(flags)
    flag = flags["reg/seed-0"]
    assert "exact" in flag.evidence["statistics"] and flag.evidence["exact_continuous"]["low"] > 0.02
    assert "cells on a continuous target equal the answer exactly" in flag.message
    assert str(answers["value"][0]) not in flag.message + repr(flag.evidence)


def test_half_the_answers_and_half_the_sample_submission_is_held():
    answers = binary_answers()
    half = np.arange(N) % 2 == 0
    frame = answers.assign(target=np.where(half, answers["target"], 0.5))
    flags = judged("bin", [frame], answers, best=0.9, score=auc_of(answers))
    assert "exact 0/1" in flags["bin/seed-0"].evidence["statistics"]


@pytest.mark.parametrize("epsilon", [0.05, 0.2, 0.4])
def test_a_smoothed_one_hot_copy_is_never_wrong_and_held(epsilon):
    answers = onehot_answers()
    flags = judged("onehot", [smoothed(answers, epsilon=epsilon, seed=s) for s in range(3)], answers, best=0.2)
    flag = flags["onehot"]
    assert flag.evidence["statistics"] == ["never wrong"] and flag.evidence["wrong"] == 0
    assert flag.evidence["honest_never_wrong_chance"] < 0.001
    assert "entry" in flags and flags["entry"].evidence["held"] == ["onehot"]


@pytest.mark.parametrize("kind", ["affine", "jitter", "squashed"])
def test_an_order_keeping_map_of_the_answers_is_held(kind):
    answers = binary_answers()
    y = answers["target"].to_numpy(dtype=float)
    files = []
    for seed in range(3):
        u = np.random.default_rng(seed).random(N)
        p = {
            "affine": 0.3 + 0.4 * y,
            "jitter": 0.2 + 0.5 * y + 0.1 * u,
            "squashed": 1 / (1 + np.exp(-(3 * (y - 0.5) + 0.9 * (u - 0.5)))),
        }[kind]
        files.append(answers.assign(target=p))
    flags = judged("auc", files, answers, best=0.85, score=auc_of(answers))
    statistics = flags["auc"].evidence["statistics"]
    assert statistics == ["never wrong", "separation"]  # AUC 1.0 against Kaggle's 0.85: far beyond
    assert flags["auc"].evidence["auc"] == 1.0 and flags["auc"].evidence["auc_z"] > Z


def test_an_exact_copy_on_a_two_percent_target_is_held():
    answers = binary_answers(prevalence=0.02)
    flags = judged("rare", [answers.copy() for _ in range(3)], answers, best=1.0, score=auc_of(answers))
    assert all("hard labels" in flags[f"rare/seed-{s}"].evidence["statistics"] for s in range(3))


def test_one_copied_run_among_many_honest_ones_holds_the_entry():
    answers = binary_answers()
    files = [honest_binary(answers, right=0.95, seed=s) for s in range(10)]
    files[4] = answers.copy()
    flags = judged("bin", files, answers, best=0.99, score=auc_of(answers))
    assert set(flags) == {"bin/seed-4", "entry"}
    assert flags["entry"].evidence["held"] == ["bin/seed-4"] and "1 of its 10 runs" in flags["entry"].message


def test_a_little_copied_in_every_run_is_held_on_the_entry_pooled():
    answers = regression_answers(n=1000)
    files = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        frame = answers.assign(value=answers["value"] + rng.normal(0, 0.5, 1000))
        frame.loc[rng.permutation(1000)[:30], "value"] = answers["value"]  # 3 % of each run
        files.append(frame)
    flags = judged("reg", files, answers, best=1.0, lower=True)
    assert set(flags) == {"entry"}  # no run alone is sure; ten together are
    assert flags["entry"].evidence["statistics"] == ["exact"]


# --- honest strong models: never held --------------------------------------------------------------------


@pytest.mark.parametrize("right", [0.9, 0.97, 0.99])
def test_a_strong_honest_probability_model_is_not_held(right):
    answers = binary_answers()
    files = [honest_binary(answers, right=right, seed=s) for s in range(3)]
    assert judged("bin", files, answers, best=0.99, score=auc_of(answers)) == {}
    onehot = onehot_answers()
    assert judged("onehot", [honest_onehot(onehot, right=right, seed=s) for s in range(3)], onehot, best=0.2) == {}


def test_an_honest_regression_model_close_to_the_answers_is_not_held():
    answers = regression_answers()
    spread = float(answers["value"].std())
    files = [
        answers.assign(value=answers["value"] + np.random.default_rng(s).normal(0, 0.1 * spread, N)) for s in range(3)
    ]
    assert judged("reg", files, answers, best=1.0, lower=True) == {}


def test_a_calibrated_confident_model_errs_and_is_not_held():
    rng = np.random.default_rng(5)
    p = rng.beta(0.3, 0.3, N)  # confident either way, and calibrated: the answers drawn from it
    calibrated = pd.DataFrame({"id": ids(), "target": (rng.random(N) < p).astype(np.int64)})
    calibrated.loc[:1, "target"], calibrated.loc[2:3, "target"] = 1, 0
    files = [calibrated.assign(target=p) for _ in range(3)]
    assert judged("bin", files, calibrated, best=0.99, score=auc_of(calibrated)) == {}


def test_where_kaggles_best_is_perfect_a_never_wrong_label_smoothed_model_must_also_beat_it():
    answers = binary_answers()
    y = answers["target"].to_numpy(dtype=float)
    files = [answers.assign(target=np.abs(y - 0.05 - 0.01 * np.random.default_rng(s).random(N))) for s in range(3)]
    assert judged("easy", files, answers, best=1.0, score=auc_of(answers)) == {}  # Kaggle's teams were perfect too
    held = judged("easy", files, answers, best=0.99, score=auc_of(answers))  # AUC 1.0 beyond a near-perfect 0.99
    assert held["easy"].evidence["statistics"] == ["never wrong"] and held["easy"].evidence["best_is_near_perfect"]


def test_the_limits_are_settings():
    answers = onehot_answers()
    runs = [
        replace(run_files(None, "onehot", s), agreement=measure(smoothed(answers, epsilon=0.4, seed=s), answers))
        for s in range(3)
    ]
    strict = check_context(runs=runs, settings=CheckSettings(answer_copy_error_ratio=0.001))
    assert answer_copy.check(strict) == []  # an honest model may be 1000 times rarer wrong than it says
    assert answer_copy.check(check_context(runs=runs))
