"""A simulated Kaggle leaderboard: teams of varied skill, each graded by the real grader.

Team qualities are Beta-distributed (most teams mediocre, a few strong), each team is the simulated agent
at that quality, and every score comes from the competition's registered grader. The result is sorted
best-first in the metric's direction and ranked 1..N, like ``leaderboards/<id>.csv``, so MLE-bench's medal
rules give thresholds that separate a good agent from a mediocre one.

Large answers are graded on a random subset of ``grade_rows`` rows (kept in file order, with enough
positives for AUC metrics): the agent's errors are independent per row, so a subset gives the same
expected score at a fraction of the cost.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from competitions.demo.agent import simulate_submission
from competitions.demo.catalog import competition_facts, grader_choice, rng_for
from competitions.demo.specs import spec_for
from competitions.demo.targets import Binary, MultiLabel
from grading.engine.registry import get_grader

DEFAULT_TEAMS = 300
DEFAULT_GRADE_ROWS = 2_000
QUALITY_BETA = (2.0, 3.0)  # mean 0.4; about 1 team in 12 above 0.7


def grade(*, competition_id: str, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    """The registered grader's score, rounded to 5 decimals like MLE-bench. Raises InvalidSubmission."""
    choice = grader_choice(competition_id)
    return round(float(get_grader(choice.name)(submission, answers, **choice.params)), 5)


def team_qualities(*, n_teams: int, seed: int, competition_id: str) -> np.ndarray:
    rng = rng_for(seed=seed, competition_id=competition_id, purpose="teams")
    return rng.beta(*QUALITY_BETA, size=n_teams)


def grading_subset(*, competition_id: str, answers: pd.DataFrame, rows: int, seed: int) -> pd.DataFrame:
    """At most ``rows`` answer rows in file order, topped up so every 0/1 target keeps both classes."""
    if len(answers) <= rows:
        return answers
    rng = rng_for(seed=seed, competition_id=competition_id, purpose="subset")
    chosen = np.zeros(len(answers), dtype=bool)
    chosen[rng.choice(len(answers), size=rows, replace=False)] = True
    for target in spec_for(competition_id).targets:
        if isinstance(target, (Binary, MultiLabel)):
            for column in target.columns:
                values = answers[column].to_numpy()
                for label in (0, 1):
                    missing = 5 - int((values[chosen] == label).sum())
                    pool = np.flatnonzero((values == label) & ~chosen)
                    if missing > 0 and len(pool):
                        chosen[rng.choice(pool, size=min(missing, len(pool)), replace=False)] = True
    return answers.iloc[np.flatnonzero(chosen)].reset_index(drop=True)


def simulate_leaderboard(
    *,
    competition_id: str,
    answers: pd.DataFrame,
    n_teams: int = DEFAULT_TEAMS,
    seed: int = 0,
    grade_rows: int = DEFAULT_GRADE_ROWS,
) -> pd.DataFrame:
    """``rank,score`` rows, best first in the metric's direction."""
    if n_teams < 1:
        raise ValueError("a leaderboard needs at least one team")
    subset = grading_subset(competition_id=competition_id, answers=answers, rows=grade_rows, seed=seed)
    qualities = team_qualities(n_teams=n_teams, seed=seed, competition_id=competition_id)
    scores = np.empty(n_teams)
    for team, quality in enumerate(qualities):
        submission = simulate_submission(
            competition_id=competition_id, answers=subset, quality=float(quality), seed=seed * 100_003 + team
        )
        scores[team] = grade(competition_id=competition_id, submission=submission, answers=subset)
    higher_is_better = competition_facts(competition_id).higher_is_better
    finite = scores[np.isfinite(scores)]
    if not len(finite):
        raise ValueError(f"{competition_id}: every simulated team scored NaN or infinity")
    # A metric that is undefined for a team's file (a constant column under Spearman) ranks it last.
    scores = np.where(np.isfinite(scores), scores, finite.min() if higher_is_better else finite.max())
    ordered = np.sort(scores)[::-1] if higher_is_better else np.sort(scores)
    return pd.DataFrame({"rank": np.arange(1, n_teams + 1), "score": ordered})
