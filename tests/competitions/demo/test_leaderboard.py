"""Simulated leaderboards: sorted best first, the asked size, medal thresholds that mean something."""

import json
from pathlib import Path

import numpy as np
import pytest

from competitions.demo import generate_answers, grade, simulate_leaderboard, simulate_submission
from competitions.demo.leaderboard import grading_subset
from grading.engine.medals import medals_for, thresholds_from_leaderboard

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}


@pytest.mark.parametrize(
    "competition_id",
    [
        "aerial-cactus-identification",  # higher is better
        "dogs-vs-cats-redux-kernels-edition",  # lower is better
        "nomad2018-predict-transparent-conductors",  # graded by row position
    ],
)
def test_it_is_sorted_best_first_with_the_asked_size(competition_id):
    answers = generate_answers(competition_id=competition_id, size="small", seed=0).answers
    board = simulate_leaderboard(competition_id=competition_id, answers=answers, n_teams=40, seed=0)
    assert list(board.columns) == ["rank", "score"]
    assert list(board["rank"]) == list(range(1, 41))
    scores = board["score"].to_numpy()
    steps = np.diff(scores) if not COMPETITIONS[competition_id]["higher_is_better"] else -np.diff(scores)
    assert (steps >= 0).all() and scores[0] != scores[-1]
    assert thresholds_from_leaderboard(scores).is_lower_better == (not COMPETITIONS[competition_id]["higher_is_better"])


def test_it_is_deterministic_by_seed():
    answers = generate_answers(competition_id="spooky-author-identification", size="small", seed=0).answers
    first = simulate_leaderboard(competition_id="spooky-author-identification", answers=answers, n_teams=30, seed=5)
    again = simulate_leaderboard(competition_id="spooky-author-identification", answers=answers, n_teams=30, seed=5)
    other = simulate_leaderboard(competition_id="spooky-author-identification", answers=answers, n_teams=30, seed=6)
    assert first.equals(again) and not first.equals(other)


@pytest.mark.parametrize("competition_id", ["spooky-author-identification", "aerial-cactus-identification"])
def test_a_good_agent_wins_a_medal_and_a_mediocre_one_does_not(competition_id):
    answers = generate_answers(competition_id=competition_id, size="small", seed=0).answers
    board = simulate_leaderboard(competition_id=competition_id, answers=answers, n_teams=300, seed=0)
    thresholds = thresholds_from_leaderboard(board["score"].tolist())

    def medals(quality: float) -> dict[str, bool]:
        submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=77)
        return medals_for(grade(competition_id=competition_id, submission=submission, answers=answers), thresholds)

    assert medals(0.97)["any_medal"]
    assert not medals(0.3)["any_medal"] and not medals(0.3)["above_median"]


def test_large_answers_are_graded_on_a_subset_that_keeps_both_classes():
    answers = generate_answers(competition_id="siim-isic-melanoma-classification", size=20_000, seed=0).answers
    subset = grading_subset(competition_id="siim-isic-melanoma-classification", answers=answers, rows=500, seed=0)
    assert 500 <= len(subset) <= 510 and (subset["target"] == 1).sum() >= 5
    positions = answers.reset_index().merge(subset, on=["image_name", "target"])["index"]
    assert positions.is_monotonic_increasing
