"""Reads of the board: one query object built from the URL (so the state lives in it), rows as plain dicts
that the page, the exports and the API all show. Cached per board version (bumped by every refresh)."""

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.core.cache import cache
from django.db import connection
from django.db.models import Case, Count, F, IntegerField, JSONField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import JSONObject
from django.urls import reverse

from competitions.models import Competition, KnownIssue
from grading.engine.aggregation import format_mean_sem
from grading.engine.tiers import TIER_LABELS, TIER_SPLITS, TIERS
from grading.models import Run, Submission
from leaderboard.exports import http_url
from leaderboard.history import EMPTY_HEAD, Head, head_of
from leaderboard.models import BoardRow, BoardState, Entry

BOARDS = ("comparable", "non_comparable", "all")
BOARD_LABELS = {"comparable": "Comparable", "non_comparable": "Non-comparable", "all": "All entries"}
# The landing view: every entry once, with a column per tier ("—" where a tier was not run), as MLE-bench's
# README table. Each row stands for its headline tier, the first of HEADLINE_ORDER it has: All where run, else
# Low (Lite), Medium, High. Rows sort by that order first, then by rank (comparable board) or figure.
OVERVIEW = "overview"
TAB_CHOICES = (OVERVIEW, *TIERS)
TAB_LABELS = {OVERVIEW: "Every tier", **TIER_LABELS}
HEADLINE_ORDER = ("all", "low", "medium", "high")
VERIFIED_FILTERS = ("verified", "hosted", "regraded", "self_reported")
RESOURCE_FILTERS = ("reference", "beyond", "undeclared")
PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
# Far more pages than any board has at one row a page, and an offset PostgreSQL takes (a larger one is a 400).
MAX_PAGE = 1_000_000
CACHE_SECONDS = 300
ROW_MARKS = 3  # footnote marks a row shows; the others are on the entry page
# Column -> ORDER BY (ascending); "low" … "all" sort by that tier's figure. Missing values sort last.
SORTS: dict[str, str] = {
    "rank": "rank",
    "agent": "entry__agent",
    "team": "entry__team",
    "llms": "entry__llms_text",
    "any_medal": "any_medal_mean",
    "seeds": "seeds",
    "runtime": "entry__runtime_hours",
    "date": "entry__date",
    "hardware": "entry__gpu_count",
    "vcpus": "entry__vcpus",
    "ram": "entry__ram_gb",
    "internet": "entry__internet_access",
    "open_source": "entry__open_source",
    "version": "entry__benchmark_version",
    "test_set": "entry__test_set_info",
    "verified": "entry__verified",
    "resources": "entry__resources",
    **{tier: f"tier_{tier}" for tier in TIERS},
}


class BadQuery(ValueError):
    """A parameter of the board's URL that cannot be used; the message says which and what is allowed."""

    def __init__(self, parameter: str, message: str):
        super().__init__(message)
        self.parameter = parameter


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 40 else f"{value[:20]!r}… ({len(value)} characters)"


def _choice(params, name: str, allowed, default: str) -> str:
    value = params.get(name) or default
    if value not in allowed:
        raise BadQuery(name, f"{name} must be one of {', '.join(allowed)} (got {_shown(value)})")
    return value


def _yes_no(params, name: str) -> bool | None:
    value = params.get(name, "")
    if value in ("", "any"):
        return None
    if value not in ("yes", "no"):
        raise BadQuery(name, f"{name} must be yes, no or any (got {_shown(value)})")
    return value == "yes"


def _date(params, name: str) -> date | None:
    value = params.get(name, "")
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadQuery(name, f"{name} must be a date as YYYY-MM-DD (got {_shown(value)})") from None


def _number(params, name: str, *, minimum: float) -> float | None:
    value = params.get(name, "")
    if not value:
        return None
    try:
        number = float(value) if len(value) <= 40 else math.nan
    except ValueError:
        number = math.nan
    if not (number >= minimum and math.isfinite(number)):
        raise BadQuery(name, f"{name} must be a number of at least {minimum:g} (got {_shown(value)})")
    return number


def _search(params, name: str) -> str:
    """A part of a name to look for: trimmed to 200 characters, without control characters (PostgreSQL refuses
    a NUL)."""
    value = params.get(name, "").strip()[:200]
    if not value.isprintable():
        raise BadQuery(name, f"{name} must be plain text, without control characters (got {_shown(value)})")
    return value


def _whole(params, name: str, *, maximum: int, default: int) -> int:
    """A whole number from 1 to `maximum`, in plain digits: a huge, negative or odd one names the parameter."""
    value = params.get(name, "")
    if not value:
        return default
    digits = value.strip()
    number = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= len(str(maximum)) else 0
    if not 1 <= number <= maximum:
        raise BadQuery(name, f"{name} must be a whole number from 1 to {maximum} (got {_shown(value)})")
    return number


@dataclass(frozen=True, kw_only=True)
class BoardQuery:
    board: str = "comparable"
    tier: str = OVERVIEW  # a tier's tab, or OVERVIEW: every entry once, a column per tier
    excluding_leaky: bool = False
    sort: str = ""  # empty: rank on the comparable board, the figure elsewhere
    descending: bool = False
    date_from: date | None = None
    date_to: date | None = None
    runtime_max: float | None = None
    llm: str = ""
    hardware: str = ""
    open_source: bool | None = None
    verified: str = ""
    resources: str = ""
    page: int = 1
    page_size: int = PAGE_SIZE

    @classmethod
    def from_params(cls, params) -> "BoardQuery":
        """From a request's query parameters; a bad one raises BadQuery naming it."""
        sort = params.get("sort", "")
        descending = sort.startswith("-")
        sort = sort.removeprefix("-")
        if sort and sort not in SORTS:
            raise BadQuery("sort", f"sort must be one of {', '.join(SORTS)}, with '-' in front for descending")
        runtime = _number(params, "runtime_max", minimum=0)
        return cls(
            board=_choice(params, "board", BOARDS, "comparable"),
            tier=_choice(params, "tier", TAB_CHOICES, OVERVIEW),
            excluding_leaky=bool(_yes_no(params, "excluding_leaky")),
            sort=sort,
            descending=descending,
            date_from=_date(params, "date_from"),
            date_to=_date(params, "date_to"),
            runtime_max=runtime,
            llm=_search(params, "llm"),
            hardware=_search(params, "hardware"),
            open_source=_yes_no(params, "open_source"),
            verified=_choice(params, "verified", ("", *VERIFIED_FILTERS), ""),
            resources=_choice(params, "resources", ("", *RESOURCE_FILTERS), ""),
            page=_whole(params, "page", maximum=MAX_PAGE, default=1),
            page_size=_whole(params, "page_size", maximum=MAX_PAGE_SIZE, default=PAGE_SIZE),
        )

    def params(self, **changes) -> dict[str, str]:
        """The non-default parameters of this query (with `changes`), for links that keep the state."""
        query = replace(self, **changes)
        default = BoardQuery()
        out = {}
        for name in ("board", "tier", "llm", "hardware", "verified", "resources"):
            if getattr(query, name) != getattr(default, name):
                out[name] = getattr(query, name)
        if query.sort:
            out["sort"] = ("-" if query.descending else "") + query.sort
        if query.excluding_leaky:
            out["excluding_leaky"] = "yes"
        if query.open_source is not None:
            out["open_source"] = "yes" if query.open_source else "no"
        for name in ("date_from", "date_to"):
            if getattr(query, name):
                out[name] = getattr(query, name).isoformat()
        if query.runtime_max is not None:
            out["runtime_max"] = f"{query.runtime_max:g}"
        if query.page != 1:
            out["page"] = str(query.page)
        if query.page_size != PAGE_SIZE:
            out["page_size"] = str(query.page_size)
        return out

    def cache_key(self) -> str:
        return hashlib.sha256(urlencode(sorted(self.params().items())).encode()).hexdigest()[:32]

    @property
    def filtered(self) -> bool:
        return bool(set(self.params()) - {"board", "tier", "sort", "excluding_leaky", "page", "page_size"})


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


def _cell(shown: dict | None) -> dict | None:
    if not shown:
        return None
    agg = shown["agg"]
    return {
        "text": format_mean_sem(agg),
        "seeds": agg["seeds"],
        "padded": shown["uses"] == "padded",
        "mean": agg["any_medal"]["mean"],
        "sem": agg["any_medal"]["sem"],
    }


def _view(row: BoardRow, query: BoardQuery) -> dict:
    entry = row.entry
    tiers = {tier: row.shown.get(tier) for tier in TIERS}  # the row's variant is the query's
    return {
        "entry_id": entry.pk,
        "submission_id": entry.submission_id,
        "board": entry.board,
        "comparable": entry.board == Entry.Board.COMPARABLE,
        "rank": row.rank,
        "tier": row.tier,  # the tab's tier, or on the overview the headline tier the row stands for
        "tier_label": TIER_LABELS.get(row.tier, row.tier),
        "rank_low": row.rank_low,
        "rank_high": row.rank_high,
        "tied_with": row.tied_with,
        "tied_text": _ranks_text(row.tied_with),
        "agent": entry.agent,
        "agent_version": entry.agent_version,
        "team": entry.team,
        "llms": entry.llms,
        "date": entry.date.isoformat(),
        "runtime_hours": entry.runtime_hours,
        "hardware": entry.hardware,
        "hardware_text": entry.hardware_text,
        "internet_access": entry.internet_access,
        "open_source": entry.open_source,
        "source_url": entry.source_url,
        "source_link": http_url(entry.source_url),  # what a page links to: an http(s) address, else nothing
        "benchmark_version": entry.benchmark_version,
        "test_set_info": entry.test_set_info,
        "resources": entry.resources,
        "verified": entry.verified,
        "verified_label": entry.get_verified_display(),
        "padded": entry.padded,
        "uses": row.uses,
        "seeds": row.seeds,
        "any_medal": {"mean": row.any_medal_mean, "sem": row.any_medal_sem},
        "cells": {tier: _cell(v) for tier, v in tiers.items()},
        "tiers": {
            tier: {**shown["agg"], "padded": shown["uses"] == "padded", "uses": shown["uses"]}
            for tier, shown in tiers.items()
            if shown
        },
        "footnotes": entry.footnotes,
        "url": reverse("leaderboard_entry", args=[entry.pk]),
    }


@dataclass(frozen=True)
class BoardPage:
    query: BoardQuery
    rows: list[dict]
    count: int
    pages: int
    version: int
    footnotes: list[str] = field(default_factory=list)  # numbered from 1 across the page's rows
    stamp: str = ""  # board_stamp() when it was made: what every cache of this page is keyed by
    history_head: Head = EMPTY_HEAD  # the head of the board's history at that stamp


def board_page(query: BoardQuery) -> BoardPage:
    """One page of a board, as plain dicts (cached until the next refresh)."""
    stamp, head = board_status()
    key = f"leaderboard:page:{stamp}:{query.cache_key()}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    rows = _rows(query)
    count = rows.count()
    start = (query.page - 1) * query.page_size
    views = [_view(row, query) for row in rows[start : start + query.page_size]]
    notes: dict[str, int] = {}
    for view in views:
        view["footnote_numbers"] = [notes.setdefault(note, len(notes) + 1) for note in view["footnotes"]]
        # What the row's marks show: the first few, each with its line as a tooltip; the rest one click away.
        view["footnote_marks"] = list(zip(view["footnote_numbers"], view["footnotes"], strict=True))[:ROW_MARKS]
        view["footnotes_more"] = max(0, len(view["footnotes"]) - ROW_MARKS)
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


def medal_frequency(*, rows: list[dict], tier: str, excluding_leaky: bool, most: int = 30) -> dict:
    """Share of seeds with any medal per competition of the tier (rows of the heatmap) and per entry (the first
    `most` rows). A self-reported entry's medals are its claimed ones; everyone else's are re-graded."""
    chosen = rows[:most]
    if not chosen:
        return {"competitions": [], "entries": [], "frequency": []}
    submission_ids = [row["submission_id"] for row in chosen]
    benchmark_ids = set(Submission.objects.filter(pk__in=submission_ids).values_list("benchmark_id", flat=True))
    # A tier's tab: that tier's competitions; the overview: those of every tier the rows were measured on.
    wanted = (
        {TIER_SPLITS[t] for row in chosen for t, cell in row["cells"].items() if cell}
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
    claimed_only = {row["submission_id"] for row in chosen if row["verified"] == Entry.Verified.SELF_REPORTED}
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
            medals[(row["submission_id"], c)] / runs[(row["submission_id"], c)]
            if runs[(row["submission_id"], c)]
            else None
            for row in chosen
        ]
        for c in competitions
    ]
    return {
        "competitions": competitions,
        "entries": [f"{row['agent']} #{row['entry_id']}" for row in chosen],
        "frequency": frequency,
    }


MEDALS = ("gold", "silver", "bronze")


def _medal(report: dict | None) -> str:
    """The cell's class: the best of gold, silver, bronze, above median, valid, invalid, none."""
    if not report:
        return "none"
    for medal in MEDALS:
        if report.get(f"{medal}_medal"):
            return medal
    if report.get("above_median"):
        return "above_median"
    if report.get("valid_submission"):
        return "valid"
    return "invalid" if report.get("submission_exists") else "none"


def _thresholds(report: dict | None) -> str:
    if not report:
        return ""
    parts = [
        f"{name} {report[f'{name}_threshold']}"
        for name in (*MEDALS, "median")
        if report.get(f"{name}_threshold") is not None
    ]
    return ", ".join(parts)


def entry_get(*, entry_id: int) -> Entry:
    """A published entry (anyone may see it), or Http404."""
    from django.http import Http404

    entry = (
        Entry.objects.select_related("submission__team", "submission__benchmark")
        .filter(pk=entry_id, submission__status=Submission.Status.PUBLISHED)
        .first()
    )
    if entry is None:
        raise Http404(f"No published entry {entry_id}.")
    return entry


@dataclass(frozen=True)
class SeedMatrix:
    seeds: list[int]
    rows: list[dict]  # {"competition", "tier", "cells": [cell or None per seed]}


def entry_matrix(entry: Entry) -> SeedMatrix:
    """Competition × seed: medal class, score, thresholds, claimed against re-graded."""
    self_reported = entry.verified == Entry.Verified.SELF_REPORTED
    # Plain rows with the competition's slug and tier, not model instances (the competition's other columns hold
    # whole leaderboards as JSON). Typed loosely: django-stubs mistypes named rows that span a relation.
    runs: list[Any] = list(
        Run.objects.filter(submission_id=entry.submission_id)
        .order_by("competition__slug", "seed")
        .values_list(
            "competition__slug", "competition__tier", "seed", "run_group", "run_id", "claimed", "regraded", named=True
        )
    )
    seeds = sorted({run.seed for run in runs})
    by_competition: dict[str, dict] = {}
    for run in runs:
        regraded, claimed = run.regraded or None, run.claimed or None
        shown = claimed if self_reported else regraded
        row = by_competition.setdefault(
            run.competition__slug, {"competition": run.competition__slug, "tier": run.competition__tier, "cells": {}}
        )
        claimed_medal = _medal(claimed) if claimed else None
        row["cells"][run.seed] = {
            "medal": _medal(shown),
            "score": (shown or {}).get("score"),
            "claimed_score": (claimed or {}).get("score"),
            "claimed_medal": claimed_medal,
            "regraded_medal": None if self_reported else _medal(regraded),
            "differs": bool(
                claimed
                and not self_reported
                and (claimed_medal != _medal(regraded) or claimed.get("score") != (regraded or {}).get("score"))
            ),
            "thresholds": _thresholds(shown or claimed),
            "reason": (regraded or {}).get("reason") or "",
            "run": f"{run.run_group}/{run.run_id}",
        }
    rows = [{**row, "cells": [row["cells"].get(seed) for seed in seeds]} for row in by_competition.values()]
    return SeedMatrix(seeds=seeds, rows=rows)


def entry_rates(entry: Entry, *, excluding_leaky: bool = False) -> list[dict]:
    """Per tier: the shown aggregate's gold / silver / bronze / above-median / valid / any-medal rates."""
    variant = "excluding_leaky" if excluding_leaky else "all"
    out = []
    for tier in TIERS:
        figures = (entry.tiers.get(tier) or {}).get(variant)
        if not figures or not figures.get("uses"):
            continue
        agg = figures[figures["uses"]]
        out.append(
            {
                "tier": tier,
                "label": TIER_LABELS[tier],
                "uses": figures["uses"],
                "seeds": agg["seeds"],
                "copies": agg.get("copies", 0),  # runs left out: byte-identical to an earlier seed's file
                "seeds_with_copies": agg.get("seeds_with_copies", agg["seeds"]),
                "other": figures["padded" if figures["uses"] == "complete" else "complete"],
                **{
                    name: agg[name]
                    for name in (
                        "any_medal",
                        "gold",
                        "silver",
                        "bronze",
                        "above_median",
                        "valid_submission",
                        "submission_exists",
                    )
                },
            }
        )
    return out


def entry_ranks(entry: Entry) -> dict[str, BoardRow]:
    return {row.tier: row for row in entry.rows.filter(excluding_leaky=False)}


# What a competition page reads of a run's report: its score and what _medal looks at.
_SHOWN_KEYS = (
    "score",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "valid_submission",
    "submission_exists",
)


def competition_results(*, slug: str) -> tuple[Competition, list[dict]]:
    """Every published entry's runs on one competition, best medal first, against its thresholds."""
    from django.http import Http404

    competition = Competition.objects.filter(slug=slug).order_by("-benchmark_id").first()
    if competition is None:
        raise Http404(f"No competition {slug!r}.")
    # Plain rows for the runs, each with what the page shows of the one report its entry shows (the claim of a
    # self-reported entry, else the re-grade), and each entry once with only what the page shows of it (not the
    # submission's manifest or the entry's figures).
    source = Case(
        When(submission__board_entry__verified=Entry.Verified.SELF_REPORTED, then=F("claimed")),
        default=F("regraded"),
        output_field=JSONField(),
    )
    shown = JSONObject(**{key: KeyTransform(key, source) for key in _SHOWN_KEYS})
    runs = list(
        Run.objects.filter(
            competition=competition,
            submission__status=Submission.Status.PUBLISHED,
            submission__board_entry__isnull=False,
        )
        .order_by("submission_id", "seed")
        .values_list("submission__board_entry", "seed", shown)
    )
    entries = Entry.objects.only("agent", "team", "board", "verified").in_bulk({run[0] for run in runs})
    by_entry: dict[int, dict] = {}
    for entry_id, seed, shown_report in runs:
        entry = entries.get(entry_id)
        if entry is None:  # removed since the first query
            continue
        report = shown_report or {}
        row = by_entry.setdefault(entry.pk, {"entry": entry, "seeds": []})
        row["seeds"].append({"seed": seed, "score": report.get("score"), "medal": _medal(report)})
    order = {"gold": 0, "silver": 1, "bronze": 2, "above_median": 3, "valid": 4, "invalid": 5, "none": 6}
    rows = []
    for row in by_entry.values():
        medals = [seed["medal"] for seed in row["seeds"]]
        row["medal_share"] = sum(m in MEDALS for m in medals) / len(medals)
        row["best"] = min(medals, key=order.__getitem__)
        rows.append(row)
    rows.sort(key=lambda r: (-r["medal_share"], order[r["best"]], r["entry"].pk))
    return competition, rows


def sort_link(query: BoardQuery, column: str) -> dict[str, str]:
    """The parameters that sort by `column`, the other way round when it is the current sort."""
    descending = not query.descending if query.sort == column else column not in ("agent", "team", "llms", "rank")
    return query.params(sort=column, descending=descending, page=1)


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
