"""Regression graders of the split75 group: champs (grouped log MAE), icecube (mean angular error),
petfinder (RMSE within [1, 100]), volcanic eruptions (integer MAE), smartphone-decimeter (trip percentiles
of haversine errors), OpenVaccine (MCRMSE on scored positions) and ventilator (MAE on u_out == 0)."""

import math

import numpy as np
import pandas as pd
import pytest

from grading.engine.graders.regression.geo import grouped_quantiles

from .frames import grade, reject, roundtrip

CHAMPS = "champs-scalar-coupling"
ICECUBE = "icecube-neutrinos-in-deep-ice"
PETFINDER = "petfinder-pawpularity-score"
VOLCANO = "predict-volcanic-eruptions-ingv-oe"
SMARTPHONE = "smartphone-decimeter-2022"
COVID = "stanford-covid-vaccine"
VENTILATOR = "ventilator-pressure-prediction"


def unchanged(frame: pd.DataFrame):
    """A check that a frame was not modified by grading."""
    before = frame.copy(deep=True)
    return lambda: pd.testing.assert_frame_equal(frame, before)


# ---------------------------------------------------------------------------------------------------
# champs-scalar-coupling


def _champs_answers() -> pd.DataFrame:
    return roundtrip(
        pd.DataFrame(
            {
                "id": [10, 11, 12, 13, 14, 15],
                "molecule_name": ["dsgdb9nsd_000001"] * 3 + ["dsgdb9nsd_000007"] * 3,
                "atom_index_0": [1, 1, 2, 3, 4, 5],
                "atom_index_1": [0, 2, 0, 1, 0, 1],
                "type": ["1JHC", "2JHH", "1JHC", "3JHC", "2JHH", "1JHC"],
                "scalar_coupling_constant": [84.8076, -11.257, 84.8074, 3.5, -11.2548, 95.0],
            }
        )
    )


def _champs_reference(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    """Inner merge by hand, then the mean over types of log(max(MAE, 1e-9))."""
    errors: dict[str, list[float]] = {}
    for _, row in submission.iterrows():
        match = answers[answers["id"] == row["id"]].iloc[0]
        errors.setdefault(match["type"], []).append(abs(float(row["scalar_coupling_constant"]) - match.iloc[5]))
    logs = [math.log(max(sum(e) / len(e), 1e-9)) for e in errors.values()]
    return sum(logs) / len(logs)


def test_champs_averages_log_mae_over_coupling_types():
    answers = _champs_answers()
    submission = roundtrip(
        pd.DataFrame({"id": [15, 10, 11, 12, 13, 14], "scalar_coupling_constant": [90.0, 84.0, -10, 85, 3, -12]})
    )
    check = unchanged(submission)
    # 1JHC: |84-84.8076|, |85-84.8074|, |90-95| -> 6.0002/3; 2JHH: 1.257, 0.7452; 3JHC: 0.5
    by_hand = (math.log(6.0002 / 3) + math.log((1.257 + 0.7452) / 2) + math.log(0.5)) / 3
    assert grade(CHAMPS, submission, answers) == pytest.approx(by_hand, rel=1e-12)
    assert grade(CHAMPS, submission, answers) == pytest.approx(_champs_reference(answers, submission), rel=1e-12)
    check()


def test_champs_floors_a_perfect_type_at_1e_9_as_on_kaggle():
    answers = _champs_answers()
    perfect = roundtrip(answers[["id", "scalar_coupling_constant"]])
    assert grade(CHAMPS, perfect, answers) == pytest.approx(math.log(1e-9), rel=1e-15)
    one_off = perfect.copy()
    one_off.loc[3, "scalar_coupling_constant"] = 4.5  # the only 3JHC row, error 1 -> log 1 = 0
    assert grade(CHAMPS, one_off, answers) == pytest.approx(2 * math.log(1e-9) / 3, rel=1e-12)


def test_champs_scores_a_repeated_id_once_per_row_like_the_inner_merge():
    answers = _champs_answers()
    submission = roundtrip(
        pd.DataFrame(
            {
                "id": [10, 11, 12, 13, 14, 15, 10],
                "scalar_coupling_constant": [84.0, -10, 85, 3, -12, 90.0, 80.0],
            }
        )
    )
    expected = _champs_reference(answers, submission)
    assert grade(CHAMPS, submission, answers) == pytest.approx(expected, rel=1e-12)
    without = submission.iloc[:-1]
    assert grade(CHAMPS, without, answers) != pytest.approx(expected)


def test_champs_requires_the_set_of_ids_and_finite_numbers():
    answers = _champs_answers()
    submission = roundtrip(answers[["id", "scalar_coupling_constant"]])
    reject(CHAMPS, submission.iloc[1:], answers, "1 test id is missing (e.g. 10)")
    unknown = submission.copy()
    unknown.loc[2, "id"] = 99
    reject(CHAMPS, unknown, answers, "(e.g. 12)", "99 in row 3", "not in the test set")
    reject(CHAMPS, submission.rename(columns={"id": "Id"}), answers, "missing id", "'Id' looks like 'id'")
    nan = submission.copy()
    nan.loc[1, "scalar_coupling_constant"] = np.nan
    reject(CHAMPS, nan, answers, "'scalar_coupling_constant'", "missing value", "row 2 (id 11)")
    text = submission.astype({"scalar_coupling_constant": object})
    text.loc[0, "scalar_coupling_constant"] = " 84.8076 "  # Python's float() reads it, as scikit-learn does
    assert grade(CHAMPS, roundtrip(text), answers) == pytest.approx(math.log(1e-9))
    text.loc[0, "scalar_coupling_constant"] = "unknown"
    reject(CHAMPS, roundtrip(text), answers, "not a number", "'unknown' in row 1")


# ---------------------------------------------------------------------------------------------------
# icecube-neutrinos-in-deep-ice


def _icecube_answers() -> pd.DataFrame:
    return roundtrip(
        pd.DataFrame(
            {
                "event_id": [2092, 7344, 9482, 10400],
                "azimuth": [0.0, 1.0, 4.2, 5.5],
                "zenith": [math.pi / 2, 0.0, 1.3, 2.9],
            }
        )
    )


def _angle(az1, zen1, az2, zen2) -> float:
    one = (math.sin(zen1) * math.cos(az1), math.sin(zen1) * math.sin(az1), math.cos(zen1))
    two = (math.sin(zen2) * math.cos(az2), math.sin(zen2) * math.sin(az2), math.cos(zen2))
    return math.acos(max(-1.0, min(1.0, sum(a * b for a, b in zip(one, two)))))


def test_icecube_scores_the_mean_angle_between_directions():
    answers = _icecube_answers()
    submission = roundtrip(
        pd.DataFrame(
            {
                "event_id": [10400, 2092, 7344, 9482],
                "azimuth": [5.5, math.pi / 2, 3.0, 4.2 + 2 * math.pi],  # x axis -> y axis: 90 degrees
                "zenith": [2.9, math.pi / 2, math.pi, 1.3],  # straight up -> straight down: 180 degrees
            }
        )
    )
    check = unchanged(submission)
    assert grade(ICECUBE, submission, answers) == pytest.approx((math.pi / 2 + math.pi) / 4, abs=1e-7)
    rows = [(r.azimuth, r.zenith) for r in answers.itertuples()]
    sub = submission.set_index("event_id")
    by_loop = sum(
        _angle(az, zen, sub.loc[e, "azimuth"], sub.loc[e, "zenith"]) for e, (az, zen) in zip(answers["event_id"], rows)
    ) / len(rows)
    assert grade(ICECUBE, submission, answers) == pytest.approx(by_loop, rel=1e-9)
    assert grade(ICECUBE, answers.copy(), answers) == 0.0  # the clip keeps arccos(1 + eps) away from NaN
    check()


def test_icecube_requires_exactly_its_columns_rows_and_ids():
    answers = _icecube_answers()
    reject(ICECUBE, answers.assign(energy=1.0), answers, "exactly the columns", "extra column energy")
    reject(ICECUBE, answers.drop(columns=["zenith"]), answers, "missing zenith")
    reject(ICECUBE, answers.iloc[:3], answers, "expected 4 rows", "got 3")
    renamed = answers.copy()
    renamed.loc[1, "event_id"] = 7345
    reject(ICECUBE, renamed, answers, "7344", "7345 in row 2")


def test_icecube_requires_finite_numeric_angles():
    answers = _icecube_answers()
    for bad, fragment in ((np.nan, "missing value"), (np.inf, "infinite")):
        submission = answers.copy()
        submission.loc[2, "zenith"] = bad
        reject(ICECUBE, submission, answers, "'zenith'", fragment, "row 3 (id 9482)")
    text = answers.astype({"azimuth": object})
    text.loc[0, "azimuth"] = "north"
    reject(ICECUBE, roundtrip(text), answers, "'azimuth'", "non-numeric", "'north' in row 1")


def test_icecube_grades_a_large_shuffled_file_in_chunks():
    rng = np.random.default_rng(5)
    n = 2_500_000  # more than two chunks
    answers = pd.DataFrame(
        {"event_id": np.arange(n) * 3 + 7, "azimuth": rng.random(n) * 6.28, "zenith": rng.random(n) * 3.14}
    )
    order = rng.permutation(n)
    submission = pd.DataFrame(
        {
            "event_id": answers["event_id"].to_numpy()[order],
            "azimuth": answers["azimuth"].to_numpy()[order] + 0.01,
            "zenith": answers["zenith"].to_numpy()[order],
        }
    )
    sa1, ca1 = np.sin(answers["azimuth"]), np.cos(answers["azimuth"])
    sz1, cz1 = np.sin(answers["zenith"]), np.cos(answers["zenith"])
    sa2, ca2 = np.sin(answers["azimuth"] + 0.01), np.cos(answers["azimuth"] + 0.01)
    dot = sz1 * sz1 * (ca1 * ca2 + sa1 * sa2) + cz1 * cz1
    expected = float(np.mean(np.arccos(np.clip(dot, -1, 1))))
    assert grade(ICECUBE, submission, answers) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# petfinder-pawpularity-score


def _petfinder_answers() -> pd.DataFrame:
    frame = pd.DataFrame({"Id": ["4128bae22183829d2b5fea10effdb0c3", "43a2262d7738e3d420d453815151079e"]})
    frame["Eyes"] = [1, 0]
    frame["Blur"] = [0, 1]
    frame["Pawpularity"] = [63, 28]
    more = pd.DataFrame({"Id": ["4e429cead1848a298432a0acad014c9d", "80bc3ccafcc51b66303c2c263aa38486"]})
    more["Eyes"], more["Blur"], more["Pawpularity"] = [1, 1], [0, 0], [100, 1]
    return roundtrip(pd.concat([frame, more], ignore_index=True))


def test_petfinder_scores_rmse_and_accepts_the_range_ends():
    answers = _petfinder_answers()
    submission = roundtrip(answers[["Id", "Pawpularity"]].assign(Pawpularity=[60.5, 30.0, 100.0, 1.0]))
    check = unchanged(submission)
    by_hand = math.sqrt((2.5**2 + 2.0**2 + 0 + 0) / 4)
    assert grade(PETFINDER, submission, answers) == pytest.approx(by_hand, rel=1e-12)
    assert grade(PETFINDER, roundtrip(answers[["Id", "Pawpularity"]]), answers) == 0.0
    shuffled = submission.iloc[[2, 0, 3, 1]]
    assert grade(PETFINDER, shuffled, answers) == pytest.approx(by_hand, rel=1e-12)
    check()


def test_petfinder_requires_predictions_within_1_and_100():
    answers = _petfinder_answers()
    submission = roundtrip(answers[["Id", "Pawpularity"]].assign(Pawpularity=[60.5, 30.0, 100.0, 1.0]))
    for bad in (0.99, 100.5, -3.0):
        outside = submission.copy()
        outside.loc[1, "Pawpularity"] = bad
        reject(
            PETFINDER,
            outside,
            answers,
            "outside [1, 100]",
            f"row 2 (id '43a2262d7738e3d420d453815151079e') has {bad!r}",
        )
    empty = submission.copy()
    empty.loc[3, "Pawpularity"] = np.nan
    reject(PETFINDER, empty, answers, "missing value", "row 4", "within [1, 100]")
    text = submission.astype({"Pawpularity": object})
    text.loc[0, "Pawpularity"] = "60"
    text.loc[1, "Pawpularity"] = "high"
    reject(PETFINDER, roundtrip(text), answers, "'Pawpularity'", "non-numeric", "'high' in row 2")
    reject(PETFINDER, submission.iloc[:3], answers, "expected 4 rows")
    repeated = submission.copy()
    repeated.loc[0, "Id"] = repeated.loc[1, "Id"]
    reject(PETFINDER, repeated, answers, "4128bae22183829d2b5fea10effdb0c3", "2 times")


# ---------------------------------------------------------------------------------------------------
# predict-volcanic-eruptions-ingv-oe


def _volcano_answers() -> pd.DataFrame:
    return roundtrip(
        pd.DataFrame(
            {
                "segment_id": [1136037770, 1969647810, 1895879680, 2029617710],
                "time_to_eruption": [22_295_065, 20_648_105, 8_123_006, 31_110_000],
            }
        )
    )


@pytest.mark.parametrize(("errors", "expected"), [((2, 3, 3, 2), 2.0), ((3, 4, 3, 4), 4.0), ((1, 1, 1, 2), 1.0)])
def test_volcano_rounds_the_mae_to_an_integer_half_to_even(errors, expected):
    # MAE 2.5 -> 2, 3.5 -> 4 (round half to even, like Python's and NumPy's round), 1.25 -> 1
    answers = _volcano_answers()
    submission = answers.assign(time_to_eruption=answers["time_to_eruption"] + np.array(errors))
    assert grade(VOLCANO, roundtrip(submission), answers) == expected


def test_volcano_scores_a_repeated_id_once_per_row_and_needs_every_id():
    answers = _volcano_answers()
    submission = roundtrip(
        pd.DataFrame(
            {
                "segment_id": [1136037770, 1969647810, 1895879680, 2029617710, 2029617710],
                "time_to_eruption": [22_295_065, 20_648_105, 8_123_006, 31_110_000 + 100, 31_110_000 + 300],
            }
        )
    )
    assert grade(VOLCANO, submission, answers) == 80.0  # (0 + 0 + 0 + 100 + 300) / 5 rows
    reject(VOLCANO, submission.iloc[1:], answers, "1 test id is missing (e.g. 1136037770)")
    nan = submission.copy()
    nan.loc[0, "time_to_eruption"] = np.nan
    reject(VOLCANO, nan, answers, "missing value", "row 1 (id 1136037770)")


# ---------------------------------------------------------------------------------------------------
# smartphone-decimeter-2022

TRIP_A, TRIP_B = "2021-04-28-US-MTV-2/GooglePixel5", "2021-09-20-US-LAX-1/SamsungGalaxyS20Ultra"


def _smartphone_answers() -> pd.DataFrame:
    lat = [37.0, 37.0001, 37.0002, 37.0003, 34.0, 34.0001, 34.0002]
    lon = [-122.0, -122.0, -122.0001, -122.0002, -118.0, -118.0, -118.0]
    trips = [TRIP_A] * 4 + [TRIP_B] * 3
    times = [1619640000000 + 1000 * i for i in range(4)] + [1632150000000 + 1000 * i for i in range(3)]
    return roundtrip(
        pd.DataFrame({"tripId": trips, "UnixTimeMillis": times, "LatitudeDegrees": lat, "LongitudeDegrees": lon})
    )


def _haversine(lat1, lon1, lat2, lon2) -> float:
    # radians first, then differences: the order of Kaggle's formula (it matters at the 1e-10 level)
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    dp, dl = p2 - p1, l2 - l1
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(a))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _smartphone_reference(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    scores = []
    for trip in sorted(set(answers["tripId"])):
        truth = answers[answers["tripId"] == trip]
        mine = submission[submission["tripId"] == trip]
        d = [
            _haversine(t.LatitudeDegrees, t.LongitudeDegrees, m.LatitudeDegrees, m.LongitudeDegrees)
            for t, m in zip(truth.itertuples(), mine.itertuples())
        ]
        scores.append((_percentile(d, 0.5) + _percentile(d, 0.95)) / 2)
    return sum(scores) / len(scores)


def _smartphone_submission(answers: pd.DataFrame) -> pd.DataFrame:
    return roundtrip(
        answers.assign(
            LatitudeDegrees=answers["LatitudeDegrees"] + [0.0, 1e-5, -2e-5, 4e-5, 3e-5, 0.0, -1e-5],
            LongitudeDegrees=answers["LongitudeDegrees"] + [2e-5, 0.0, 1e-5, 0.0, 0.0, 5e-5, 0.0],
        )
    )


def test_smartphone_averages_p50_and_p95_of_each_trip():
    answers = _smartphone_answers()
    submission = _smartphone_submission(answers)
    check = unchanged(submission)
    expected = _smartphone_reference(answers, submission)
    assert grade(SMARTPHONE, submission, answers) == pytest.approx(expected, rel=1e-12)
    assert grade(SMARTPHONE, roundtrip(answers), answers) == 0.0
    # trips may come in any order, rows within a trip are matched by position
    trips_swapped = submission.iloc[[4, 5, 6, 0, 1, 2, 3]]
    assert grade(SMARTPHONE, trips_swapped, answers) == pytest.approx(expected, rel=1e-12)
    within_swapped = submission.iloc[[1, 0, 2, 3, 4, 5, 6]]
    assert grade(SMARTPHONE, within_swapped, answers) == pytest.approx(
        _smartphone_reference(answers, within_swapped.reset_index(drop=True)), rel=1e-12
    )
    assert grade(SMARTPHONE, within_swapped, answers) != pytest.approx(expected)
    check()


def test_smartphone_needs_each_trips_row_count_but_not_matching_times():
    answers = _smartphone_answers()
    submission = _smartphone_submission(answers)
    other_times = submission.assign(UnixTimeMillis=0)
    assert grade(SMARTPHONE, other_times, answers) == grade(SMARTPHONE, submission, answers)
    reject(SMARTPHONE, submission.drop(columns=["UnixTimeMillis"]), answers, "missing UnixTimeMillis")
    reject(SMARTPHONE, submission.iloc[:6], answers, "expected 7 rows", "got 6")
    moved = submission.copy()
    moved.loc[3, "tripId"] = TRIP_B
    reject(SMARTPHONE, moved, answers, f"'{TRIP_A}' has 3, expected 4", f"'{TRIP_B}' has 4, expected 3")
    unknown = submission.copy()
    unknown.loc[0, "tripId"] = "2021-04-28-US-MTV-2/GooglePixel4"
    reject(SMARTPHONE, unknown, answers, "not in the test set", "'2021-04-28-US-MTV-2/GooglePixel4' in row 1")


def test_smartphone_scores_an_empty_coordinate_as_nan_like_the_reference():
    answers = _smartphone_answers()
    submission = _smartphone_submission(answers)
    submission.loc[5, "LongitudeDegrees"] = np.nan
    assert math.isnan(grade(SMARTPHONE, submission, answers))
    text = submission.astype({"LatitudeDegrees": object})
    text.loc[0, "LatitudeDegrees"] = "37.0 N"
    reject(SMARTPHONE, roundtrip(text), answers, "'LatitudeDegrees'", "'37.0 N' in row 1")


def test_grouped_quantiles_equal_numpys_linear_quantile():
    rng = np.random.default_rng(2)
    sizes = [1, 2, 3, 7, 20, 101]
    codes = np.repeat(np.arange(len(sizes)), sizes)
    values = rng.exponential(3.0, size=len(codes))
    shuffle = rng.permutation(len(codes))
    codes, values = codes[shuffle], values[shuffle]
    for q in (0.5, 0.95):
        got = grouped_quantiles(values, codes, len(sizes) + 1, q)
        expected = [np.quantile(values[codes == g], q) for g in range(len(sizes))]
        assert got[:-1].tolist() == expected  # bit for bit
        assert np.isnan(got[-1])  # an empty group


# ---------------------------------------------------------------------------------------------------
# stanford-covid-vaccine

COVID_TARGETS = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]
COVID_SCORED = ["reactivity", "deg_Mg_pH10", "deg_Mg_50C"]


def _covid_answers() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    ids = [f"id_{s}_{p}" for s in ("001f94081", "0a2d4f3e8") for p in range(4)]
    frame = pd.DataFrame({"id_seqpos": ids})
    for column in COVID_TARGETS:
        frame[column] = np.round(rng.gamma(1.3, 0.4, size=len(ids)), 4)
    frame["keep"] = [True, True, True, False] * 2
    return roundtrip(frame)


def test_covid_averages_the_rmse_of_the_scored_columns_on_kept_rows():
    answers = _covid_answers()
    submission = roundtrip(answers[["id_seqpos", *COVID_TARGETS]].assign(**{c: 0.5 for c in COVID_TARGETS}))
    check = unchanged(submission)
    kept = answers[answers["keep"]]
    by_loop = sum(math.sqrt(sum((v - 0.5) ** 2 for v in kept[c]) / len(kept)) for c in COVID_SCORED) / 3
    assert grade(COVID, submission, answers) == pytest.approx(by_loop, rel=1e-12)
    assert grade(COVID, roundtrip(answers[["id_seqpos", *COVID_TARGETS]]), answers) == 0.0
    shuffled = submission.iloc[::-1]
    assert grade(COVID, shuffled, answers) == pytest.approx(by_loop, rel=1e-12)
    check()


def test_covid_ignores_unscored_cells_but_requires_every_column():
    answers = _covid_answers()
    submission = roundtrip(answers[["id_seqpos", *COVID_TARGETS]])
    holes = submission.copy()
    holes.loc[3, "reactivity"] = np.nan  # keep False
    holes["deg_pH10"] = np.nan  # an unscored column
    assert grade(COVID, holes, answers) == 0.0
    reject(COVID, submission.drop(columns=["deg_50C"]), answers, "missing deg_50C")
    reject(COVID, submission.iloc[:7], answers, "expected 8 rows")
    holes.loc[2, "deg_Mg_50C"] = np.nan
    reject(COVID, holes, answers, "'deg_Mg_50C'", "missing value", "row 3 (id 'id_001f94081_2')")
    renamed = submission.copy()
    renamed.loc[0, "id_seqpos"] = "id_001f94081_00"
    reject(COVID, renamed, answers, "'id_001f94081_0'", "'id_001f94081_00' in row 1")


# ---------------------------------------------------------------------------------------------------
# ventilator-pressure-prediction


def _ventilator_answers() -> pd.DataFrame:
    return roundtrip(
        pd.DataFrame(
            {
                "id": [81, 82, 83, 84, 241, 242, 243, 244],
                "breath_id": [2] * 4 + [5] * 4,
                "R": [20] * 4 + [50] * 4,
                "C": [50] * 4 + [10] * 4,
                "time_step": [0.0, 0.0336, 0.0671, 0.1008] * 2,
                "u_in": [0.08, 18.38, 22.51, 22.8, 0.0, 5.1, 7.2, 1.0],
                "u_out": [0, 0, 1, 1, 0, 0, 0, 1],
                "pressure": [5.837492, 5.907794, 7.876254, 11.742872, 6.0, 9.1, 12.5, 7.0],
            }
        )
    )


def test_ventilator_scores_only_the_inspiratory_rows():
    answers = _ventilator_answers()
    predictions = [6.0, 6.0, np.nan, 99.0, 6.5, 9.0, 12.0, np.nan]  # u_out == 1 rows are not scored
    submission = roundtrip(pd.DataFrame({"id": answers["id"], "pressure": predictions}))
    check = unchanged(submission)
    scored = [(p, t) for p, t, u in zip(predictions, answers["pressure"], answers["u_out"]) if u == 0]
    by_loop = sum(abs(p - t) for p, t in scored) / len(scored)
    assert grade(VENTILATOR, submission, answers) == pytest.approx(by_loop, rel=1e-12)
    assert grade(VENTILATOR, submission.iloc[[7, 3, 1, 0, 2, 6, 5, 4]], answers) == pytest.approx(by_loop, rel=1e-12)
    check()


def test_ventilator_requires_every_id_once_and_numbers_where_scored():
    answers = _ventilator_answers()
    submission = roundtrip(answers[["id", "pressure"]])
    assert grade(VENTILATOR, submission, answers) == 0.0
    reject(VENTILATOR, submission.iloc[:-1], answers, "expected 8 rows")
    repeated = submission.copy()
    repeated.loc[1, "id"] = 81
    reject(VENTILATOR, repeated, answers, "82", "81 2 times")
    nan = submission.copy()
    nan.loc[5, "pressure"] = np.nan
    reject(VENTILATOR, nan, answers, "'pressure'", "missing value", "row 6 (id 242)")
    reject(VENTILATOR, submission.rename(columns={"pressure": "Pressure"}), answers, "missing pressure")
