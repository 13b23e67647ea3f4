"""Daily quotas: at most so many uploads, or hosted runs, per team and per user in any 24 hours.

Each kind names its setting (SUBMISSION_DAILY_QUOTA, HOSTED_RUNS_DAILY_QUOTA) and the per-user one beside it
(..._PER_USER, the team's when unset); the caller counts the rows and words the refusal."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet

QUOTA_WINDOW = timedelta(days=1)


def quota_frees_at(times: list[datetime], *, quota: int) -> datetime | None:
    """When one more fits under `quota`, given the times of the (at least `quota`) counted now; None for a
    quota of 0. Sooner when one of them is rejected or fails."""
    if quota <= 0:
        return None
    return sorted(times)[len(times) - quota] + QUOTA_WINDOW


@dataclass(frozen=True, kw_only=True)
class QuotaFull:
    limit: str  # "team" or "user"
    setting: str
    used: int
    quota: int
    frees_at: datetime | None

    def when(self, *, closed: str) -> str:
        return f"the next one fits at {self.frees_at:%Y-%m-%d %H:%M:%S} UTC" if self.frees_at else closed


def daily_quota_full(*, setting: str, team_rows: QuerySet, user_rows: QuerySet | None) -> QuotaFull | None:
    """The first full quota, the team's then the user's (None: no user, as for a hosted run's own upload),
    where the rows are what counts in the last QUOTA_WINDOW; None when one more fits in both."""
    per_user = getattr(settings, f"{setting}_PER_USER")
    limits = [("team", setting, team_rows, getattr(settings, setting))]
    if user_rows is not None:
        per_user = getattr(settings, setting) if per_user is None else per_user
        limits.append(("user", f"{setting}_PER_USER", user_rows, per_user))
    for limit, name, rows, quota in limits:
        times = list(rows.values_list("created_at", flat=True))
        if len(times) >= quota:
            return QuotaFull(
                limit=limit, setting=name, used=len(times), quota=quota, frees_at=quota_frees_at(times, quota=quota)
            )
    return None
