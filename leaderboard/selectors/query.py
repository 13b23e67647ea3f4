"""What a board view asks for: one query object built from the URL (so the state lives in it), with the
boards, tabs, filters and sorts it may name."""

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any
from urllib.parse import urlencode

from grading.engine.tiers import TIER_LABELS, TIERS
from leaderboard.levels import LEVELS

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


# A request's query parameters (a QueryDict), or any mapping of names to text.
Params = Mapping[str, str]


class BadQuery(ValueError):
    """A parameter of the board's URL that cannot be used; the message says which and what is allowed."""

    def __init__(self, parameter: str, message: str):
        super().__init__(message)
        self.parameter = parameter


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 40 else f"{value[:20]!r}… ({len(value)} characters)"


def _choice(params: Params, name: str, allowed: Sequence[str], default: str) -> str:
    value = params.get(name) or default
    if value not in allowed:
        raise BadQuery(name, f"{name} must be one of {', '.join(allowed)} (got {_shown(value)})")
    return value


def _yes_no(params: Params, name: str) -> bool | None:
    value = params.get(name, "")
    if value in ("", "any"):
        return None
    if value not in ("yes", "no"):
        raise BadQuery(name, f"{name} must be yes, no or any (got {_shown(value)})")
    return value == "yes"


def _date(params: Params, name: str) -> date | None:
    value = params.get(name, "")
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadQuery(name, f"{name} must be a date as YYYY-MM-DD (got {_shown(value)})") from None


def _number(params: Params, name: str, *, minimum: float) -> float | None:
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


def _search(params: Params, name: str) -> str:
    """A part of a name to look for: trimmed to 200 characters, without control characters (PostgreSQL refuses
    a NUL)."""
    value = params.get(name, "").strip()[:200]
    if not value.isprintable():
        raise BadQuery(name, f"{name} must be plain text, without control characters (got {_shown(value)})")
    return value


def _whole(params: Params, name: str, *, maximum: int, default: int) -> int:
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
    level: str = ""  # the minimum evidence level (leaderboard/levels.py); empty: every level
    page: int = 1
    page_size: int = PAGE_SIZE

    @classmethod
    def from_params(cls, params: Params) -> "BoardQuery":
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
            level=_choice(params, "level", ("", *LEVELS), ""),
            page=_whole(params, "page", maximum=MAX_PAGE, default=1),
            page_size=_whole(params, "page_size", maximum=MAX_PAGE_SIZE, default=PAGE_SIZE),
        )

    def params(self, **changes: Any) -> dict[str, str]:
        """The non-default parameters of this query (with `changes`), for links that keep the state."""
        query = replace(self, **changes)
        default = BoardQuery()
        out = {}
        for name in ("board", "tier", "llm", "hardware", "verified", "resources", "level"):
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


def sort_link(query: BoardQuery, column: str) -> dict[str, str]:
    """The parameters that sort by `column`, the other way round when it is the current sort."""
    descending = not query.descending if query.sort == column else column not in ("agent", "team", "llms", "rank")
    return query.params(sort=column, descending=descending, page=1)
