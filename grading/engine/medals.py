"""Kaggle medal thresholds and medal flags, computed the way MLE-bench computes them.

The leaderboard is taken in file row order and never re-sorted: MLE-bench reads positions straight
from the Kaggle dump, so re-sorting would change thresholds wherever the dump is not perfectly ordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from grading.engine.csvio import read_answers


@dataclass(frozen=True)
class Thresholds:
    gold: float
    silver: float
    bronze: float
    median: float
    is_lower_better: bool


@dataclass(frozen=True)
class MedalsUnknown:
    """No leaderboard to judge by yet: the score and validity are graded, the medals are unknown.

    ``is_lower_better`` is the metric's own direction, reported where a leaderboard would give its order.
    """

    is_lower_better: bool


def medal_rule(thresholds: Mapping[str, Any]) -> Thresholds | MedalsUnknown:
    """The medal rule a recorded ``{"gold", "silver", "bronze", "median", "is_lower_better"}`` names (an entry's
    evidence, an API answer); a null gold means the competition had no leaderboard: medals unknown."""
    if thresholds.get("gold") is None:
        return MedalsUnknown(is_lower_better=bool(thresholds["is_lower_better"]))
    return Thresholds(
        gold=float(thresholds["gold"]),
        silver=float(thresholds["silver"]),
        bronze=float(thresholds["bronze"]),
        median=float(thresholds["median"]),
        is_lower_better=bool(thresholds["is_lower_better"]),
    )


def read_leaderboard(path: Path) -> list[float]:
    """Scores of a Kaggle leaderboard CSV in file row order (best first); it needs a ``score`` column."""
    # Same parser as answers, so a threshold like 0.01794 is the double float("0.01794"), which the
    # 5-decimal rounded score can equal exactly; a sloppier parse could break the inclusive check.
    df = read_answers(Path(path))
    if "score" not in df.columns:
        raise ValueError(f"leaderboard {path} has no 'score' column (columns: {', '.join(map(str, df.columns))})")
    return [float(s) for s in df["score"]]


def is_lower_better(scores: Iterable[float]) -> bool:
    """Direction from the leaderboard itself: the first row beats the last, so first < last means lower
    is better. A tie (or a NaN at either end, where every comparison is false) means higher is better."""
    values = list(scores)
    if not values:
        raise ValueError("an empty leaderboard has no direction")
    return bool(values[0] < values[-1])


def medal_positions(n_teams: int) -> tuple[int, int, int]:
    """1-based leaderboard rows whose scores are the gold, silver and bronze thresholds.

    Kaggle's bands by team count. The products are written as ``0.1 * n`` (not ``n // 10``) on purpose:
    MLE-bench truncates the float product, and we must truncate the very same float.
    """
    if n_teams < 1:
        raise ValueError("a leaderboard needs at least one team")
    if n_teams < 100:
        return max(1, int(0.1 * n_teams)), max(1, int(0.2 * n_teams)), max(1, int(0.4 * n_teams))
    if n_teams < 250:
        return 10, max(1, int(0.2 * n_teams)), max(1, int(0.4 * n_teams))
    if n_teams < 1000:
        return 10 + int(0.002 * n_teams), 50, 100
    return 10 + int(0.002 * n_teams), max(1, int(0.05 * n_teams)), max(1, int(0.1 * n_teams))


def thresholds_from_leaderboard(scores: Iterable[float]) -> Thresholds:
    values = [float(s) for s in scores]
    gold, silver, bronze = medal_positions(len(values))
    return Thresholds(
        gold=values[gold - 1],
        silver=values[silver - 1],
        bronze=values[bronze - 1],
        # pandas' median: NaN skipped, mean of the two middle values for an even count.
        median=float(pd.Series(values, dtype="float64").median()),
        is_lower_better=is_lower_better(values),
    )


def medals_for(score: float | None, thresholds: Thresholds | MedalsUnknown) -> dict[str, bool]:
    """Medal flags for an already rounded score against unrounded thresholds.

    Medal checks are inclusive and exclusive of each other (gold, else silver, else bronze);
    above-median is strict. None (no valid score) earns nothing. NaN is a valid score that earns
    nothing, simply because every comparison with NaN is false. Unknown medals are all false flags,
    which the report marks as unknown.
    """
    gold = silver = bronze = above_median = False
    if score is not None and isinstance(thresholds, Thresholds):
        t = thresholds
        if t.is_lower_better:
            gold = score <= t.gold
            silver = not gold and score <= t.silver
            bronze = not gold and not silver and score <= t.bronze
            above_median = score < t.median
        else:
            gold = score >= t.gold
            silver = not gold and score >= t.silver
            bronze = not gold and not silver and score >= t.bronze
            above_median = score > t.median
    return {
        "gold_medal": bool(gold),
        "silver_medal": bool(silver),
        "bronze_medal": bool(bronze),
        "above_median": bool(above_median),
        "any_medal": bool(gold or silver or bronze),
    }
