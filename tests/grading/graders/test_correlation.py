"""Correlation graders: AI4Code (pooled Kendall tau), google-quest-challenge (column-wise Spearman),
nfl-player-contact-detection (Matthews), us-patent-phrase-to-phrase-matching (Pearson) and
osic-pulmonary-fibrosis-progression (modified Laplace log likelihood)."""

from __future__ import annotations

import math
from bisect import bisect, insort
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef as sklearn_mcc

from grading.engine.graders.correlation import matthews_corrcoef
from grading.engine.graders.correlation.kendall import (
    arrow_kendall_tau,
    count_inversions,
    count_row_inversions,
    kendall_tau_of_orders,
)

from .frames import GRADERS, grade, reject, roundtrip

AI4CODE = "AI4Code"
QUEST = "google-quest-challenge"
NFL = "nfl-player-contact-detection"
PATENT = "us-patent-phrase-to-phrase-matching"
OSIC = "osic-pulmonary-fibrosis-progression"
QUEST_TARGETS = GRADERS[QUEST]["params"]["target_columns"]


def _unchanged(frame: pd.DataFrame):
    copy = frame.copy(deep=True)
    return lambda: pd.testing.assert_frame_equal(frame, copy)


# ---------------------------------------------------------------------------------------------------
# AI4Code: pooled Kendall tau over cell orders


def _reference_kendall(truth_orders: list[str], predicted_orders: list[str]) -> float:
    """Kaggle's published metric: bisect-based inversion count over ``truth.index(cell)`` ranks."""
    inversions, pairs = 0, 0
    for truth, predicted in zip(truth_orders, predicted_orders):
        gt, pred = truth.split(), predicted.split()
        ranks = [gt.index(cell) for cell in pred]
        seen: list[int] = []
        for i, rank in enumerate(ranks):
            inversions += i - bisect(seen, rank)
            insort(seen, rank)
        pairs += len(gt) * (len(gt) - 1)
    return 1 - 4 * inversions / pairs


def _notebooks(rng: np.random.Generator, count: int) -> pd.DataFrame:
    orders = []
    for _ in range(count):
        cells = [f"{int(v):08x}" for v in rng.choice(2**32, size=int(rng.integers(2, 60)), replace=False)]
        orders.append(" ".join(cells))
    ids = [f"{int(v):014x}" for v in rng.choice(2**50, size=count, replace=False)]
    return roundtrip(pd.DataFrame({"id": ids, "cell_order": orders}))


def _shuffle_cells(rng: np.random.Generator, orders, share: float) -> list[str]:
    out = []
    for text in orders:
        cells = text.split()
        if rng.random() < share:
            cells = list(rng.permutation(cells))
        elif len(cells) > 2:  # a small local swap
            cells[0], cells[1] = cells[1], cells[0]
        out.append(" ".join(cells))
    return out


def test_ai4code_scores_a_perfect_order_one_and_a_reversed_order_minus_one():
    answers = _notebooks(np.random.default_rng(0), 20)
    assert grade(AI4CODE, answers.copy(), answers) == 1.0
    reversed_orders = answers.assign(cell_order=[" ".join(o.split()[::-1]) for o in answers["cell_order"]])
    assert grade(AI4CODE, reversed_orders, answers) == -1.0


def test_ai4code_matches_the_published_metric_whatever_the_row_order():
    rng = np.random.default_rng(1)
    answers = _notebooks(rng, 60)
    submission = answers.assign(cell_order=_shuffle_cells(rng, answers["cell_order"], 0.5))
    expected = _reference_kendall(list(answers["cell_order"]), list(submission["cell_order"]))
    assert expected not in (1.0, -1.0)
    assert grade(AI4CODE, submission, answers) == pytest.approx(expected, abs=1e-15)
    shuffled = roundtrip(submission.iloc[rng.permutation(len(submission))])
    assert grade(AI4CODE, shuffled, answers) == pytest.approx(expected, abs=1e-15)


def test_ai4code_pools_inversions_instead_of_averaging_per_notebook():
    answers = roundtrip(pd.DataFrame({"id": ["nb1", "nb2"], "cell_order": ["a b", "c d e"]}))
    submission = roundtrip(pd.DataFrame({"id": ["nb1", "nb2"], "cell_order": ["b a", "c d e"]}))
    # 1 inversion over 2*1 + 3*2 = 8: 1 - 4/8 = 0.5 (the mean of per-notebook taus, -1 and 1, would be 0)
    assert grade(AI4CODE, submission, answers) == 0.5


def test_ai4code_splits_on_any_whitespace_like_python():
    answers = roundtrip(pd.DataFrame({"id": ["nb1", "nb2"], "cell_order": ["a b c", "d e"]}))
    submission = roundtrip(pd.DataFrame({"id": ["nb1", "nb2"], "cell_order": ["  a\tb   c ", "e d"]}))
    assert grade(AI4CODE, submission, answers) == pytest.approx(1 - 4 * 1 / (6 + 2))


def test_ai4code_scores_a_repeated_cell_id_with_its_first_rank_like_the_reference():
    # truth.index gives both copies of 'a' rank 0; equal ranks are no inversion, and 'c' is never checked
    answers = roundtrip(pd.DataFrame({"id": ["nb1"], "cell_order": ["a b c"]}))
    submission = roundtrip(pd.DataFrame({"id": ["nb1"], "cell_order": ["b a a"]}))
    expected = _reference_kendall(["a b c"], ["b a a"])
    assert expected == pytest.approx(1 - 4 * 2 / 6)
    assert grade(AI4CODE, submission, answers) == pytest.approx(expected)


def test_count_inversions_matches_a_pairwise_count():
    rng = np.random.default_rng(2)
    for n in [0, 1, 2, 3, 31, 32, 33, 64, 65, 100, 257, 1000]:
        for values in (rng.permutation(n), rng.integers(0, max(1, n // 3), n), rng.integers(-50, 10**9, n)):
            expected = sum(1 for i, j in combinations(range(n), 2) if values[i] > values[j])
            assert count_inversions(values) == expected, n


def test_row_inversions_are_the_inversions_of_ranks_offset_by_row():
    rng = np.random.default_rng(3)
    for _ in range(200):
        lengths = rng.integers(1, int(rng.choice([3, 40, 100, 600])), size=int(rng.integers(1, 20)))
        ranks = np.concatenate(
            [rng.permutation(n) if rng.random() < 0.5 else rng.integers(0, n, n) for n in lengths.tolist()]
        ).astype(np.int64)
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        assert count_row_inversions(ranks, lengths) == count_inversions(ranks + starts)


def test_arrow_orders_match_the_python_path_or_leave_the_file_to_it():
    """The Arrow path scores exactly as the Python path, and declines whatever it does not read the same."""
    rng = np.random.default_rng(4)
    separators = [" ", " ", "  ", "\t", "\x1c", "\x0b", "\r\n", "\xa0"]  # no-break space: Python path
    seen = {"fast": 0, "declined": 0}
    for trial in range(150):
        n_rows = int(rng.integers(1, 12))
        width = 9 if trial % 10 == 0 else 8  # 9-character ids are left to the Python path
        truth_lists = [
            [f"{int(v):0{width}x}" for v in rng.choice(10**6, int(rng.integers(1, 70)), replace=False)]
            for _ in range(n_rows)
        ]
        truth = [" ".join(ids) for ids in truth_lists]
        predicted = []
        for ids in truth_lists:
            ids = list(rng.permutation(ids)) if rng.random() < 0.8 else list(ids)
            if rng.random() < 0.05:
                ids[0] = ids[-1]  # a repeated id
            if rng.random() < 0.03:
                ids = ids[1:]  # too few
            gaps = [str(rng.choice(separators)) if rng.random() < 0.05 else " " for _ in ids]
            predicted.append(str(rng.choice(["", " "])) + "".join(i + g for i, g in zip(ids, gaps)).rstrip(" "))
        sub_rows, ans_rows = rng.permutation(n_rows), rng.permutation(n_rows)
        sub = pd.Series([predicted[k] for k in np.argsort(sub_rows)], dtype="str")
        ans = pd.Series([truth[k] for k in np.argsort(ans_rows)], dtype="str")
        fast = arrow_kendall_tau(sub, ans, np.argsort(np.argsort(sub_rows)), np.argsort(np.argsort(ans_rows)))
        try:
            slow = kendall_tau_of_orders(
                predicted, truth, column="cell_order", submission_rows=np.arange(n_rows), ids=None
            )
        except Exception:  # refused: the Arrow path must have declined
            assert fast is None
            seen["declined"] += 1
            continue
        seen["fast" if fast is not None else "declined"] += 1
        assert fast is None or fast == slow
    assert seen["fast"] > 30 and seen["declined"] > 30


def test_ai4code_rejects_bad_submissions_with_the_row_and_cell():
    answers = roundtrip(pd.DataFrame({"id": ["nb1", "nb2", "nb3"], "cell_order": ["a b c", "d e", "f g"]}))
    good = answers.copy()
    check = _unchanged(good)
    reject(AI4CODE, good.drop(columns=["cell_order"]), answers, "missing cell_order")
    reject(AI4CODE, good.iloc[:2], answers, "expected 3 rows", "1 fewer")
    renamed = good.assign(id=["nb1", "nb2", "nb9"])
    reject(AI4CODE, renamed, answers, "do not match", "'nb3'", "'nb9'")
    short = good.assign(cell_order=["a b c", "d", "f g"])
    reject(AI4CODE, short, answers, "wrong number of cell ids", "row 2 (id 'nb2') lists 1 id for 2 cells")
    long = good.assign(cell_order=["a b c a", "d e", "f g"])
    reject(AI4CODE, long, answers, "row 1 (id 'nb1') lists more than 3 ids for 3 cells")
    huge = good.assign(cell_order=["a b c", "d e", "f g" + " x" * 200_000])
    reject(AI4CODE, huge, answers, "row 3 (id 'nb3') lists more than 2 ids for 2 cells")
    foreign = good.assign(cell_order=["a b c", "d e", "f x"])
    reject(AI4CODE, foreign, answers, "not a cell", "'x' in row 3 (id 'nb3')")
    stolen = good.assign(cell_order=["a b c", "d e", "f d"])  # a cell of another notebook
    reject(AI4CODE, stolen, answers, "'d' in row 3")
    empty = roundtrip(good.assign(cell_order=["a b c", None, "f g"]))  # read as 'nan': one id for two cells
    reject(AI4CODE, empty, answers, "row 2 (id 'nb2') lists 1 id for 2 cells")
    check()


def test_ai4code_is_undefined_when_no_notebook_has_two_cells():
    answers = roundtrip(pd.DataFrame({"id": ["nb1"], "cell_order": ["a"]}))
    reject(AI4CODE, answers.copy(), answers, "undefined")


# ---------------------------------------------------------------------------------------------------
# google-quest-challenge: mean column-wise Spearman, rows paired by sorted qa_id without an id check


def _average_ranks(values: list[float]) -> list[float]:
    ordered = sorted(values)
    return [sum(i + 1 for i, v in enumerate(ordered) if v == x) / sum(1 for v in ordered if v == x) for x in values]


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def _quest(rng: np.random.Generator, rows: int = 9) -> tuple[pd.DataFrame, pd.DataFrame]:
    levels = np.array([0.0, 0.333333, 0.5, 0.666667, 1.0])
    truth = levels[rng.integers(0, 5, size=(rows, 30))]
    truth[0, :], truth[1, :] = 0.0, 1.0  # no constant column
    predicted = np.round(np.clip(truth + rng.normal(0, 0.3, size=truth.shape), 0, 1), 2)
    predicted[:, 3] = np.round(rng.random(rows), 1)  # ties in a prediction column too
    ids = rng.choice(np.arange(10, 9000), size=rows, replace=False)
    answers = pd.DataFrame(truth, columns=QUEST_TARGETS)
    answers.insert(0, "qa_id", ids)
    submission = pd.DataFrame(predicted, columns=QUEST_TARGETS)
    submission.insert(0, "qa_id", ids)
    return roundtrip(answers), roundtrip(submission)


def test_quest_scores_a_perfect_submission_one():
    answers, _ = _quest(np.random.default_rng(3))
    assert round(grade(QUEST, answers.copy(), answers), 5) == 1.0


def test_quest_averages_spearman_with_tied_ranks_over_the_30_columns():
    answers, submission = _quest(np.random.default_rng(4))
    expected = sum(
        _pearson(_average_ranks(list(answers[c])), _average_ranks(list(submission[c]))) for c in QUEST_TARGETS
    ) / len(QUEST_TARGETS)
    assert grade(QUEST, submission, answers) == pytest.approx(expected, abs=1e-12)
    check = _unchanged(submission)
    reordered = roundtrip(submission.iloc[::-1])
    assert grade(QUEST, reordered, answers) == pytest.approx(expected, abs=1e-12)
    check()


def test_quest_pairs_rows_by_sorted_qa_id_without_checking_the_ids():
    answers, submission = _quest(np.random.default_rng(5))
    expected = grade(QUEST, submission, answers)
    shifted = submission.assign(qa_id=submission["qa_id"] + 100_000)  # same sorted order, all ids wrong
    assert grade(QUEST, shifted, answers) == pytest.approx(expected, abs=1e-15)
    # Ids that sort the other way round: the k-th smallest submitted id is scored against the k-th smallest
    # answer id, so each row's predictions land on the answer row of opposite rank.
    ids = submission["qa_id"].to_numpy()
    mirrored = submission.assign(qa_id=100_000 - ids)
    order = np.argsort(ids)
    source = np.empty(len(ids), dtype=int)
    source[order] = order[::-1]
    landed = submission.copy()
    landed[QUEST_TARGETS] = submission[QUEST_TARGETS].to_numpy()[source]
    assert grade(QUEST, mirrored, answers) == pytest.approx(grade(QUEST, landed, answers), abs=1e-15)
    assert grade(QUEST, mirrored, answers) != pytest.approx(expected)


def test_quest_gives_nan_for_a_constant_column_or_an_empty_cell():
    answers, submission = _quest(np.random.default_rng(6))
    assert math.isnan(grade(QUEST, submission.assign(question_type_spelling=0.0), answers))
    with_gap = submission.copy()
    with_gap.loc[2, "answer_helpful"] = np.nan
    assert math.isnan(grade(QUEST, with_gap, answers))


def test_quest_requires_exactly_the_31_columns_and_the_row_count():
    answers, submission = _quest(np.random.default_rng(7))
    reject(QUEST, submission.assign(extra=1), answers, "remove the extra column extra")
    reject(QUEST, submission.drop(columns=["answer_well_written"]), answers, "missing answer_well_written")
    reject(QUEST, submission.iloc[1:], answers, "1 fewer")
    text = submission.assign(answer_helpful=["high"] * len(submission))
    reject(QUEST, text, answers, "answer_helpful", "non-numeric")


# ---------------------------------------------------------------------------------------------------
# nfl-player-contact-detection: Matthews correlation coefficient


def _contacts(truth, predicted) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"58168_003392_{k}_38590_{'G' if k % 3 == 0 else 43854 + k}" for k in range(len(truth))]
    answers = pd.DataFrame({"contact_id": ids, "game_play": "58168_003392", "step": range(len(truth))})
    answers["contact"] = truth
    return roundtrip(answers), roundtrip(pd.DataFrame({"contact_id": ids, "contact": predicted}))


def _binary_mcc(truth, predicted) -> float:
    tp = sum(1 for t, p in zip(truth, predicted) if t == 1 and p == 1)
    tn = sum(1 for t, p in zip(truth, predicted) if t == 0 and p == 0)
    fp = sum(1 for t, p in zip(truth, predicted) if t == 0 and p == 1)
    fn = sum(1 for t, p in zip(truth, predicted) if t == 1 and p == 0)
    return (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))


def test_nfl_scores_matthews_correlation_by_contact_id():
    truth = [0, 0, 1, 0, 1, 1, 0, 0, 0, 1]
    predicted = [0, 1, 1, 0, 0, 1, 0, 0, 1, 1]
    answers, submission = _contacts(truth, predicted)
    assert grade(NFL, answers[["contact_id", "contact"]], answers) == 1.0
    expected = _binary_mcc(truth, predicted)
    assert expected == pytest.approx((3 * 4 - 2 * 1) / math.sqrt(5 * 4 * 6 * 5))  # tp 3, tn 4, fp 2, fn 1
    assert grade(NFL, submission, answers) == pytest.approx(expected, abs=1e-15)
    assert grade(NFL, roundtrip(submission.iloc[::-1]), answers) == pytest.approx(expected, abs=1e-15)


def test_nfl_scores_a_constant_prediction_zero_and_accepts_whole_floats():
    truth = [0, 0, 1, 0, 1, 1, 0, 0, 0, 1]
    answers, _ = _contacts(truth, truth)
    _, zeros = _contacts(truth, [0] * 10)
    assert grade(NFL, zeros, answers) == 0.0
    _, floats = _contacts(truth, [float(v) for v in truth])
    assert floats["contact"].dtype == np.float64
    assert grade(NFL, floats, answers) == 1.0


def test_matthews_corrcoef_matches_scikit_learn_for_other_labels():
    rng = np.random.default_rng(8)
    truth = rng.integers(0, 2, 200)
    for predicted in (rng.integers(0, 3, 200), rng.integers(0, 2, 200), np.zeros(200, dtype=int)):
        assert matthews_corrcoef(truth, predicted) == pytest.approx(sklearn_mcc(truth, predicted), abs=1e-12)


def test_nfl_rejects_probabilities_empty_cells_and_wrong_ids():
    truth = [0, 0, 1, 0, 1, 1, 0, 0, 0, 1]
    answers, submission = _contacts(truth, truth)
    check = _unchanged(submission)
    probabilities = submission.assign(contact=[0.1, 0.2, 0.9, 0.0, 0.7, 0.8, 0.1, 0.0, 0.3, 0.6])
    reject(NFL, probabilities, answers, "class labels", "0.1")
    gap = submission.astype({"contact": float})
    gap.loc[4, "contact"] = np.nan
    reject(NFL, gap, answers, "empty or not finite", "row 5")
    wrong = submission.copy()
    wrong.loc[0, "contact_id"] = "58168_003392_0_38590_99999"
    reject(NFL, wrong, answers, "do not match", "58168_003392_0_38590_99999")
    reject(NFL, submission.iloc[:-1], answers, "1 fewer")
    reject(NFL, submission.rename(columns={"contact": "label"}), answers, "missing contact")
    check()


# ---------------------------------------------------------------------------------------------------
# us-patent-phrase-to-phrase-matching: Pearson correlation


def _patent(predicted) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = ["37d61fd2272659b1", "7b9652b17b68b7a4", "36d72442aefd8232", "5296b0c19e1ce60e", "54c1e3b9184cb5b6"]
    answers = pd.DataFrame(
        {
            "id": ids,
            "anchor": ["abatement"] * 5,
            "target": [
                "abatement of pollution",
                "act of abating",
                "active catalyst",
                "eliminating",
                "forest",
            ],
            "context": ["A47"] * 5,
            "score": [0.5, 0.75, 0.25, 0.5, 0.0],
        }
    )
    return roundtrip(answers), roundtrip(pd.DataFrame({"id": ids, "score": predicted}))


def test_patent_scores_pearson_correlation_by_id():
    answers, perfect = _patent([0.5, 0.75, 0.25, 0.5, 0.0])
    assert grade(PATENT, perfect, answers) == pytest.approx(1.0)
    predicted = [0.4, 0.9, 0.3, 0.3, 0.1]
    _, submission = _patent(predicted)
    expected = _pearson([0.5, 0.75, 0.25, 0.5, 0.0], predicted)
    assert grade(PATENT, submission, answers) == pytest.approx(expected, abs=1e-12)
    assert grade(PATENT, roundtrip(submission.iloc[[3, 0, 4, 1, 2]]), answers) == pytest.approx(expected, abs=1e-12)


def test_patent_gives_nan_for_constant_predictions():
    answers, constant = _patent([0.5] * 5)
    assert math.isnan(grade(PATENT, constant, answers))


def test_patent_refuses_empty_cells_and_infinities_as_scipy_1_13_does():
    # SciPy 1.13's pearsonr takes scipy.linalg.norm of the centred values, which raises ValueError on NaN
    # or an infinity; SciPy 1.18 returns NaN instead, so the installed one cannot be the reference here.
    answers, gap = _patent([0.4, None, 0.3, None, 0.1])
    check = _unchanged(gap)
    reject(PATENT, gap, answers, "'score'", "2 missing values", "row 2 (id '7b9652b17b68b7a4')", "row 4")
    _, text_nan = _patent(["0.4", "nan", "0.3", "0.3", "0.1"])
    reject(PATENT, text_nan, answers, "1 missing value", "row 2")
    _, infinite = _patent([0.4, 0.9, float("inf"), 0.3, 0.1])
    reject(PATENT, infinite, answers, "1 infinite value", "row 3 (id '36d72442aefd8232') has inf")
    _, huge = _patent([0.4, 1e308, 1e308, 0.3, 0.1])  # finite, but their mean overflows
    reject(PATENT, huge, answers, "too large to average", "row 2")
    check()


def test_patent_rejects_wrong_ids_and_text_scores():
    answers, submission = _patent([0.4, 0.9, 0.3, 0.3, 0.1])
    check = _unchanged(submission)
    repeated = submission.copy()
    repeated.loc[1, "id"] = repeated.loc[0, "id"]
    reject(PATENT, repeated, answers, "do not match", "'7b9652b17b68b7a4'", "more often")
    reject(PATENT, submission.iloc[:4], answers, "1 fewer")
    reject(PATENT, submission.assign(score=["high", "low", "low", "low", "low"]), answers, "non-numeric")
    reject(PATENT, submission.drop(columns=["id"]), answers, "missing id")
    check()


# ---------------------------------------------------------------------------------------------------
# osic-pulmonary-fibrosis-progression: modified Laplace log likelihood over each patient's last 3 weeks

_BEST = -math.log(70 * math.sqrt(2))


def _osic() -> pd.DataFrame:
    """Two patients over weeks -2..6: P1 measured at -1, 0, 2, 4, 5; P2 only at 1 and 3."""
    rows = []
    measured = {"ID00007637202177411956430": {-1: 2315, 0: 2214, 2: 2061, 4: 2144, 5: 2069}}
    measured["ID00009637202177434476278"] = {1: 3660, 3: 3610}
    for patient, fvc in measured.items():
        for week in range(-2, 7):
            value = fvc.get(week)
            rows.append(
                {
                    "Patient": patient,
                    "Weeks": week,
                    "FVC": value,
                    "Percent": None if value is None else value / 40.0,
                    "Age": 79,
                    "Sex": "Male",
                    "SmokingStatus": "Ex-smoker",
                    "Patient_Week": f"{patient}_{week}",
                    "Confidence": 100,
                }
            )
    return roundtrip(pd.DataFrame(rows))


def _osic_submission(answers: pd.DataFrame, **changes) -> pd.DataFrame:
    """Exact FVC everywhere it is known (2000 elsewhere) with Confidence 70; ``changes`` by Patient_Week."""
    fvc = answers["FVC"].fillna(2000.0).to_numpy().copy()
    confidence = np.full(len(answers), 70.0)
    for week_id, (value, sigma) in changes.items():
        row = int(np.flatnonzero(answers["Patient_Week"].to_numpy() == week_id)[0])
        fvc[row], confidence[row] = value, sigma
    return pd.DataFrame({"Patient_Week": answers["Patient_Week"], "FVC": fvc, "Confidence": confidence})


P1, P2 = "ID00007637202177411956430", "ID00009637202177434476278"


def test_osic_scores_the_best_value_for_exact_predictions_at_confidence_70():
    answers = _osic()
    assert grade(OSIC, roundtrip(_osic_submission(answers)), answers) == pytest.approx(_BEST, abs=1e-12)


def test_osic_scores_only_each_patients_last_three_measured_weeks():
    answers = _osic()
    # P1's scored weeks are 2, 4, 5; week 0 is measured but earlier; P2 has only two measured weeks
    unscored = {f"{P1}_0": (900.0, 5000.0), f"{P1}_6": (10.0, 1.0), f"{P2}_-2": (0.0, 0.0)}
    assert grade(OSIC, roundtrip(_osic_submission(answers, **unscored)), answers) == pytest.approx(_BEST)
    scored = {f"{P1}_2": (2061.0 + 100, 200.0), f"{P2}_1": (3660.0 - 3000, 50.0)}
    per_row = [
        -math.sqrt(2) * 100 / 200 - math.log(math.sqrt(2) * 200),  # error 100, sigma 200
        -math.sqrt(2) * 1000 / 70 - math.log(math.sqrt(2) * 70),  # error capped at 1000, sigma raised to 70
    ]
    expected = (sum(per_row) + 3 * _BEST) / 5
    assert grade(OSIC, roundtrip(_osic_submission(answers, **scored)), answers) == pytest.approx(expected, abs=1e-12)


def test_osic_counts_an_empty_confidence_as_70_and_an_empty_fvc_as_nan():
    answers = _osic()
    submission = _osic_submission(answers)
    submission.loc[submission["Patient_Week"] == f"{P1}_5", "Confidence"] = np.nan
    assert grade(OSIC, roundtrip(submission), answers) == pytest.approx(_BEST)
    submission.loc[submission["Patient_Week"] == f"{P2}_3", "FVC"] = np.nan
    assert math.isnan(grade(OSIC, roundtrip(submission), answers))


def test_osic_accepts_only_the_scored_rows_and_repeated_unscored_rows():
    answers = _osic()
    full = roundtrip(_osic_submission(answers))
    scored = [f"{P1}_2", f"{P1}_4", f"{P1}_5", f"{P2}_1", f"{P2}_3"]
    only_scored = full[full["Patient_Week"].isin(scored)].iloc[::-1]
    assert grade(OSIC, roundtrip(only_scored), answers) == pytest.approx(_BEST)
    doubled = pd.concat([full, full[full["Patient_Week"] == f"{P1}_-2"]])
    assert grade(OSIC, roundtrip(doubled), answers) == pytest.approx(_BEST)


def test_osic_rejects_missing_or_repeated_scored_weeks_unknown_ids_and_text():
    answers = _osic()
    full = roundtrip(_osic_submission(answers))
    check = _unchanged(full)
    reject(
        OSIC,
        full[full["Patient_Week"] != f"{P1}_4"],
        answers,
        "1 scored week is missing",
        f"'{P1}_4'",
        "last 3",
    )
    repeated = pd.concat([full, full[full["Patient_Week"] == f"{P2}_1"]])
    reject(OSIC, roundtrip(repeated), answers, "more than once", f"'{P2}_1' 2 times")
    unknown = full.copy()
    unknown.loc[0, "Patient_Week"] = f"{P1}_99"
    reject(OSIC, unknown, answers, "not in the test set", f"'{P1}_99' in row 1")
    reject(OSIC, full.assign(Confidence="high"), answers, "Confidence", "non-numeric")
    reject(OSIC, full.drop(columns=["Confidence"]), answers, "missing Confidence")
    check()


def test_osic_grades_a_subset_of_the_answers():
    answers = _osic()
    subset = answers[answers["Weeks"] != 5].reset_index(drop=True)  # P1's scored weeks become 0, 2, 4
    submission = _osic_submission(subset, **{f"{P1}_0": (2214.0 + 50, 100.0)})
    expected = (4 * _BEST - math.sqrt(2) * 50 / 100 - math.log(math.sqrt(2) * 100)) / 5
    assert grade(OSIC, roundtrip(submission), subset) == pytest.approx(expected, abs=1e-12)


def test_osic_pairs_scored_rows_by_sorted_position_when_a_repeat_hides_a_missing_week():
    # As in the reference, only the counts are compared: P1's week 2 twice and week 4 not at all pairs
    # the second week-2 row (FVC 2061) with week 4's answer (2144).
    answers = _osic()
    full = roundtrip(_osic_submission(answers))
    swapped = pd.concat([full[full["Patient_Week"] != f"{P1}_4"], full[full["Patient_Week"] == f"{P1}_2"]])
    expected = (4 * _BEST - math.sqrt(2) * 83 / 70 - math.log(math.sqrt(2) * 70)) / 5
    assert grade(OSIC, roundtrip(swapped), answers) == pytest.approx(expected, abs=1e-12)
