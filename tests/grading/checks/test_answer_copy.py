"""answer_copy: copies of the private answers, however disguised, are blocking; an honest strong run is not.

Real graders on synthetic packs: answers from competitions/demo, a simulated Kaggle leaderboard of 300 teams
for the thresholds, submissions written as CSV and graded by grade_submission, which measures the agreement
the check reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo.agent import simulate_submission
from competitions.demo.answers import generate_answers
from competitions.demo.catalog import competition_facts, grader_choice
from competitions.demo.csvio import write_csv
from competitions.demo.leaderboard import simulate_leaderboard
from competitions.demo.specs import spec_for
from competitions.demo.targets import predicted_columns
from grading.checks import answer_copy
from grading.engine.agreement import measure
from grading.engine.medals import Thresholds, thresholds_from_leaderboard
from grading.engine.registry import GraderRef
from grading.engine.report import grade_submission
from tests.grading.checks.builders import check_context, facts, run_files

TAXI = "new-york-city-taxi-fare-prediction"  # one number per row, RMSE
NOMAD = "nomad2018-predict-transparent-conductors"  # two numbers per row, RMSLE
DOGS = "dog-breed-identification"  # 120 probability columns against one-hot answers, log loss
TEXT = "text-normalization-challenge-english-language"  # text, exact-match accuracy
ROWS = 3000


@dataclass
class Pack:
    cid: str
    answers: pd.DataFrame
    answers_path: Path
    best: float
    thresholds: Thresholds
    lower: bool


@pytest.fixture(scope="module", params=[TAXI, NOMAD, DOGS, TEXT])
def pack(request, tmp_path_factory) -> Pack:
    cid = request.param
    answers = generate_answers(competition_id=cid, size=ROWS, seed=0).answers
    path = tmp_path_factory.mktemp("pack") / "answers.csv"
    write_csv(answers, path, quoting=spec_for(cid).csv_quoting)
    board = simulate_leaderboard(competition_id=cid, answers=answers, n_teams=300, seed=0)
    lower = not competition_facts(cid).higher_is_better
    return Pack(
        cid=cid,
        answers=answers,
        answers_path=path,
        best=float(board.score.iloc[0]),
        thresholds=thresholds_from_leaderboard(board.score.tolist()),
        lower=lower,
    )


def public(pack: Pack) -> pd.DataFrame:
    return pack.answers[list(spec_for(pack.cid).public_columns)].copy()


def predicted(pack: Pack) -> list[str]:
    return [c for t in spec_for(pack.cid).targets for c in predicted_columns(t)]


def rounded(pack: Pack) -> pd.DataFrame:
    frame = public(pack)
    for column in predicted(pack):
        if pd.api.types.is_float_dtype(frame[column]):
            frame[column] = frame[column].round(2)
    return frame


def noisy(pack: Pack) -> pd.DataFrame:
    frame, rng = public(pack), np.random.default_rng(7)
    columns = [c for c in predicted(pack) if pd.api.types.is_numeric_dtype(frame[c])]
    if pack.cid == DOGS:  # probabilities: a little mass everywhere, rows still summing to one
        probs = frame[columns].to_numpy(dtype=float) + rng.uniform(0, 2e-4, size=(len(frame), len(columns)))
        frame = frame.drop(columns=columns).assign(**dict(zip(columns, (probs / probs.sum(axis=1, keepdims=True)).T)))
    else:
        for column in columns:
            frame[column] = frame[column] * (1 + rng.normal(0, 0.004, len(frame)))
    return frame


def five_percent_changed(pack: Pack) -> pd.DataFrame:
    frame, rng = public(pack), np.random.default_rng(11)
    rows = rng.choice(len(frame), size=len(frame) // 20, replace=False)
    columns = predicted(pack)
    if pack.cid == DOGS:  # the changed rows say "no idea": uniform probabilities
        frame = frame.astype({column: float for column in columns})
        frame.loc[rows, columns] = 1.0 / len(columns)
    else:  # the changed rows take other rows' answers
        donors = rng.permutation(len(frame))[: len(rows)]
        for column in columns:
            frame.loc[rows, column] = frame[column].to_numpy()[donors]
    return frame


def reordered(pack: Pack) -> pd.DataFrame:
    frame = public(pack)
    return frame[list(reversed(frame.columns))].sample(frac=1.0, random_state=3)


def graded_run(pack: Pack, frame: pd.DataFrame, tmp_path, *, seed: int = 0):
    run = run_files(tmp_path, pack.cid, seed, submission="")
    assert run.submission is not None
    write_csv(frame, run.submission, quoting=spec_for(pack.cid).csv_quoting)
    measured: list[dict] = []
    choice = grader_choice(pack.cid)
    report = grade_submission(
        competition_id=pack.cid,
        submission_path=run.submission,
        answers_path=pack.answers_path,
        grader=GraderRef(choice.name, choice.params),
        thresholds=pack.thresholds,
        answers=pack.answers,
        inspect=lambda submission, answers: measured.append(
            measure(submission, answers, id_column=competition_facts(pack.cid).id_column)
        ),
    )
    assert report.valid_submission, report.reason
    run = replace(run, regraded=report.to_dict(with_reason=True), agreement=measured[0])
    context = check_context(
        runs=[run],
        tiers={"low": [pack.cid]},
        competitions=[
            facts(pack.cid, gold=pack.thresholds.gold, lower=pack.lower, best=pack.best, id_column="id"),
        ],
    )
    return answer_copy.check(context), report


def of_the_run(flags, cid: str) -> list:
    return [flag for flag in flags if flag.key == f"{cid}/seed-0"]


@pytest.mark.parametrize("disguise", [public, rounded, noisy, five_percent_changed, reordered])
def test_a_copy_of_the_answers_is_blocking_however_it_is_disguised(pack, disguise, tmp_path):
    if disguise is noisy and pack.cid == TEXT:
        pytest.skip("text has no small noise that keeps its meaning")
    if disguise is five_percent_changed and pack.cid == TEXT:
        pytest.skip("a label copy with 5 % changed is an honest model right on 95 % (the strong ones reach 97 %)")
    flags, report = graded_run(pack, disguise(pack), tmp_path)
    (flag,) = of_the_run(flags, pack.cid)
    (entry,) = [f for f in flags if f.key == "entry"]
    assert entry.severity == "blocking" and f"{pack.cid}/seed-0" in entry.evidence["held"]
    assert (flag.code, flag.severity, flag.key, flag.tiers) == (
        "answer_copy",
        "blocking",
        f"{pack.cid}/seed-0",
        ["low"],
    )
    evidence = flag.evidence
    assert evidence["rows"] == ROWS and evidence["rows_matched_by_id"] == ROWS
    assert evidence["rows_agree"] >= 0.94 * ROWS
    assert evidence["regraded"] == report.score and evidence["leaderboard_best"] == pack.best
    assert evidence["gold_threshold"] == pack.thresholds.gold
    assert f"{evidence['rows_agree']} of {ROWS} rows agree" in flag.message and "Kaggle's best" in flag.message


@pytest.mark.parametrize("quality", [0.8, 0.9])
def test_a_strong_honest_run_near_gold_raises_nothing(pack, quality, tmp_path):
    for seed in range(3):
        frame = simulate_submission(competition_id=pack.cid, answers=pack.answers, quality=quality, seed=seed)
        flags, _ = graded_run(pack, frame, tmp_path / f"seed-{seed}", seed=seed)
        assert flags == []


@pytest.mark.parametrize("quality", [0.95, 0.97])
def test_a_strong_honest_entry_beyond_kaggles_top_raises_nothing(pack, quality, tmp_path):
    """Three seeds of the honest agent at 0.95 and 0.97, near or beyond the simulated Kaggle top."""
    runs = []
    for seed in range(3):
        frame = simulate_submission(competition_id=pack.cid, answers=pack.answers, quality=quality, seed=seed)
        flags, _ = graded_run(pack, frame, tmp_path / f"seed-{seed}", seed=seed)
        assert flags == []
        runs.append(frame)
    assert len(runs) == 3


def test_the_evidence_holds_counts_and_scores_never_an_answer(pack, tmp_path):
    (flag,) = of_the_run(graded_run(pack, public(pack), tmp_path)[0], pack.cid)
    shown = repr(flag.evidence) + flag.message
    for value in pack.answers[predicted(pack)[0]].astype(str).head(50):
        if len(value) > 4:
            assert value not in shown
    for key, value in flag.evidence.items():
        if key == "file":
            assert value.endswith("/submission/submission.csv")
        elif key == "statistics":
            assert value and all(name in answer_copy.STATISTICS for name in value)
        elif isinstance(value, dict):
            assert all(isinstance(v, (int, float)) for v in value.values()), key
        else:
            assert value is None or isinstance(value, (int, float, bool)), key


# The rule, over measured agreement (no pack needed).


def agreement(low: float, **rest) -> dict:
    return {"measured": True, "rows": 1000, "rows_agree": 1000, "rows_exact": 1000, "agreement_low": low, **rest}


def judged(*, low: float, score: float, best: float | None, lower: bool = False, agree: int = 1000, **settings):
    run = replace(
        run_files(None, "c", 0, regraded={"score": score, "is_lower_better": lower}),
        agreement=agreement(low, rows_agree=agree),
    )
    flags = answer_copy.check(
        check_context(runs=[run], competitions=[facts("c", best=best, gold=0.9, lower=lower)], **settings)
    )
    return [flag for flag in flags if flag.key != "entry"]


def test_a_label_file_wrong_on_a_few_rows_in_a_thousand_is_an_honest_strong_model():
    assert judged(low=0.95, score=0.99, best=0.9, agree=998) == []
    assert len(judged(low=0.95, score=0.99, best=0.9, agree=999)) == 1  # at most 1 - confidence of rows wrong


def test_below_the_limit_is_no_copy():
    assert judged(low=0.919, score=0.99, best=0.9) == []
    assert len(judged(low=0.92, score=0.5, best=0.9)) == 1  # far from the best score, but the rows are the answers


def test_where_kaggles_best_is_perfect_honest_runs_agree_as_much_and_only_beating_it_is_a_copy():
    assert judged(low=0.99, score=0.995, best=0.999) == []
    assert len(judged(low=0.99, score=1.0, best=0.999)) == 1
    assert judged(low=0.99, score=0.001, best=0.0005, lower=True) == []
    assert len(judged(low=0.99, score=0.0, best=0.0005, lower=True)) == 1
    assert judged(low=1.0, score=1.0, best=1.0) == []  # nothing is beyond a perfect best


def test_a_file_the_measure_could_not_read_is_no_copy():
    run = replace(run_files(None, "c", 0), agreement={"measured": False, "reason": "ids repeat in the answers"})
    assert answer_copy.check(check_context(runs=[run])) == []
    assert answer_copy.check(check_context(runs=[run_files(None, "c", 0)])) == []


def test_the_limit_is_a_setting():
    from grading.checks.context import CheckSettings

    assert judged(low=0.95, score=0.5, best=0.9, settings=CheckSettings(answer_copy_agreement=0.96)) == []
