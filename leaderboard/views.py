"""The board's pages and downloads: thin, over leaderboard/selectors.py."""

import json
from dataclasses import replace
from urllib.parse import urlencode

from django.core.cache import cache
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from grading.bundles.manifest import parse_manifest
from grading.bundles.seeds import RULE_TEXT
from grading.engine.tiers import TIER_LABELS
from grading.models import Submission
from grading.selectors import review_events
from leaderboard import evidence, exports, history, plots, selectors
from leaderboard.history import HISTORY_HEAD_HEADER
from leaderboard.levels import LEVELS
from leaderboard.models import Entry
from leaderboard.selectors import BOARD_LABELS, BOARDS, TAB_CHOICES, TAB_LABELS, BadQuery, BoardQuery
from portal.api.exception_handler import error_body

# The board's columns a visitor may hide (the rank and the agent always show), as the column chooser lists them.
COLUMNS = (
    ("team", "Team"),
    ("llms", "LLM(s)"),
    *((tier, label) for tier, label in TIER_LABELS.items()),
    ("runtime", "Runtime"),
    ("hardware", "Hardware"),
    ("internet", "Internet"),
    ("date", "Date"),
    ("source", "Source"),
    ("benchmark", "Benchmark"),
    ("test_set", "Test-set info"),
    ("seeds", "Seeds"),
    ("verified", "Evidence"),
)
EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json", "md": "text/markdown; charset=utf-8"}


PAGING_FALLBACK = {"page": "the first page", "page_size": f"{selectors.PAGE_SIZE} rows a page"}


def _query(request: HttpRequest) -> tuple[BoardQuery, str]:
    """The page's query and what was wrong with the URL: a bad page or page size falls back to its default and
    keeps the rest; any other bad parameter falls back to the default board."""
    params = request.GET.copy()
    problems: list[str] = []
    while True:
        try:
            return BoardQuery.from_params(params), " ".join(problems)
        except BadQuery as exc:
            if exc.parameter not in PAGING_FALLBACK:
                return BoardQuery(), " ".join([*problems, f"{exc} — showing the default board instead."])
            problems.append(f"{exc} — showing {PAGING_FALLBACK[exc.parameter]} instead.")
            params.pop(exc.parameter)


def _compare_ids(request: HttpRequest) -> list[int]:
    parts = request.GET.getlist("compare")
    return [int(part) for part in parts if part.isascii() and part.isdigit() and len(part) <= 18][:12]


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    query, problem = _query(request)
    page = selectors.board_page(query)
    notice = ""
    if query.page > page.pages:
        notice = f"There is no page {query.page}: this view has {page.pages} page(s). Showing the last one."
        query = replace(query, page=page.pages)
        page = selectors.board_page(query)
    compared = (
        [
            row
            for row in selectors.board_page(
                BoardQuery(
                    board="all",
                    tier=query.tier,
                    excluding_leaky=query.excluding_leaky,
                    page_size=selectors.MAX_PAGE_SIZE,
                )
            ).rows
            if row.entry_id in _compare_ids(request)
        ]
        if _compare_ids(request)
        else []
    )
    elsewhere = (
        [{**found, "link": urlencode(found["params"])} for found in selectors.board_elsewhere(query)]
        if not page.rows
        else []
    )
    points, heat = selectors.board_figures(query, page)
    # The figures' JSON holds every row of the board (the over-time plot): cached like the page, unless the visitor
    # picked entries to compare.
    key = f"leaderboard:figures_json:{page.stamp}:{query.cache_key()}"
    figures_json = None if compared else cache.get(key)
    if figures_json is None:
        figures = {"over-time": plots.over_time(points, tab=TAB_LABELS[query.tier])} if points else {}
        if compared:
            figures["tier-bars"] = plots.tier_bars(compared)
        if heat["competitions"]:
            figures["heatmap"] = plots.medal_heatmap(**heat)
        figures_json = plots.figures_json(figures)
        if not compared:
            cache.set(key, figures_json, selectors.CACHE_SECONDS)
    context = {
        "page": page,
        "query": query,
        "elsewhere": elsewhere,
        "board_label": BOARD_LABELS[query.board].lower(),
        "problem": problem,
        "notice": notice,
        "boards": [(b, BOARD_LABELS[b], urlencode(query.params(board=b, page=1))) for b in BOARDS],
        "tiers": [(t, TAB_LABELS[t], urlencode(query.params(tier=t, page=1))) for t in TAB_CHOICES],
        "tier_columns": list(TIER_LABELS.values()),
        "columns": COLUMNS,
        "tier_label": TAB_LABELS[query.tier],
        "points": points,
        "compared": compared,
        "heat": heat,
        "heat_rows": list(zip(heat["competitions"], heat["frequency"], strict=True)),
        "figures_json": figures_json,
        "verified_filters": selectors.VERIFIED_FILTERS,
        "resource_filters": selectors.RESOURCE_FILTERS,
        "level_filters": LEVELS,
        "sort_links": {column: urlencode(selectors.sort_link(query, column)) for column in selectors.SORTS},
        "leaky_link": urlencode(query.params(excluding_leaky=not query.excluding_leaky, page=1)),
        "page_links": {
            "previous": urlencode(query.params(page=query.page - 1)) if query.page > 1 else None,
            "next": urlencode(query.params(page=query.page + 1)) if query.page < page.pages else None,
        },
        "export_params": urlencode(query.params(page=1, page_size=selectors.MAX_PAGE_SIZE)),
        # The template caches its tables per board version and query, like the page's rows.
        "cache_seconds": selectors.CACHE_SECONDS,
        "query_key": query.cache_key(),
    }
    return render(request, "leaderboard/leaderboard.html", context, status=400 if problem else 200)


@require_GET
def leaderboard_export(request: HttpRequest, kind: str) -> HttpResponse:
    if kind not in EXPORT_TYPES:
        raise Http404(f"No export as {kind!r}; use csv, json or md.")
    try:
        query = BoardQuery.from_params(request.GET)
    except BadQuery as exc:
        if kind == "json":
            return JsonResponse(error_body("invalid", str(exc), {"field": exc.parameter}), status=400)
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain; charset=utf-8")
    page = selectors.board_page(query)
    where = "every board" if query.board == "all" else f"{BOARD_LABELS[query.board].lower()} board"
    title = f"MLE portal, {where}, {TAB_LABELS[query.tier]} tab" + (
        ", excluding known-leaky competitions" if query.excluding_leaky else ""
    )
    head = str(page.history_head)
    if kind == "csv":
        body = exports.rows_csv(page.rows, history_head=head)
    elif kind == "json":
        body = exports.rows_json(page.rows, meta=selectors.board_meta(page))
    else:
        body = exports.rows_markdown(page.rows, title=title, history_head=head)
    response = HttpResponse(body, content_type=EXPORT_TYPES[kind])
    response[HISTORY_HEAD_HEADER] = head
    name = f"leaderboard-{query.board}-{query.tier}{'-excluding-leaky' if query.excluding_leaky else ''}.{kind}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
def entry_detail(request: HttpRequest, entry_id: int) -> HttpResponse:
    entry = selectors.entry_get(entry_id=entry_id)
    submission = entry.submission
    try:
        unknown_keys = list(parse_manifest(data=submission.manifest).unknown_keys) if submission.manifest else []
    except Exception:  # a stored manifest that no longer parses is still shown as it is
        unknown_keys = []
    flags = list(submission.flags.all())
    context = {
        "entry": entry,
        "submission": submission,
        "level": selectors.entry_level(entry=entry, flags=flags),
        "rates": selectors.entry_rates(entry),
        "rates_excluding_leaky": selectors.entry_rates(entry, excluding_leaky=True),
        "ranks": selectors.entry_ranks(entry),
        "registration": selectors.entry_registration(entry),
        "registrations": selectors.entry_registrations(entry),
        "matrix": selectors.entry_matrix(entry),
        "flags": flags,
        "events": review_events(submission),
        "source_link": exports.http_url(entry.source_url),
        "manifest_json": json.dumps(submission.manifest, indent=2, sort_keys=True),
        "unknown_keys": unknown_keys,
        "seed_rule": RULE_TEXT,
        "has_bundle": bool(submission.bundle_name) and submission.origin != Submission.Origin.IMPORT,
        "tier_labels": TIER_LABELS,
    }
    return render(request, "leaderboard/entry.html", context)


@require_GET
def entry_bundle(request: HttpRequest, entry_id: int) -> FileResponse:
    """The run bundle of a published entry, as the team uploaded it (it never holds answers)."""
    entry = selectors.entry_get(entry_id=entry_id)
    opener = evidence.bundle_opener(entry.submission)
    if opener is None:
        raise Http404("This entry has no bundle (it was imported from grading reports).")
    name = evidence.bundle_download_name(entry.pk, opener)
    return FileResponse(opener(), as_attachment=True, filename=name, content_type="application/octet-stream")


@require_GET
def entry_evidence(request: HttpRequest, entry_id: int) -> StreamingHttpResponse:
    """The evidence of a published entry as one zip (leaderboard/evidence.py), streamed; the same bytes as
    GET /api/v1/entries/<id>/evidence/."""
    found = evidence.entry_evidence(entry_id=entry_id, base_url=request.build_absolute_uri("/"))
    return evidence.evidence_response(found)


@require_GET
def competition_board(request: HttpRequest, slug: str) -> HttpResponse:
    competition, rows = selectors.competition_results(slug=slug)
    return render(request, "leaderboard/competition.html", {"competition": competition, "rows": rows})


HISTORY_PAGE = 50


@require_GET
def board_history(request: HttpRequest) -> HttpResponse:
    """The board's history, newest first: what changed, when and why, each event linked to its entry."""
    raw = request.GET.get("before", "")
    before = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else None
    events, more = history.history_recent(before=before, limit=HISTORY_PAGE)
    ids = {event["subject"].get("entry_id") for event in events if event.get("subject")}
    listed = set(
        Entry.objects.filter(pk__in=[i for i in ids if isinstance(i, int)], submission__status="published").values_list(
            "pk", flat=True
        )
    )
    context = {
        "events": [history.event_view(event, listed=listed, tier_labels=TIER_LABELS) for event in events],
        "head": history.board_head(),
        "older": events[-1]["seq"] if more and events else None,
        "newest": before is not None,
    }
    return render(request, "leaderboard/history.html", context)
