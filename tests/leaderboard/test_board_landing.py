"""The first page a visitor sees: every published entry on the landing view (a column per tier, "—" where a tier
was not run), an empty state that says where the entries are, one footnote per distinct reason, numbers and
words a person reads, and the competition page's scores."""

import re

import pytest

from grading.checks.comparability import FlagState, comparability
from grading.engine.tiers import TIERS
from grading.models import Flag, Submission
from leaderboard import plots, services
from leaderboard.models import Entry
from leaderboard.templatetags.board_format import duration, score
from tests.leaderboard.builders import entry, split_members
from tests.leaderboard.test_board_page import agents

pytestmark = pytest.mark.django_db


def test_an_entry_measured_on_lite_only_is_on_the_landing_view_and_in_the_api_default(client, team):
    low = split_members("low")
    entry(team, agent="LiteOnly", medals={s: low[:3] for s in range(3)})
    html = client.get("/leaderboard/").content.decode()
    assert agents(html) == ["LiteOnly"]
    row = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    for tier in ("medium", "high", "all"):  # the tiers it did not run read "—"
        assert re.search(rf'<td class="col-{tier} figure">\s*<span class="muted" title="not run">—</span>', row)
    assert re.search(r'<td class="col-low figure headline">13\.6 ± 0\.0', row)
    body = client.get("/api/v1/leaderboard/").json()
    assert body["tier"] == "overview" and body["count"] == 1
    assert body["rows"][0]["agent"] == "LiteOnly" and body["rows"][0]["tier"] == "low"
    assert body["rows"][0]["rank"] == 1
    # The All tab still lists only the entries measured on All, in the API as on the page.
    assert client.get("/api/v1/leaderboard/?board=comparable&tier=all").json()["count"] == 0


def test_the_landing_view_orders_by_all_then_by_the_tiers_an_entry_has(client, team):
    low = split_members("low")
    entry(team, agent="LowStrong", medals={s: low[:8] for s in range(3)})
    entry(team, agent="EverythingWeak", split="split75", medals={s: low[:1] for s in range(3)})
    entry(team, agent="EverythingStrong", split="split75", medals={s: low[:5] for s in range(3)})
    entry(team, agent="MediumOnly", split="medium")
    entry(team, agent="LowWeak", medals={s: low[:2] for s in range(3)})
    html = client.get("/leaderboard/").content.decode()
    assert agents(html) == ["EverythingStrong", "EverythingWeak", "LowStrong", "LowWeak", "MediumOnly"]
    # A row without All says which tier its rank is in; the API names it.
    assert html.count('<span class="badge tier"') == 3
    rows = client.get("/api/v1/leaderboard/").json()["rows"]
    assert [(r["agent"], r["tier"], r["rank"]) for r in rows] == [
        ("EverythingStrong", "all", 1),
        ("EverythingWeak", "all", 2),
        ("LowStrong", "low", 1),
        ("LowWeak", "low", 3),
        ("MediumOnly", "medium", 1),
    ]
    # The tier tabs are still there, each ranked by its own figure.
    assert agents(client.get("/leaderboard/?tier=low").content.decode()) == [
        "LowStrong",
        "EverythingStrong",
        "LowWeak",
        "EverythingWeak",
    ]


def test_an_empty_board_says_where_the_entries_are(client, team):
    entry(team, agent="Elsewhere", comparable=False)
    entry(team, agent="Other", comparable=False)
    html = client.get("/leaderboard/").content.decode()
    empty = html.split('id="board-empty">', 1)[1].split("</p>", 1)[0]
    assert empty.startswith("No entries on the comparable board yet; ")
    assert '<a href="?board=non_comparable">2 on the non-comparable board</a>' in empty
    html = client.get("/leaderboard/?tier=all").content.decode()
    empty = html.split('id="board-empty">', 1)[1].split("</p>", 1)[0]
    assert "No entries on the comparable board's All tab yet" in empty
    assert "2 on the non-comparable board</a>" not in empty  # that board has no All entry either
    assert "2 on the non-comparable board&#x27;s Every tier tab</a>" in empty


def test_board_words_read_as_english(client, team):
    entry(team, agent="Worded", comparable=False, manifest={"runtime_hours": 0.000354})
    every = client.get("/leaderboard/?board=all").content.decode()
    assert "1 entry on every board, Every tier tab" in every and "the all board" not in every
    other = client.get("/leaderboard/?board=non_comparable").content.decode()
    assert "on the non-comparable board" in other and "noncomparable" not in other
    assert ">1.3 s</td>" in other and "0.000354</td>" not in other
    footer = other.split('<footer class="site-footer">', 1)[1]
    assert "self-reported" in footer and "imported from MLE-bench" in footer
    assert "Every number on this portal is re-graded" not in footer


@pytest.mark.parametrize(
    "hours, shown",
    [
        (0.000354, "1.3 s"),
        (0.0117, "42 s"),
        (0.7, "42 min"),
        (3.1, "3.1 h"),
        (23.5, "23.5 h"),
        (24, "24 h"),
        (150, "6.2 days"),
    ],
)
def test_runtimes_read_as_durations(hours, shown):
    assert duration(hours) == shown


def test_scores_keep_four_significant_digits():
    assert [score(v) for v in (0.873456, 1234.0, None, 12.5)] == ["0.8735", "1234", "—", "12.5"]


def test_the_competition_page_shows_each_seeds_score_and_medal_in_words(client, team):
    low = split_members("low")
    entry(team, agent="Scored", medals={0: low[:1]})
    html = client.get(f"/leaderboard/competitions/{low[0]}/").content.decode()
    cells = re.findall(r'<span class="cell (\w+)"[^>]*data-seed="\d">([^<]*)<span class="medal-word">\(([^)]*)\)', html)
    assert cells == [("gold", "0.5 ", "gold"), ("valid", "0.5 ", "no medal"), ("valid", "0.5 ", "no medal")]


def _non_comparable_by_one_decision(team, agent: str, reason: str) -> Submission:
    """An All entry whose three blocking flags a maintainer marked non-comparable in one decision, with the
    verdict SPEC §4's rule gives it (the reason then stands for the entry, each flag and each tier)."""
    submission = entry(team, agent=agent, split="split75", comparable=False, refresh=False)
    flags = [
        Flag.objects.create(
            submission=submission,
            code=code,
            severity="blocking",
            key=key,
            message=f"{code} found",
            decision="non_comparable",
            resolution=reason,
        )
        for code, key in (("score_mismatch", "a"), ("test_set_feedback", "b"), ("score_mismatch", "c"))
    ]
    verdict = comparability(
        regraded_from_submissions=True,
        complete_seeds=dict.fromkeys(TIERS, 3),
        flags=[
            FlagState(code=f.code, key=f.key, severity=f.severity, decision=f.decision, reason=f.resolution)
            for f in flags
        ],
        review_decision="non_comparable",
        review_reason=reason,
    )
    Submission.objects.filter(pk=submission.pk).update(
        comparability=verdict.as_dict(), review_decision="non_comparable", review_reason=reason
    )
    services.board_refresh(submission_ids=[submission.pk])
    return submission


def test_one_decision_on_several_flags_is_one_footnote_shared_across_rows(client, team):
    first = _non_comparable_by_one_decision(team, "First", "tuned on the test set")
    _non_comparable_by_one_decision(team, "Second", "tuned on the test set")
    notes = Entry.objects.get(submission=first).footnotes
    assert notes == [
        "Non-comparable: tuned on the test set (a maintainer marked non-comparable 3 flags "
        "(score_mismatch, test_set_feedback))."
    ]
    html = client.get("/leaderboard/?board=non_comparable").content.decode()
    listed = html.split('id="footnotes"', 1)[1].split("</ol>", 1)[0]
    assert listed.count("<li") == 1  # one footnote, shared by both rows
    table = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    assert table.count('href="#note-1"') == 2 and "#note-2" not in table


def test_a_row_shows_a_few_footnote_marks_and_the_rest_is_one_click_away(client, team):
    submission = entry(team, agent="Noted", comparable=False, refresh=False)
    for index, code in enumerate(("test_set_feedback", "benchmark_version", "rule_violation", "runtime_over_budget")):
        Flag.objects.create(submission=submission, code=code, severity="warning", key=str(index), message=f"{code}.")
    services.board_refresh(submission_ids=[submission.pk])
    board_entry = Entry.objects.get(submission=submission)
    assert len(board_entry.footnotes) == 5  # the verdict's reason and one a check
    html = client.get("/leaderboard/?board=non_comparable").content.decode()
    table = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'href="#note-(\d)"', table) == ["1", "2", "3"]
    assert f'href="/leaderboard/entries/{board_entry.pk}/#notes" class="more-notes"' in table and ">+2</a>" in table
    assert 'title="Non-comparable: a test reason."' in table  # a mark's line on hover
    page = client.get(f"/leaderboard/entries/{board_entry.pk}/").content.decode()
    assert 'id="notes"' in page and page.count("<li>Rule violation: rule_violation.</li>") == 1


def test_the_time_axis_of_entries_on_one_date_is_dates_and_an_empty_one_has_no_axis():
    points = [
        {"agent": name, "date": "2026-12-02", "mean": 10.0, "sem": 1.0, "comparable": True} for name in ("a", "b")
    ]
    axis = plots.over_time(points, tab="All")["layout"]["xaxis"]
    assert axis["range"] == ["2026-11-17", "2026-12-17"] and axis["tickformat"] == "%Y-%m-%d"
    empty = plots.over_time([], tab="All")
    assert empty["data"] == [] and empty["layout"]["xaxis"]["visible"] is False
    assert "No entries" in empty["layout"]["annotations"][0]["text"]


def test_the_heatmap_leaves_room_for_the_longest_competition_name():
    name = "jigsaw-toxic-comment-classification-challenge"
    layout = plots.medal_heatmap(competitions=[name, "spam"], entries=["A #1"], frequency=[[0.5], [None]])["layout"]
    assert layout["margin"]["l"] >= 7 * len(name) and layout["yaxis"]["automargin"] is True


def test_the_hosted_run_form_labels_read_as_words():
    from runners.forms import HostedRunForm
    from runners.services.fit import Offer

    form = HostedRunForm(teams=Submission.objects.none(), offer=Offer(workers=[]))
    assert form.fields["gpus_per_run"].label == "GPUs per run" and form.fields["llms"].label == "LLMs"


def test_the_landing_views_heatmap_lists_the_competitions_of_the_tiers_its_rows_ran(team):
    from leaderboard import selectors

    entry(team, agent="LiteOnly")
    page = selectors.board_page(selectors.BoardQuery())
    heat = selectors.medal_frequency(rows=page.rows, tier="overview", excluding_leaky=False)
    assert heat["competitions"] == sorted(split_members("low"))  # not every competition of All
