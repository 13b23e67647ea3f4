"""No sample submission earns a medal: every one of the 75 competitions' sample submissions, graded by the real
grader against its simulated leaderboard (the board a demo pack ships), earns nothing."""

import pytest

from competitions.demo import generate_answers, grade, simulate_leaderboard, split_ids
from grading.engine.medals import medals_for, thresholds_from_leaderboard


@pytest.mark.parametrize("competition_id", split_ids("split75"))
def test_the_sample_submission_earns_no_medal(competition_id):
    data = generate_answers(competition_id=competition_id, size="small", seed=0)
    board = simulate_leaderboard(competition_id=competition_id, answers=data.answers, n_teams=300, seed=0)
    score = grade(competition_id=competition_id, submission=data.sample_submission, answers=data.answers)
    medals = medals_for(score, thresholds_from_leaderboard(board["score"]))
    assert not medals["any_medal"], (score, board["score"].iloc[[9, 49, 99]].tolist())
