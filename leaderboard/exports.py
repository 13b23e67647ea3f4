"""A board's rows as CSV, JSON and the Markdown table of MLE-bench's README (so its README can be generated
from the portal). Plain functions over the row dicts of leaderboard/selectors.py."""

import csv
import io
import json

from grading.engine.tiers import TIERS

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
)
MD_TIER_HEADERS = {"low": "Low == Lite (%)", "medium": "Medium (%)", "high": "High (%)", "all": "All (%)"}


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def rows_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        values = {
            **{
                k: row.get(k)
                for k in (
                    "rank",
                    "rank_low",
                    "rank_high",
                    "agent",
                    "agent_version",
                    "team",
                    "board",
                    "verified",
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
            "llms": "; ".join(row["llms"]),
            "hardware": row["hardware_text"],
            "internet_access": _yes_no(row["internet_access"]),
            "open_source": _yes_no(row["open_source"]),
            "footnotes": " | ".join(row["footnotes"]),
        }
        for tier in TIERS:
            cell = row["cells"].get(tier)
            values.update(
                {
                    f"{tier}_mean": f"{cell['mean']:.4f}" if cell else "",
                    f"{tier}_sem": f"{cell['sem']:.4f}" if cell else "",
                    f"{tier}_seeds": cell["seeds"] if cell else "",
                    f"{tier}_padded": _yes_no(cell["padded"]) if cell else "",
                }
            )
        writer.writerow(["" if values[c] is None else values[c] for c in CSV_COLUMNS])
    return out.getvalue()


def rows_json(rows: list[dict], *, meta: dict) -> str:
    return json.dumps({**meta, "rows": [api_row(row) for row in rows]}, indent=1, allow_nan=False)


def api_row(row: dict) -> dict:
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
        "comparable",
        "board",
        "rank",
        "rank_low",
        "rank_high",
        "tied_with",
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
    return {key: row[key] for key in keys}


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def rows_markdown(rows: list[dict], *, title: str = "") -> str:
    """MLE-bench README's table: agent, LLM(s), the four tiers as mean ± SEM, running time, date, and the
    portal's own columns (seeds, verified, source); footnotes as [^n] below the table."""
    header = [
        "Agent",
        "LLM(s) used",
        *MD_TIER_HEADERS.values(),
        "Running Time (hours)",
        "Seeds",
        "Date",
        "Verified",
        "Source Code Available",
    ]
    lines = [f"<!-- {title} -->"] if title else []
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    notes: dict[str, int] = {}
    for row in rows:
        marks = "".join(f"[^{notes.setdefault(note, len(notes) + 1)}]" for note in row["footnotes"])
        cells = []
        for tier in TIERS:
            cell = row["cells"].get(tier)
            cells.append("" if cell is None else cell["text"] + (" (padded)" if cell["padded"] else ""))
        source = (
            f"[Yes]({row['source_url']})"
            if row["open_source"] and row["source_url"]
            else ("Yes" if row["open_source"] else "No")
        )
        runtime = "" if row["runtime_hours"] is None else f"{row['runtime_hours']:g}"
        values = [
            _md(row["agent"]) + marks,
            _md(", ".join(row["llms"])),
            *cells,
            runtime,
            str(row["seeds"]),
            row["date"],
            _md(row["verified_label"]),
            source,
        ]
        lines.append("| " + " | ".join(values) + " |")
    if notes:
        lines.append("")
        lines.extend(f"[^{number}]: {_md(note)}" for note, number in notes.items())
    return "\n".join(lines) + "\n"
