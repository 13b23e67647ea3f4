"""What the registry tells the rest of the portal, without knowing who listens.

``thresholds_changed`` is sent (with ``competition``, as saved, and ``reason``) inside the transaction that
changed the leaderboard or the medal thresholds in force for a competition that already existed: future grades
and re-grades of its runs judge by them. The leaderboard app listens and records the change in the board's
history, in the same transaction.
"""

from django.dispatch import Signal

thresholds_changed = Signal()

# What a change of the thresholds in force is, as the competition's row holds them.
THRESHOLD_FIELDS = (
    "leaderboard_source",
    "is_lower_better",
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "thresholds_from_official_report",
)
