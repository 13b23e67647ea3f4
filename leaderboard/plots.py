"""The board's plots as plotly figure specs (plain JSON that plotly.js draws; its JavaScript is served from
our static files), each with the table it came from as its text alternative.

plotly renders a subset of HTML in every text it draws (names, hover text, tick labels, titles: `<a href>`,
`<br>`, `<b>` …) and decodes entities after reading the tags, so every text from a team is HTML-escaped here
and reads the same on the plot."""

import json
from html import escape

from grading.engine.tiers import TIER_LABELS, TIERS

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


def over_time(points: list[dict], *, tier: str) -> dict:
    """Any-medal % per entry against its date, with SEM error bars; comparable and non-comparable apart.
    points: {"agent", "date", "mean", "sem", "comparable"}."""
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
                "hovertemplate": "%{text}<br>%{x}: %{y:.1f} %<extra>" + name + "</extra>",
            }
        )
    return {
        "data": traces,
        "layout": {
            **_LAYOUT,
            "title": {"text": f"Any medal (%) over time, {TIER_LABELS[tier]}"},
            "xaxis": {"title": {"text": "date"}, "type": "date"},
            "yaxis": {"title": {"text": "any medal (%)"}, "rangemode": "tozero"},
        },
    }


def tier_bars(rows: list[dict]) -> dict:
    """Any-medal % per tier for the entries a visitor picked, with SEM error bars (the cells of their rows)."""
    traces = []
    for row in rows:
        cells = [row["cells"].get(tier) for tier in TIERS]
        traces.append(
            {
                "type": "bar",
                "name": label(f"{row['agent']} (#{row['entry_id']})"),
                "x": [TIER_LABELS[t] for t in TIERS],
                "y": [round(c["mean"], 3) if c else None for c in cells],
                "error_y": {"type": "data", "array": [round(c["sem"], 3) if c else 0 for c in cells], "visible": True},
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
            "height": max(380, 16 * len(competitions) + 120),
            "title": {"text": "Medal frequency by competition and entry"},
            "margin": {"l": 260, "r": 20, "t": 40, "b": 120},
            "yaxis": {"autorange": "reversed"},
        },
    }
