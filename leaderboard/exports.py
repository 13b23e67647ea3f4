"""A board's rows as CSV, JSON and the Markdown table of MLE-bench's README (so its README can be generated
from the portal). Plain functions over the row views of leaderboard/read_models.py; api_row is the one place a
row becomes JSON."""

import csv
import io
import json
import re
from urllib.parse import quote, urlsplit

from grading.engine.tiers import TIERS
from leaderboard.levels import LEGEND
from leaderboard.read_models import RowView

CSV_COLUMNS = (
    "rank",
    "rank_low",
    "rank_high",
    "agent",
    "agent_version",
    "team",
    "llms",
    "board",
    "verified",
    "level",
    *(f"{tier}_{part}" for tier in TIERS for part in ("mean", "sem", "seeds", "padded")),
    "runtime_hours",
    "hardware",
    "internet_access",
    "date",
    "open_source",
    "source_url",
    "benchmark_version",
    "test_set_info",
    "resources",
    "footnotes",
    "entry_id",
    "submission_id",
    "board_history_head",  # the head of the board's history this export shows (SEQ:HASH), the same on every row
)
# Columns whose cells the portal computes as numbers (or leaves empty); every other cell may hold a team's text.
CSV_NUMBER_COLUMNS = frozenset(
    ("rank", "rank_low", "rank_high", "runtime_hours", "entry_id", "submission_id")
    + tuple(f"{tier}_{part}" for tier in TIERS for part in ("mean", "sem", "seeds"))
)
MD_TIER_HEADERS = {"low": "Low == Lite (%)", "medium": "Medium (%)", "high": "High (%)", "all": "All (%)"}

# A spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection); the full-width
# forms too in some locales. Leading whitespace and invisible characters do not hide one.
_FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")
_LEADING_BLANKS = re.compile(r"^[\s\u200b-\u200d\u2060\ufeff]+")


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def csv_text(value: str) -> str:
    """A team's text as a cell no spreadsheet runs: prefixed with ' when it could start a formula."""
    if not value:
        return value
    starts = (value[0], _LEADING_BLANKS.sub("", value)[:1])
    if any(start in _FORMULA_STARTS for start in starts) or not value[0].isprintable():
        return "'" + value
    return value


def _csv_cell(column: str, value: object) -> object:
    if value is None or value == "":
        return ""
    if column in CSV_NUMBER_COLUMNS:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(f"{column} holds {value!r}, not a number")
        if isinstance(value, str):
            float(value)  # a number the portal formatted, or a ValueError here rather than a team's text there
        return value
    return csv_text(str(value))


def rows_csv(rows: list[RowView], *, history_head: str = "") -> str:
    out = io.StringIO()
    # Every cell quoted, so that no separator inside one (a ';' where a locale splits on it) starts another.
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        values = {
            **{
                k: getattr(row, k)
                for k in (
                    "rank",
                    "rank_low",
                    "rank_high",
                    "agent",
                    "agent_version",
                    "team",
                    "board",
                    "verified",
                    "level",
                    "runtime_hours",
                    "date",
                    "source_url",
                    "benchmark_version",
                    "test_set_info",
                    "resources",
                    "entry_id",
                    "submission_id",
                )
            },
            "llms": "; ".join(row.llms),
            "hardware": row.hardware_text,
            "internet_access": _yes_no(row.internet_access),
            "open_source": _yes_no(row.open_source),
            "footnotes": " | ".join(row.footnotes),
            "board_history_head": history_head,
        }
        for tier in TIERS:
            cell = row.cells.get(tier)
            values.update(
                {
                    f"{tier}_mean": f"{cell.mean:.4f}" if cell else "",
                    f"{tier}_sem": f"{cell.sem:.4f}" if cell else "",
                    f"{tier}_seeds": cell.seeds if cell else "",
                    f"{tier}_padded": _yes_no(cell.padded) if cell else "",
                }
            )
        writer.writerow([_csv_cell(c, values[c]) for c in CSV_COLUMNS])
    return out.getvalue()


def rows_json(rows: list[RowView], *, meta: dict) -> str:
    return json.dumps({**meta, "rows": [api_row(row) for row in rows]}, indent=1, allow_nan=False)


def api_row(row: RowView) -> dict:
    """SPEC §6's leaderboard row, with the rest of what the page shows."""
    keys = (
        "entry_id",
        "submission_id",
        "agent",
        "agent_version",
        "team",
        "llms",
        "date",
        "runtime_hours",
        "hardware",
        "hardware_text",
        "verified",
        "level",
        "comparable",
        "board",
        "rank",
        "rank_low",
        "rank_high",
        "tied_with",
        "tier",
        "internet_access",
        "open_source",
        "source_url",
        "benchmark_version",
        "test_set_info",
        "resources",
        "uses",
        "seeds",
        "tiers",
        "footnotes",
        "url",
    )
    return {key: getattr(row, key) for key in keys}


# Backslash-escaped: what could start inline Markdown (emphasis, code, links, images, math, table cells).
_MD_ESCAPED = re.compile(r"([\\`*_~\[\]()!|$])")
_MD_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
# Text a renderer would turn into a link by itself (GFM's autolinks): broken up, shown the same.
_MD_AUTOLINK = re.compile(r"(?i)(://|\bwww\.)")
# What a link's destination keeps as it is; the rest (')', '|', '<', '\\', spaces …) is percent-encoded.
_URL_SAFE = "/:?#@!$&+,;=%~*'.-_"


def _md(text: str) -> str:
    """Text as one table cell's literal content: no markup, no link, no HTML, no line break, no '|'."""
    text = " ".join(str(text).split())  # newlines, CRs and the like end a table row
    text = _MD_ESCAPED.sub(r"\\\1", text).translate(_MD_HTML)
    return _MD_AUTOLINK.sub(lambda m: m.group(1).replace("/", "\\/").replace(".", "\\."), text)


def http_url(value: str) -> str | None:
    """`value` when it is an http(s) address with a host that parses, else None."""
    if not value or any(c.isspace() or not c.isprintable() for c in value):
        return None
    try:
        parsed = urlsplit(value)
        parsed.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        return None
    return value if parsed.scheme.lower() in ("http", "https") and parsed.hostname else None


def _md_link(text: str, url: str) -> str:
    """A Markdown link to an http(s) address, its destination percent-encoded so that nothing in it (a ')', a
    '|', a '<') ends the link or the cell; another address is plain text."""
    if http_url(url) is None:
        return _md(text)
    return f"[{_md(text)}]({quote(url, safe=_URL_SAFE)})"


def rows_markdown(rows: list[RowView], *, title: str = "", history_head: str = "") -> str:
    """MLE-bench README's table: agent, LLM(s), the four tiers as mean ± SEM, running time, date, and the
    portal's own columns (seeds, verified, source); footnotes as [^n] below the table. The title and the head
    of the board's history go into a comment above the table."""
    header = [
        "Agent",
        "LLM(s) used",
        *MD_TIER_HEADERS.values(),
        "Running Time (hours)",
        "Seeds",
        "Date",
        "Verified",
        "Evidence",
        "Source Code Available",
    ]
    said = [text for text in (title, f"board history head {history_head}" if history_head else "") if text]
    lines = [f"<!-- {'; '.join(said)} -->"] if said else []
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    notes: dict[str, int] = {}
    for row in rows:
        marks = "".join(f"[^{notes.setdefault(note, len(notes) + 1)}]" for note in row.footnotes)
        cells = []
        for tier in TIERS:
            cell = row.cells.get(tier)
            cells.append("" if cell is None else cell.text + (" (padded)" if cell.padded else ""))
        source = (
            _md_link("Yes", row.source_url)
            if row.open_source and row.source_url
            else ("Yes" if row.open_source else "No")
        )
        runtime = "" if row.runtime_hours is None else f"{row.runtime_hours:g}"
        values = [
            _md(row.agent) + marks,
            _md(", ".join(row.llms)),
            *cells,
            runtime,
            str(row.seeds),
            _md(row.date),
            _md(row.verified_label),
            _md(row.level),
            source,
        ]
        lines.append("| " + " | ".join(values) + " |")
    # The legend of the Evidence column, between the table and its footnotes.
    lines += ["", "Evidence levels, strongest first:", ""]
    lines += [f"- **{level}**: {meaning}" for level, meaning in LEGEND]
    if notes:
        lines.append("")
        lines.extend(f"[^{number}]: {_md(note)}" for note, number in notes.items())
    return "\n".join(lines) + "\n"
