"""A board's page: its rows in the query's order, as typed row views (leaderboard/read_models.py) that the page,
the exports and the API all show, cached per board version (bumped by every refresh)."""

import math
from dataclasses import dataclass, field, replace

from django.core.cache import cache
from django.db import connection
from django.db.models import Case, F, IntegerField, OuterRef, QuerySet, Subquery, Value, When
from django.urls import reverse

from grading.engine.aggregation import format_mean_sem
from grading.engine.tiers import TIER_LABELS, TIERS
from grading.models import Submission
from leaderboard.exports import http_url
from leaderboard.history import EMPTY_HEAD, Head, head_of
from leaderboard.levels import levels_at_least
from leaderboard.models import BoardRow, BoardState, Entry
from leaderboard.read_models import READ_MODEL_VERSION, RowView, TierCell
from leaderboard.selectors.query import (
    BOARD_LABELS,
    BOARDS,
    CACHE_SECONDS,
    HEADLINE_ORDER,
    OVERVIEW,
    ROW_MARKS,
    SORTS,
    TAB_LABELS,
    BoardQuery,
)


def board_status() -> tuple[str, Head]:
    """The board's stamp (its version and the time of its last refresh: unlike the version alone, never the
    same for two states of the board, even when the database is recreated, as each test does, or restored) and
    the head of its history, read together: every append to the history bumps the version in its transaction,
    so what is cached under a stamp carries that stamp's head."""
    # Every cached request asks this first: plain SQL takes 0.05 ms, where the ORM's query took 0.6.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT version, refreshed_at, history_seq, history_hash FROM {BoardState._meta.db_table} WHERE id = 1"  # noqa: S608
        )
        state = cursor.fetchone()
    if state is None:
        return "0", EMPTY_HEAD
    version, refreshed_at, seq, digest = state
    # The time as the database gives it (a datetime, or SQLite's text), without spaces: it goes into cache keys.
    return f"{version}@{str(refreshed_at or '').replace(' ', 'T')}", head_of(seq, digest)


def board_stamp() -> str:
    return board_status()[0]


def _headline_position() -> Case:
    return Case(
        *(When(tier=tier, then=Value(position)) for position, tier in enumerate(HEADLINE_ORDER)),
        default=Value(len(HEADLINE_ORDER)),
        output_field=IntegerField(),
    )


def _rows(query: BoardQuery) -> QuerySet[BoardRow]:
    # An entry leaves the board when its refresh runs; until then the status keeps an unpublished one out.
    rows = (
        BoardRow.objects.filter(
            excluding_leaky=query.excluding_leaky, entry__submission__status=Submission.Status.PUBLISHED
        )
        .select_related("entry")
        .defer("entry__tiers", "per_seed")  # what a row shows of them is in its own `shown`
    )
    if query.tier == OVERVIEW:
        # Each entry's row of its headline tier: the first of HEADLINE_ORDER it was measured on.
        rows = rows.filter(headline=True).annotate(headline_position=_headline_position())
    else:
        rows = rows.filter(tier=query.tier)
    if query.board != "all":
        rows = rows.filter(board=query.board)
    entry: dict[str, object] = {}
    if query.date_from:
        entry["entry__date__gte"] = query.date_from
    if query.date_to:
        entry["entry__date__lte"] = query.date_to
    if query.runtime_max is not None:
        entry["entry__runtime_hours__lte"] = query.runtime_max
    if query.llm:
        entry["entry__llms_text__icontains"] = query.llm
    if query.hardware:
        entry["entry__hardware_text__icontains"] = query.hardware
    if query.open_source is not None:
        entry["entry__open_source"] = query.open_source
    if query.resources:
        entry["entry__resources"] = query.resources
    if query.level:
        entry["entry__evidence_level__in"] = levels_at_least(query.level)
    if query.verified == "verified":
        entry["entry__verified__in"] = (Entry.Verified.HOSTED, Entry.Verified.REGRADED)
    elif query.verified:
        entry["entry__verified"] = query.verified
    rows = rows.filter(**entry)
    column = SORTS.get(query.sort, "")
    if column.startswith("tier_"):
        rows = rows.annotate(
            **{
                column: Subquery(
                    BoardRow.objects.filter(
                        entry=OuterRef("entry"),
                        tier=column.removeprefix("tier_"),
                        excluding_leaky=query.excluding_leaky,
                    ).values("any_medal_mean")[:1]
                )
            }
        )
    # On the overview, rows of one headline tier stay together (All first), and rank within it.
    first = ("headline_position",) if query.tier == OVERVIEW else ()
    if not query.sort or (query.sort == "rank" and query.tier == OVERVIEW and not query.descending):
        if query.board == "comparable":
            return rows.order_by(*first, F("rank").asc(nulls_last=True), "-any_medal_mean", "entry__date", "pk")
        return rows.order_by(*first, "-any_medal_mean", "-seeds", "entry__date", "pk")
    ordering = F(column).desc(nulls_last=True) if query.descending else F(column).asc(nulls_last=True)
    return rows.order_by(ordering, "-any_medal_mean", "pk")


def _ranks_text(ranks: list[int]) -> str:
    """[2, 3, 4, 7] -> '#2–4, #7'."""
    runs: list[list[int]] = []
    for rank in sorted(set(ranks)):
        if runs and rank == runs[-1][-1] + 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    return ", ".join(f"#{r[0]}" if len(r) == 1 else f"#{r[0]}–{r[-1]}" for r in runs)


def _cell(shown: dict | None) -> TierCell | None:
    if not shown:
        return None
    agg = shown["agg"]
    return TierCell(
        text=format_mean_sem(agg),
        seeds=agg["seeds"],
        padded=shown["uses"] == "padded",
        mean=agg["any_medal"]["mean"],
        sem=agg["any_medal"]["sem"],
    )


def _view(row: BoardRow, query: BoardQuery) -> RowView:
    entry = row.entry
    tiers = {tier: row.shown.get(tier) for tier in TIERS}  # the row's variant is the query's
    return RowView(
        entry_id=entry.pk,
        submission_id=entry.submission_id,
        board=entry.board,
        comparable=entry.board == Entry.Board.COMPARABLE,
        rank=row.rank,
        tier=row.tier,  # the tab's tier, or on the overview the headline tier the row stands for
        tier_label=TIER_LABELS.get(row.tier, row.tier),
        rank_low=row.rank_low,
        rank_high=row.rank_high,
        tied_with=row.tied_with,
        tied_text=_ranks_text(row.tied_with),
        agent=entry.agent,
        agent_version=entry.agent_version,
        team=entry.team,
        llms=entry.llms,
        date=entry.date.isoformat(),
        runtime_hours=entry.runtime_hours,
        hardware=entry.hardware,
        hardware_text=entry.hardware_text,
        internet_access=entry.internet_access,
        open_source=entry.open_source,
        source_url=entry.source_url,
        source_link=http_url(entry.source_url),  # what a page links to: an http(s) address, else nothing
        benchmark_version=entry.benchmark_version,
        test_set_info=entry.test_set_info,
        resources=entry.resources,
        verified=entry.verified,
        verified_label=entry.get_verified_display(),
        level=entry.evidence_level,
        padded=entry.padded,
        uses=row.uses,
        seeds=row.seeds,
        any_medal={"mean": row.any_medal_mean, "sem": row.any_medal_sem},
        cells={tier: _cell(v) for tier, v in tiers.items()},
        tiers={
            tier: {**shown["agg"], "padded": shown["uses"] == "padded", "uses": shown["uses"]}
            for tier, shown in tiers.items()
            if shown
        },
        footnotes=entry.footnotes,
        url=reverse("leaderboard_entry", args=[entry.pk]),
    )


@dataclass(frozen=True)
class BoardPage:
    query: BoardQuery
    rows: list[RowView]
    count: int
    pages: int
    version: int
    footnotes: list[str] = field(default_factory=list)  # numbered from 1 across the page's rows
    stamp: str = ""  # board_stamp() when it was made: what every cache of this page is keyed by
    history_head: Head = EMPTY_HEAD  # the head of the board's history at that stamp


def board_page(query: BoardQuery) -> BoardPage:
    """One page of a board, as plain dicts (cached until the next refresh)."""
    stamp, head = board_status()
    key = f"leaderboard:page:{READ_MODEL_VERSION}:{stamp}:{query.cache_key()}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    rows = _rows(query)
    count = rows.count()
    start = (query.page - 1) * query.page_size
    views = [_view(row, query) for row in rows[start : start + query.page_size]]
    notes: dict[str, int] = {}
    for view in views:
        view.footnote_numbers = [notes.setdefault(note, len(notes) + 1) for note in view.footnotes]
        # What the row's marks show: the first few, each with its line as a tooltip; the rest one click away.
        view.footnote_marks = list(zip(view.footnote_numbers, view.footnotes, strict=True))[:ROW_MARKS]
        view.footnotes_more = max(0, len(view.footnotes) - ROW_MARKS)
    page = BoardPage(
        query=query,
        rows=views,
        count=count,
        pages=max(1, math.ceil(count / query.page_size)),
        version=int(stamp.split("@", 1)[0]),
        footnotes=list(notes),
        stamp=stamp,
        history_head=head,
    )
    cache.set(key, page, CACHE_SECONDS)
    return page


def board_elsewhere(query: BoardQuery) -> list[dict]:
    """Where the published entries are when this view has none: the other boards of the same tab, and this
    board's overview when the tab is a tier's (each with its count and the parameters that show it)."""
    key = f"leaderboard:elsewhere:{board_stamp()}:{query.cache_key()}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    boards = [query.board, *(board for board in BOARDS if board not in (query.board, "all"))]
    views = [replace(query, board=board, page=1) for board in boards[1:]]
    if query.tier != OVERVIEW:
        views += [replace(query, board=board, tier=OVERVIEW, page=1) for board in boards]
    found = []
    for view in views:
        count = _rows(view).count()
        if count:
            where = f"the {BOARD_LABELS[view.board].lower()} board"
            if view.tier != query.tier:
                where += f"'s {TAB_LABELS[view.tier]} tab"
            found.append({"count": count, "where": where, "params": view.params()})
    cache.set(key, found, CACHE_SECONDS)
    return found


def board_meta(page: BoardPage) -> dict:
    query = page.query
    return {
        "board": query.board,
        "tier": query.tier,
        "excluding_leaky": query.excluding_leaky,
        "count": page.count,
        "page": query.page,
        "pages": page.pages,
        "page_size": query.page_size,
        "version": page.version,
        "footnotes": page.footnotes,
        # The board's history as of this answer: `mleportal verify --history` checks the board follows from it.
        "history_head": page.history_head.as_dict(),
    }
