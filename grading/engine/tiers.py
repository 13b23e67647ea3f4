"""The board's tiers and the benchmark splits behind them: the one place these words are defined.

A *split* is a set of competitions a bundle declares it ran (`manifest.benchmark.split`); a *tier* is a
column of the board. The tiers Low (= Lite), Medium and High are the splits of the same name; All is split75.
"""

from typing import Final

TIERS: Final = ("low", "medium", "high", "all")
# The tier a competition belongs to in the registry (All is not one: it is every competition).
COMPETITION_TIERS: Final = ("low", "medium", "high")
TIER_LABELS: Final = {"low": "Low (Lite)", "medium": "Medium", "high": "High", "all": "All"}
SPLITS: Final = ("low", "medium", "high", "split75")
# The registry also ships MLE-bench's small "dev" split (for trying the tools); no bundle can claim it.
REGISTRY_SPLITS: Final = (*SPLITS, "dev")
TIER_SPLITS: Final = {"low": "low", "medium": "medium", "high": "high", "all": "split75"}
# The tiers a bundle of each split is listed in: split75 covers every competition, so every tier.
SPLIT_TIERS: Final = {"low": ("low",), "medium": ("medium",), "high": ("high",), "split75": TIERS}


def tiers_of_split(split: str) -> tuple[str, ...]:
    return SPLIT_TIERS.get(split, ())
