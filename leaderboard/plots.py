"""The board's plots as plotly figure specs (plain JSON that plotly.js draws; its JavaScript is served from
our static files), each with the table it came from as its text alternative.

plotly renders a subset of HTML in every text it draws (names, hover text, tick labels, titles: `<a href>`,
`<br>`, `<b>` …) and decodes entities after reading the tags, so every text from a team is HTML-escaped here
and reads the same on the plot."""

import json
from datetime import date, timedelta
from html import escape

from grading.engine.tiers import TIER_LABELS, TIERS
from leaderboard.read_models import RowView

COMPARABLE_COLOUR = "#1f5fbf"
NON_COMPARABLE_COLOUR = "#9a6700"
# As Django's json_script escapes, and the line separators that end a JavaScript string in older engines.
_JSON_SCRIPT_ESCAPES = {
    ord(">"): "\\u003E",
    ord("<"): "\\u003C",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
_LAYOUT = {"margin": {"l": 60, "r": 20, "t": 40, "b": 60}, "height": 380, "font": {"family": "system-ui, sans-serif"}}


def label(text: object) -> str:
    """A team's text as plotly shows it literally: no tag in it is drawn as one."""
    return escape(str(text), quote=False)


def figures_json(figures: dict) -> str:
    """The figures as JSON that is safe inside <script type="application/json"> (no '<' to open a comment or
    close the element, no '&'), for the page to embed as it is."""
    return json.dumps(figures, allow_nan=False).translate(_JSON_SCRIPT_ESCAPES)


# The over-time plot's x axis spans at least this many days, so that entries on one date do not zoom it to
# milliseconds ("23:59:59.9995"); its ticks are dates, never times of day.
MIN_SPAN_DAYS = 30
EMPTY_TEXT = "No entries to plot on this view yet"


def empty_figure(text: str = EMPTY_TEXT) -> dict:
    """A figure without data: the message in its middle and no axes (plotly would draw the year 2000)."""
    hidden = {"visible": False, "showgrid": False, "zeroline": False}
    return {
        "data": [],
        "layout": {
            **_LAYOUT,
            "height": 160,
            "xaxis": hidden,
            "yaxis": hidden,
            "annotations": [
                {"text": label(text), "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}
            ],
        },
    }


def date_range(dates: list[str]) -> list[str]:
    """The x range of the over-time plot: the entries' dates with a margin, at least MIN_SPAN_DAYS wide."""
    first, last = date.fromisoformat(min(dates)), date.fromisoformat(max(dates))
    margin = max(timedelta(days=3), (last - first) / 20)
    if last - first + 2 * margin < timedelta(days=MIN_SPAN_DAYS):
        margin = (timedelta(days=MIN_SPAN_DAYS) - (last - first)) / 2
    return [(first - margin).isoformat(), (last + margin).isoformat()]


def over_time(points: list[dict], *, tab: str) -> dict:
    """Any-medal % per entry against its date, with SEM error bars; comparable and non-comparable apart.
    points: {"agent", "date", "mean", "sem", "comparable"}. Without points, the empty figure."""
    if not points:
        return empty_figure()
    traces = []
    for comparable, name, colour, symbol in (
        (True, "comparable", COMPARABLE_COLOUR, "circle"),
        (False, "non-comparable", NON_COMPARABLE_COLOUR, "diamond-open"),
    ):
        chosen = [p for p in points if p["comparable"] is comparable]
        if not chosen:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": [p["date"] for p in chosen],
                "y": [round(p["mean"], 3) for p in chosen],
                "error_y": {"type": "data", "array": [round(p["sem"], 3) for p in chosen], "visible": True},
                "text": [label(p["agent"]) for p in chosen],
                "marker": {"color": colour, "symbol": symbol, "size": 9},
                "hovertemplate": "%{text}<br>%{x|%Y-%m-%d}: %{y:.1f} %<extra>" + name + "</extra>",
            }
        )
    return {
        "data": traces,
        "layout": {
            **_LAYOUT,
            "title": {"text": f"Any medal (%) over time, {label(tab)}"},
            "xaxis": {
                "title": {"text": "date"},
                "type": "date",
                "range": date_range([p["date"] for p in points]),
                "tickformat": "%Y-%m-%d",
                "nticks": 8,
            },
            "yaxis": {"title": {"text": "any medal (%)"}, "rangemode": "tozero"},
        },
    }


def tier_bars(rows: list[RowView]) -> dict:
    """Any-medal % per tier for the entries a visitor picked, with SEM error bars (the cells of their rows)."""
    traces = []
    for row in rows:
        cells = [row.cells.get(tier) for tier in TIERS]
        traces.append(
            {
                "type": "bar",
                "name": label(f"{row.agent} (#{row.entry_id})"),
                "x": [TIER_LABELS[t] for t in TIERS],
                "y": [round(c.mean, 3) if c else None for c in cells],
                "error_y": {"type": "data", "array": [round(c.sem, 3) if c else 0 for c in cells], "visible": True},
            }
        )
    return {
        "data": traces,
        "layout": {
            **_LAYOUT,
            "barmode": "group",
            "title": {"text": "Any medal (%) by tier"},
            "yaxis": {"title": {"text": "any medal (%)"}, "rangemode": "tozero"},
        },
    }


def label_margin(names: list[str], *, most: int = 420) -> int:
    """Pixels for tick labels of these names at the plot's 12 px font (about 7 px a character)."""
    return min(most, 20 + 7 * max((len(name) for name in names), default=0))


def medal_heatmap(*, competitions: list[str], entries: list[str], frequency: list[list[float | None]]) -> dict:
    """Medal frequency (share of seeds with any medal) per competition (rows) and entry (columns)."""
    return {
        "data": [
            {
                "type": "heatmap",
                "x": [label(name) for name in entries],
                "y": [label(slug) for slug in competitions],
                "z": frequency,
                "zmin": 0,
                "zmax": 1,
                "colorscale": [[0, "#f4f5f7"], [0.5, "#e0b040"], [1, "#1f7a3a"]],
                "colorbar": {"title": {"text": "medal share"}},
                "hovertemplate": "%{y}<br>%{x}: %{z:.0%} of seeds<extra></extra>",
            }
        ],
        "layout": {
            **_LAYOUT,
            "height": max(380, 18 * len(competitions) + 160),
            "title": {"text": "Medal frequency by competition and entry"},
            # Room for the longest name whole (plotly cuts a tick label that does not fit its margin).
            "margin": {"l": label_margin(competitions), "r": 20, "t": 40, "b": label_margin(entries, most=200)},
            "yaxis": {"autorange": "reversed", "automargin": True, "dtick": 1},
            "xaxis": {"automargin": True, "tickangle": -30},
        },
    }
