"""GET /api/v1/leaderboard/ (SPEC §6): the rows of a board as on the page, cached until the next refresh. GET
/api/v1/entries/<id>/ and its evidence (SPEC §8): one published entry's numbers, and what they depend on."""

import json
import threading
import time

from django.core.cache import cache
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from leaderboard import evidence, exports, selectors
from leaderboard.selectors import BOARDS, RESOURCE_FILTERS, TAB_CHOICES, VERIFIED_FILTERS, BadQuery, BoardQuery
from portal.api.exception_handler import ApiError

# Each process also keeps the bodies it served last (a comparable board's page is about half a megabyte), so that
# a busy board is not fetched from Redis on every request: keyed like the shared cache and kept no longer.
MEMO_BYTES = 32 * 1024 * 1024
_memo: dict[str, tuple[float, bytes]] = {}
_memo_lock = threading.Lock()


def _memo_get(key: str) -> bytes | None:
    found = _memo.get(key)
    return found[1] if found and found[0] > time.monotonic() else None


def _memo_put(key: str, body: bytes) -> None:
    with _memo_lock:
        _memo.pop(key, None)
        _memo[key] = (time.monotonic() + selectors.CACHE_SECONDS, body)
        while len(_memo) > 1 and sum(len(kept) for _, kept in _memo.values()) > MEMO_BYTES:
            del _memo[next(iter(_memo))]  # the oldest first


class LeaderboardApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("board", enum=list(BOARDS), required=False, description="default comparable"),
            OpenApiParameter(
                "tier",
                enum=list(TAB_CHOICES),
                required=False,
                description="default overview: every entry once, with each tier's figure, ordered by All where "
                "run, then Low (Lite), Medium, High (each row's `tier` says which); a tier's name: that tier's tab",
            ),
            OpenApiParameter(
                "excluding_leaky",
                enum=["yes", "no"],
                required=False,
                description="recompute the figures without the known-leaky competitions",
            ),
            OpenApiParameter(
                "sort",
                str,
                required=False,
                description=f"one of {', '.join(selectors.SORTS)}; '-' in front for descending",
            ),
            OpenApiParameter("date_from", OpenApiTypes.DATE, required=False),
            OpenApiParameter("date_to", OpenApiTypes.DATE, required=False),
            OpenApiParameter("runtime_max", float, required=False, description="hours"),
            OpenApiParameter("llm", str, required=False, description="part of an LLM's name"),
            OpenApiParameter("hardware", str, required=False, description="part of the hardware, e.g. A100"),
            OpenApiParameter("open_source", enum=["yes", "no"], required=False),
            OpenApiParameter("verified", enum=list(VERIFIED_FILTERS), required=False),
            OpenApiParameter("resources", enum=list(RESOURCE_FILTERS), required=False),
            OpenApiParameter("page", int, required=False),
            OpenApiParameter("page_size", int, required=False, description=f"at most {selectors.MAX_PAGE_SIZE}"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> HttpResponse:
        try:
            query = BoardQuery.from_params(request.query_params)
        except BadQuery as exc:
            raise ApiError(
                status_code=400, code="invalid", message=str(exc), details={"field": exc.parameter}
            ) from None
        return HttpResponse(leaderboard_body(query), content_type="application/json")


def leaderboard_body(query: BoardQuery) -> bytes:
    """The API's answer to a query as JSON, cached (here and in the shared cache) until the next refresh."""
    key = f"leaderboard:api:{selectors.board_stamp()}:{query.cache_key()}"
    body = _memo_get(key)
    if body is not None:
        return body
    body = cache.get(key)
    if body is None:
        page = selectors.board_page(query)
        body = json.dumps(
            {**selectors.board_meta(page), "rows": [exports.api_row(r) for r in page.rows]}, allow_nan=False
        ).encode()
        cache.set(key, body, selectors.CACHE_SECONDS)
    _memo_put(key, body)
    return body


class EntryApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        description="A published entry's numbers as the board serves them: every tier's complete and padded "
        "aggregates (every measure) with and without the known-leaky competitions, and per tab its figure, per-seed "
        "values, rank and 95% interval. 404 for an entry that is not published.",
    )
    def get(self, request: Request, entry_id: int) -> HttpResponse:
        body = json.dumps(evidence.entry_figures(entry_id=entry_id), allow_nan=False)
        return HttpResponse(body, content_type="application/json")


class EntryEvidenceApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
        description="The evidence of a published entry (a zip; the README's 'The evidence of an entry' describes "
        "it), the same bytes as /leaderboard/entries/<id>/evidence.zip. 404 for an entry that is not published.",
    )
    def get(self, request: Request, entry_id: int) -> StreamingHttpResponse:
        found = evidence.entry_evidence(entry_id=entry_id, base_url=request.build_absolute_uri("/"))
        return evidence.evidence_response(found)
