"""The board page: comparable and non-comparable boards, tier tabs, sort and filters kept in the URL, ranks
with intervals and ties, footnotes, plots with their tables, and bad parameters answered clearly."""

import json
import re
from html import unescape

import pytest

from leaderboard.models import Entry
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db


def agents(html: str) -> list[str]:
    if 'id="board"' not in html:
        return []
    body = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<a href="/leaderboard/entries/\d+/">([^<]+)</a>', body)


@pytest.fixture
def board(team):
    low = split_members("low")
    return {
        "strong": entry(team, agent="Strong", medals={s: low[:6] for s in range(3)}),
        "weak": entry(
            team,
            agent="Weak",
            medals={s: low[:1] for s in range(3)},
            manifest={"llms": ["claude-3.5"], "runtime_hours": 10, "agent": {"name": "Weak"}},
        ),
        "flagged": entry(team, agent="Flagged", medals={s: low[:9] for s in range(3)}, comparable=False),
        "everything": entry(team, agent="Everything", split="split75", medals={s: low[:3] for s in range(3)}),
    }


def test_the_comparable_board_ranks_its_entries_and_leaves_the_others_to_the_non_comparable_one(client, board):
    html = client.get("/leaderboard/?tier=low").content.decode()
    assert agents(html) == ["Strong", "Everything", "Weak"]
    assert 'title="95% interval of the rank: 1–1 (bootstrap over seeds)">1</strong>' in html
    assert "Flagged" not in html.split('id="board"', 1)[1].split("</table>")[0]
    other = client.get("/leaderboard/?board=non_comparable&tier=low").content.decode()
    assert agents(other) == ["Flagged"]
    assert "Non-comparable: a test reason." in other and 'id="note-1"' in other
    everyone = client.get("/leaderboard/?board=all&tier=low").content.decode()
    assert agents(everyone) == ["Flagged", "Strong", "Everything", "Weak"]


def test_a_tier_tab_lists_only_entries_with_that_tier(client, board):
    assert agents(client.get("/leaderboard/?tier=medium").content.decode()) == ["Everything"]
    assert agents(client.get("/leaderboard/?tier=all").content.decode()) == ["Everything"]


def test_sorting_and_filtering_live_in_the_url_and_links_keep_them(client, board):
    html = client.get("/leaderboard/?board=all&tier=low&sort=agent").content.decode()
    assert agents(html) == ["Everything", "Flagged", "Strong", "Weak"]
    html = client.get("/leaderboard/?board=all&tier=low&sort=-agent").content.decode()
    assert agents(html) == ["Weak", "Strong", "Flagged", "Everything"]
    html = client.get("/leaderboard/?board=all&tier=low&llm=claude").content.decode()
    assert agents(html) == ["Weak"]
    html = client.get("/leaderboard/?board=all&tier=low&runtime_max=12").content.decode()
    assert agents(html) == ["Weak"]
    html = client.get("/leaderboard/?board=all&tier=low&verified=self_reported").content.decode()
    assert agents(html) == [] and 'id="board-empty"' in html
    # The tier tabs keep the filter; the export links carry it.
    html = client.get("/leaderboard/?board=all&tier=low&llm=claude").content.decode()
    assert 'href="?board=all&amp;tier=medium&amp;llm=claude"' in html
    assert "/leaderboard/export.csv?board=all&amp;tier=low&amp;llm=claude&amp;page_size=1000" in html


def test_statistically_tied_entries_are_named(client, team):
    low = split_members("low")
    entry(team, agent="One", medals={0: low[:2], 1: low[:6], 2: low[:4]})
    entry(team, agent="Two", medals={0: low[:4], 1: low[:4], 2: low[:4]})
    html = client.get("/leaderboard/?tier=low").content.decode()
    assert html.count('title="statistically tied with #1"') == 2 and ">1–2</span>" in html and 'id="ties-note"' in html


def test_the_known_leaky_switch_changes_the_figures(client, team):
    from competitions.models import KnownIssue

    low = split_members("low")
    leaky = set(KnownIssue.objects.filter(kind="leak").values_list("competition_slug", flat=True)) & set(low)
    assert leaky, "the shipped known-issue list has a leaky competition in Low"
    entry(team, agent="Leaks", medals={s: sorted(leaky) for s in range(3)})
    with_leaks = client.get("/leaderboard/?tier=low").content.decode()
    without = client.get("/leaderboard/?tier=low&excluding_leaky=yes").content.decode()
    assert f"{len(leaky) / 22 * 100:.1f} ± 0.0" in with_leaks
    assert "0.0 ± 0.0" in without and "☑ excluding known-leaky competitions" in without


def test_plots_are_drawn_from_local_plotly_and_each_has_its_table(client, board):
    html = client.get(
        f"/leaderboard/?board=all&tier=low&compare={board['strong'].board_entry.pk}"
        f"&compare={board['weak'].board_entry.pk}"
    ).content.decode()
    assert '<script src="/static/vendor/plotly.min.js"' in html and "cdn" not in html.lower()
    for name in ("over-time", "tier-bars", "heatmap"):
        assert f'data-figure="{name}"' in html and f'id="table-{name}"' in html
    figures = html.split('<script id="figures" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert '"type": "heatmap"' in figures and '"type": "bar"' in figures and '"error_y"' in figures
    assert client.get("/static/vendor/plotly.min.js").status_code == 200


def test_a_padded_cell_is_marked(client, team):
    low = split_members("low")
    entry(team, agent="Gappy", comparable=False, missing=[(low[0], 1), (low[0], 2), (low[1], 0), (low[1], 2)])
    html = client.get("/leaderboard/?board=non_comparable&tier=low").content.decode()
    assert 'class="col-low figure padded"' in html and '<span class="badge warn">padded</span>' in html


@pytest.mark.parametrize(
    "query, says",
    [
        ("tier=lite", "tier must be one of overview, low, medium, high, all"),
        ("sort=score", "sort must be one of"),
        ("date_from=yesterday", "date_from must be a date as YYYY-MM-DD"),
        ("runtime_max=-1", "runtime_max must be a number of at least 0"),
        ("open_source=maybe", "open_source must be yes, no or any"),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it_and_shows_the_default_board(client, board, query, says):
    response = client.get(f"/leaderboard/?{query}")
    assert response.status_code == 400
    assert says in response.content.decode() and 'id="board"' in response.content.decode()


def test_an_empty_board_says_so(client, team):
    html = client.get("/leaderboard/").content.decode()
    assert "No entries on the comparable board yet." in html and Entry.objects.count() == 0
    assert 'id="over-time-empty"' in html and 'data-figure="over-time"' not in html  # no year-2000 axis
    assert 'id="column-chooser"' not in html and "Compare selected" not in html  # nothing to choose or compare


@pytest.mark.parametrize(
    "name, value", [("page", "9223372036854775807"), ("page", "9" * 400), ("page_size", "9" * 400), ("page", "-3")]
)
def test_an_odd_page_is_a_400_that_says_so_and_keeps_the_other_parameters(client, board, name, value):
    response = client.get("/leaderboard/", {"board": "all", "tier": "low", "sort": "agent", name: value})
    html = response.content.decode()
    assert response.status_code == 400
    assert f"{name} must be a whole number from 1 to" in html and "instead." in html
    assert agents(html) == ["Everything", "Flagged", "Strong", "Weak"]


def test_a_page_past_the_last_shows_the_last_one(client, board):
    response = client.get("/leaderboard/?board=all&tier=low&sort=agent&page_size=3&page=40")
    html = response.content.decode()
    assert response.status_code == 200 and agents(html) == ["Weak"]
    assert "There is no page 40: this view has 2 page(s). Showing the last one." in html
    assert 'rel="prev"' in html and 'rel="next"' not in html


@pytest.mark.parametrize("value", ["\u00b2", "9" * 400, "-1"])
def test_an_odd_compare_id_is_left_out(client, board, value):
    strong = board["strong"].board_entry.pk
    response = client.get("/leaderboard/", {"board": "all", "tier": "low", "compare": [value, strong]})
    assert response.status_code == 200 and 'id="table-tier-bars"' in response.content.decode()


HOSTILE_NAMES = ("x<!--<script>", '<a href="https://evil.example/">y</a>', "&amp;\u2028z")


def test_the_figures_json_cannot_end_its_script_element_and_plotly_gets_only_escaped_text(client, team):
    low = split_members("low")
    ids = [entry(team, agent=name, medals={s: low[:2] for s in range(3)}).board_entry.pk for name in HOSTILE_NAMES]
    html = client.get("/leaderboard/", {"tier": "low", "compare": ids}).content.decode()
    embedded = html.split('<script id="figures" type="application/json">', 1)[1]
    source, rest = embedded.split("</script>", 1)
    assert not set(source) & set("<>&\u2028\u2029")
    assert '<script src="/static/js/plots.js" defer></script>' in rest  # the page goes on after the figures
    figures = json.loads(source)
    over_time = figures["over-time"]["data"][0]["text"]
    names = [trace["name"] for trace in figures["tier-bars"]["data"]]
    ticks = figures["heatmap"]["data"][0]["x"]
    assert not any("<" in text or ">" in text for text in (*over_time, *names, *ticks))
    assert sorted(map(unescape, over_time)) == sorted(HOSTILE_NAMES)  # plotly decodes the entities it shows
    assert sorted(unescape(name).rsplit(" (#", 1)[0] for name in names) == sorted(HOSTILE_NAMES)
    assert sorted(unescape(tick).rsplit(" #", 1)[0] for tick in ticks) == sorted(HOSTILE_NAMES)


def test_a_stored_source_address_that_is_not_http_is_never_a_link(client, board):
    # Intake refuses such an address; a row stored before that rule, or by another path, is still not a link.
    from leaderboard.services import board_version_bump

    Entry.objects.filter(pk=board["strong"].board_entry.pk).update(source_url="javascript:alert(1)")
    board_version_bump()
    pages = [
        client.get("/leaderboard/?tier=low").content.decode(),
        client.get(f"/leaderboard/entries/{board['strong'].board_entry.pk}/").content.decode(),
    ]
    assert all('href="javascript:' not in html for html in pages)
    assert 'href="https://example.org/a"' in pages[0] and "javascript:alert(1)" in pages[1]  # shown as text
