"""The plots of a board page: the over-time points of every row of the board, and the medal heatmap of the page's
rows, cached like the page."""

from collections import Counter
from dataclasses import replace

from django.core.cache import cache
from django.db.models import Count, Q

from competitions.models import Competition, KnownIssue
from grading.engine.tiers import TIER_SPLITS
from grading.models import Run, Submission
from leaderboard.models import Entry
from leaderboard.read_models import RowView
from leaderboard.selectors.board import BoardPage, _rows
from leaderboard.selectors.query import CACHE_SECONDS, OVERVIEW, BoardQuery


def board_points(query: BoardQuery) -> list[dict]:
    """Every row of the query's board (all pages) as a point of the over-time plot."""
    rows = _rows(replace(query, sort="date", descending=False)).values(
        "entry__agent", "entry__date", "any_medal_mean", "any_medal_sem", "board"
    )
    return [
        {
            "agent": r["entry__agent"],
            "date": r["entry__date"].isoformat(),
            "mean": r["any_medal_mean"],
            "sem": r["any_medal_sem"],
            "comparable": r["board"] == Entry.Board.COMPARABLE,
        }
        for r in rows
    ]


def board_figures(query: BoardQuery, page: BoardPage) -> tuple[list[dict], dict]:
    """The over-time points (every row of the query's board) and the medal heatmap of a board page, cached like
    the page until the next refresh."""
    key = f"leaderboard:figures:{page.stamp}:{query.cache_key()}"
    cached = cache.get(key)
    if cached is None:
        cached = (
            board_points(query),
            medal_frequency(rows=page.rows, tier=query.tier, excluding_leaky=query.excluding_leaky),
        )
        cache.set(key, cached, CACHE_SECONDS)
    return cached


def medal_frequency(*, rows: list[RowView], tier: str, excluding_leaky: bool, most: int = 30) -> dict:
    """Share of seeds with any medal per competition of the tier (rows of the heatmap) and per entry (the first
    `most` rows). A self-reported entry's medals are its claimed ones; everyone else's are re-graded."""
    chosen = rows[:most]
    if not chosen:
        return {"competitions": [], "entries": [], "frequency": []}
    submission_ids = [row.submission_id for row in chosen]
    benchmark_ids = set(Submission.objects.filter(pk__in=submission_ids).values_list("benchmark_id", flat=True))
    # A tier's tab: that tier's competitions; the overview: those of every tier the rows were measured on.
    wanted = (
        {TIER_SPLITS[t] for row in chosen for t, cell in row.cells.items() if cell}
        if tier == OVERVIEW
        else {TIER_SPLITS[tier]}
    )
    competitions = sorted(
        slug
        for slug, splits in Competition.objects.filter(benchmark_id__in=benchmark_ids).values_list("slug", "splits")
        if wanted & set(splits)
    )
    if excluding_leaky:
        leaky = set(
            KnownIssue.objects.filter(benchmark_id__in=benchmark_ids, kind=KnownIssue.Kind.LEAK).values_list(
                "competition_slug", flat=True
            )
        )
        competitions = [c for c in competitions if c not in leaky]
    claimed_only = {row.submission_id for row in chosen if row.verified == Entry.Verified.SELF_REPORTED}
    runs: Counter[tuple[int, str]] = Counter()
    medals: Counter[tuple[int, str]] = Counter()
    regraded = (
        Run.objects.filter(submission_id__in=set(submission_ids) - claimed_only, competition__slug__in=competitions)
        .values("submission_id", "competition__slug")
        .annotate(runs=Count("pk"), medals=Count("pk", filter=Q(any_medal=True)))
    )
    for found in regraded:
        key = (found["submission_id"], found["competition__slug"])
        runs[key], medals[key] = found["runs"], found["medals"]
    for run in Run.objects.filter(submission_id__in=claimed_only, competition__slug__in=competitions).values(
        "submission_id", "competition__slug", "claimed"
    ):
        key = (run["submission_id"], run["competition__slug"])
        runs[key] += 1
        medals[key] += any((run["claimed"] or {}).get(m) for m in ("gold_medal", "silver_medal", "bronze_medal"))
    frequency = [
        [
            medals[(row.submission_id, c)] / runs[(row.submission_id, c)] if runs[(row.submission_id, c)] else None
            for row in chosen
        ]
        for c in competitions
    ]
    return {
        "competitions": competitions,
        "entries": [f"{row.agent} #{row.entry_id}" for row in chosen],
        "frequency": frequency,
    }
