"""GET /api/v1/leaderboard/ (SPEC §6): the rows of a board as on the page, cached until the next refresh; GET
/api/v1/history/: the board's history (leaderboard/history.py); GET /api/v1/entries/<id>/ and its evidence
(SPEC §8): one published entry's numbers, and what they depend on."""

import json
import threading
import time
from collections.abc import Mapping
from urllib.parse import urlencode

from django.core.cache import cache
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from leaderboard import evidence, exports, history, selectors
from leaderboard.history import HISTORY_HEAD_HEADER
from leaderboard.levels import LEVELS
from leaderboard.selectors import BOARDS, RESOURCE_FILTERS, TAB_CHOICES, VERIFIED_FILTERS, BadQuery, BoardQuery
from portal.api.exception_handler import ApiError

# Each process also keeps the bodies it served last (a comparable board's page is about half a megabyte), so that
# a busy board is not fetched from Redis on every request: keyed like the shared cache and kept no longer.
MEMO_BYTES = 32 * 1024 * 1024
_memo: dict[str, tuple[float, tuple[bytes, str]]] = {}
_memo_lock = threading.Lock()


def _memo_get(key: str) -> tuple[bytes, str] | None:
    found = _memo.get(key)
    return found[1] if found and found[0] > time.monotonic() else None


def _memo_put(key: str, answer: tuple[bytes, str]) -> None:
    with _memo_lock:
        _memo.pop(key, None)
        _memo[key] = (time.monotonic() + selectors.CACHE_SECONDS, answer)
        while len(_memo) > 1 and sum(len(kept[0]) for _, kept in _memo.values()) > MEMO_BYTES:
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
            OpenApiParameter(
                "level",
                enum=list(LEVELS),
                required=False,
                description="the minimum evidence level: this level and the stronger ones (verified is the strongest)",
            ),
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
        body, head = leaderboard_answer(query)
        response = HttpResponse(body, content_type="application/json")
        response[HISTORY_HEAD_HEADER] = head
        return response


def leaderboard_answer(query: BoardQuery) -> tuple[bytes, str]:
    """The API's answer to a query as JSON, and the head of the board's history it shows (the one in its
    meta, for the X-Board-History-Head header), cached (here and in the shared cache) until the next refresh."""
    key = f"leaderboard:answer:{selectors.board_stamp()}:{query.cache_key()}"
    answer = _memo_get(key)
    if answer is not None:
        return answer
    answer = cache.get(key)
    if answer is None:
        page = selectors.board_page(query)
        body = json.dumps(
            {**selectors.board_meta(page), "rows": [exports.api_row(r) for r in page.rows]}, allow_nan=False
        ).encode()
        answer = (body, str(page.history_head))
        cache.set(key, answer, selectors.CACHE_SECONDS)
    _memo_put(key, answer)
    return answer


def leaderboard_body(query: BoardQuery) -> bytes:
    return leaderboard_answer(query)[0]


def _whole_param(params: Mapping[str, str], name: str, *, minimum: int, maximum: int, default: int) -> int:
    value = params.get(name, "")
    if value == "":
        return default
    digits = value.strip()
    number = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 19 else -1
    if not minimum <= number <= maximum:
        raise ApiError(
            status_code=400,
            code="invalid",
            message=f"{name} must be a whole number from {minimum} to {maximum} (got {value[:40]!r})",
            details={"field": name},
        )
    return number


class HistoryApi(APIView):
    """GET /api/v1/history/: the board's history, oldest first (README "The board's history")."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("after", int, required=False, description="only events after this sequence number"),
            OpenApiParameter("limit", int, required=False, description=f"at most {history.MAX_PAGE} (default 100)"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> HttpResponse:
        after = _whole_param(request.query_params, "after", minimum=0, maximum=2**63 - 1, default=0)
        limit = _whole_param(request.query_params, "limit", minimum=1, maximum=history.MAX_PAGE, default=100)
        events, head, more = history.history_page(after=after, limit=limit)
        following = None
        if more:
            following = f"{reverse('api_history')}?{urlencode({'after': events[-1]['seq'], 'limit': limit})}"
        body = {"format": history.FORMAT, "head": head.as_dict(), "events": events, "next": following}
        response = HttpResponse(json.dumps(body, allow_nan=False), content_type="application/json")
        response[HISTORY_HEAD_HEADER] = str(head)
        return response


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
