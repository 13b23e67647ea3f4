"""CSV, JSON and Markdown downloads of any view of the board."""

import csv
import io
import json

import pytest

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
