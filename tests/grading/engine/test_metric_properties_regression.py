"""Regression error family against scikit-learn: RMSE, MAE, grouped log-MAE, MCRMSE, column-wise RMSLE.

The arithmetic follows scikit-learn 1.5 step by step (``grading/engine/graders/regression/``), so any finite
values, huge ones included (whose squares overflow to infinity in both), agree to 1e-9. What both refuse,
an empty cell or an infinity, makes the file invalid. One documented deviation (``regression/error.py``):
scikit-learn 1.5's RMSLE refused any negative value, which MLE-bench kept; later versions accept values
above -1, so a negative prediction is invalid here where current scikit-learn scores it.
"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import mean_absolute_error, root_mean_squared_error, root_mean_squared_log_error

from tests.grading.engine.metric_inputs import (
    PROPERTY,
    assert_close,
    assert_invalid,
    columns,
    finite_floats,
    grade,
    ids,
    sklearn_quietly,
    table,
)


@st.composite
def regression_case(draw, values=finite_floats()):
    size = draw(st.integers(1, 40))
    truth = draw(columns(size, values))
    predicted = draw(columns(size, values))
    return truth, predicted, draw(st.permutations(range(size)))


@PROPERTY
@given(regression_case())
def test_rmse_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"id": ids(len(truth)), "value": truth})
    submission = table({"id": ids(len(truth)), "value": predicted}, order)
    ours = grade("rmse", submission, answers, id_column="id", target_column="value")
    assert_close(ours, sklearn_quietly(root_mean_squared_error, truth, predicted))


@PROPERTY
@given(regression_case())
def test_mae_equals_sklearn(case):
    truth, predicted, order = case
    answers = table({"segment_id": ids(len(truth)), "time_to_eruption": truth})
    submission = table({"segment_id": ids(len(truth)), "time_to_eruption": predicted}, order)
    ours = grade("mae", submission, answers, id_column="segment_id", target_column="time_to_eruption")
    assert_close(ours, sklearn_quietly(mean_absolute_error, truth, predicted))


@PROPERTY
@given(regression_case(values=finite_floats(1e6)), st.data())
def test_grouped_log_mae_is_the_mean_of_log_sklearn_mae_per_group(case, data):
    truth, predicted, order = case
    groups = data.draw(columns(len(truth), st.sampled_from(("1JHC", "2JHH", "3JHN"))))
    answers = table({"id": ids(len(truth)), "scalar_coupling_constant": truth, "type": groups})
    submission = table({"id": ids(len(truth)), "scalar_coupling_constant": predicted}, order)
    ours = grade(
        "grouped_log_mae",
        submission,
        answers,
        id_column="id",
        target_column="scalar_coupling_constant",
        group_column="type",
    )
    truth, predicted, groups = np.asarray(truth), np.asarray(predicted), np.asarray(groups)
    logs = [
        math.log(max(mean_absolute_error(truth[groups == g], predicted[groups == g]), 1e-9))
        for g in sorted(set(groups.tolist()))
    ]
    assert_close(ours, float(np.mean(logs)))


@PROPERTY
@given(st.integers(1, 30), st.integers(1, 3), st.data())
def test_mcrmse_is_the_mean_of_sklearn_rmse_over_the_kept_rows(size, width, data):
    scored = [f"target_{j}" for j in range(width)]
    truth = np.column_stack([data.draw(columns(size, finite_floats(1e6))) for _ in scored])
    predicted = np.column_stack([data.draw(columns(size, finite_floats(1e6))) for _ in scored])
    keep = data.draw(st.lists(st.booleans(), min_size=size, max_size=size).filter(any))
    order = data.draw(st.permutations(range(size)))
    answers = table({"id": ids(size), **{c: truth[:, j] for j, c in enumerate(scored)}, "keep": keep})
    submission = table(
        {
            "id": ids(size),
            **{c: predicted[:, j] for j, c in enumerate(scored)},
            "unscored": [math.nan] * size,
        },
        order,
    )
    ours = grade(
        "mcrmse",
        submission,
        answers,
        id_column="id",
        scored_columns=scored,
        required_columns=[*scored, "unscored"],
        keep_column="keep",
    )
    kept = np.asarray(keep)
    expected = np.mean([root_mean_squared_error(truth[kept, j], predicted[kept, j]) for j in range(width)])
    assert_close(ours, float(expected))


NON_NEGATIVE = st.one_of(st.sampled_from((0.0, 1e-300, 1e300, 1.0)), st.floats(0.0, 1e300))


@PROPERTY
@given(st.integers(1, 30), st.integers(1, 3), st.data())
def test_columnwise_rmsle_equals_sklearn(size, width, data):
    targets = [f"target_{j}" for j in range(width)]
    truth = np.column_stack([data.draw(columns(size, NON_NEGATIVE)) for _ in targets])
    predicted = np.column_stack([data.draw(columns(size, NON_NEGATIVE)) for _ in targets])
    answers = table({"id": ids(size), **{c: truth[:, j] for j, c in enumerate(targets)}})
    submission = table({"id": ids(size), **{c: predicted[:, j] for j, c in enumerate(targets)}})
    ours = grade("rmsle_columnwise_mean", submission, answers, target_columns=targets)
    expected = np.mean([root_mean_squared_log_error(truth[:, j], predicted[:, j]) for j in range(width)])
    assert_close(ours, float(expected))


@PROPERTY
@given(regression_case(values=NON_NEGATIVE), st.data(), st.floats(-0.999, -1e-300))
def test_a_negative_rmsle_prediction_is_invalid_where_current_sklearn_scores_it(case, data, negative):
    truth, predicted, _ = case
    predicted[data.draw(st.integers(0, len(predicted) - 1))] = negative
    answers = table({"target": truth})
    submission = table({"target": predicted})
    assert math.isfinite(sklearn_quietly(root_mean_squared_log_error, truth, predicted))
    assert_invalid("rmsle_columnwise_mean", submission, answers, "negative", target_columns=["target"])


@PROPERTY
@given(regression_case(), st.data(), st.sampled_from((math.nan, math.inf, -math.inf)))
def test_an_empty_or_infinite_prediction_makes_the_file_invalid(case, data, bad):
    truth, predicted, _ = case
    predicted[data.draw(st.integers(0, len(predicted) - 1))] = bad
    answers = table({"id": ids(len(truth)), "value": truth})
    submission = table({"id": ids(len(truth)), "value": predicted})
    for grader in ("rmse", "mae"):
        assert_invalid(grader, submission, answers, "value", id_column="id", target_column="value")
