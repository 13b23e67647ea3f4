"""Every competition of split75: configured in graders.json, and graded without ever failing unclearly.

The answers are the synthetic ones of ``competitions.demo`` (small size), in each competition's private
format; the family test modules check the scores themselves against hand-worked examples.
"""

import inspect
import json
from functools import cache

import numpy as np
import pandas as pd
import pytest

from competitions.demo import generate_answers, simulate_submission
from competitions.demo.specs import spec_for
from grading.engine.errors import InvalidSubmission
from grading.engine.registry import get_grader, grader_names

from .frames import DATA, GRADERS, roundtrip

SPLIT75 = (DATA / "splits" / "split75.txt").read_text().split()
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}


@cache
def answers_of(competition: str):
    return generate_answers(competition_id=competition, size="small", seed=0).answers


def grade(competition: str, submission, answers) -> float:
    entry = GRADERS[competition]
    return get_grader(entry["grader"])(submission, answers, **entry["params"])


def test_graders_json_configures_exactly_the_split75_competitions():
    assert len(SPLIT75) == 75
    assert sorted(GRADERS) == sorted(SPLIT75)


@pytest.mark.parametrize("competition", SPLIT75)
def test_each_competition_names_a_registered_grader_with_fitting_params(competition):
    entry = GRADERS[competition]
    assert set(entry) == {"grader", "params", "deviation"}
    assert entry["grader"] in grader_names()
    signature = inspect.signature(inspect.unwrap(get_grader(entry["grader"])))
    signature.bind(pd.DataFrame(), pd.DataFrame(), **entry["params"])  # no unknown or missing parameter
    assert isinstance(entry["deviation"], str) and len(entry["deviation"]) > 20


@pytest.mark.parametrize("competition", SPLIT75)
def test_a_perfect_submission_beats_a_poor_one_and_inputs_stay_untouched(competition):
    answers = answers_of(competition)
    perfect = roundtrip(simulate_submission(competition_id=competition, answers=answers, quality=1.0, seed=1))
    poor = roundtrip(simulate_submission(competition_id=competition, answers=answers, quality=0.2, seed=1))
    before_answers, before_perfect = answers.copy(), perfect.copy()
    best, worse = grade(competition, perfect, answers), grade(competition, poor, answers)
    pd.testing.assert_frame_equal(answers, before_answers)
    pd.testing.assert_frame_equal(perfect, before_perfect)
    assert np.isfinite(best) and np.isfinite(worse)
    assert (best > worse) if COMPETITIONS[competition]["higher_is_better"] else (best < worse)


def _garbage(competition: str, answers: pd.DataFrame):
    columns = list(spec_for(competition).public_columns)
    n = max(len(answers), 2)
    rng = np.random.default_rng(0)
    yield "empty frame", pd.DataFrame()
    yield "header only", pd.DataFrame(columns=columns)
    yield "one text column", pd.DataFrame({"hello world": ["foo;bar", "baz"]})
    yield "right columns, all empty", pd.DataFrame({c: [np.nan] * n for c in columns})
    yield "right columns, all text", roundtrip(pd.DataFrame({c: ["abc"] * n for c in columns}))
    yield (
        "right columns, mixed Python values",
        pd.DataFrame({c: ([1, "x", None, 2.5, True] * n)[:n] for c in columns}),
    )
    yield "right columns, booleans", pd.DataFrame({c: [True, False] * (n // 2) + [True] * (n % 2) for c in columns})
    yield "many random rows", pd.DataFrame({c: rng.random(5000) for c in columns})
    yield "duplicated column names", pd.DataFrame([[0.5] * (2 * len(columns))] * n, columns=columns + columns)
    yield "integer column names", pd.DataFrame(rng.random((n, len(columns))))
    yield "huge numbers", pd.DataFrame({c: [1e308, -1e308] * (n // 2) + [1e308] * (n % 2) for c in columns})
    yield "nested objects", pd.DataFrame({c: [[1, 2]] * n for c in columns})
    sample = generate_answers(competition_id=competition, size="small", seed=0).sample_submission
    yield "right ids, values are dicts", sample.assign(**{c: [{"p": 1}] * len(sample) for c in columns[1:]})
    yield "right ids, values missing", roundtrip(sample.assign(**{c: [""] * len(sample) for c in columns[1:]}))
    yield "rows reversed, every other one dropped", sample.iloc[::-2].reset_index(drop=True)


@pytest.mark.parametrize("competition", SPLIT75)
def test_graders_raise_only_invalid_submission_on_garbage(competition):
    answers = answers_of(competition)
    for label, frame in _garbage(competition, answers):
        try:
            score = grade(competition, frame, answers)
        except InvalidSubmission as exc:
            assert str(exc).strip(), label
        except Exception as exc:  # noqa: BLE001 - any other exception is the failure under test
            pytest.fail(f"{competition}: {label}: {type(exc).__name__}: {exc}")
        else:
            assert isinstance(score, float), label


@pytest.mark.parametrize("competition", SPLIT75)
def test_graders_refuse_something_that_is_not_a_table(competition):
    with pytest.raises(InvalidSubmission, match="could not be read as a table"):
        grade(competition, None, answers_of(competition))


@pytest.mark.parametrize("competition", SPLIT75)
def test_a_file_with_only_the_header_is_refused_plainly_except_where_mlebench_scores_it(competition):
    sample = generate_answers(competition_id=competition, size="small", seed=0).sample_submission
    header_only = roundtrip(sample.iloc[:0])  # as read_csv reads it: every column is text
    if competition == "uw-madison-gi-tract-image-segmentation":  # nanmean over no rows: NaN, valid
        assert np.isnan(grade(competition, header_only, answers_of(competition)))
        return
    with pytest.raises(InvalidSubmission) as caught:
        grade(competition, header_only, answers_of(competition))
    assert "could not be scored" not in str(caught.value)
