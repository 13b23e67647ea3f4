"""The board as a visitor's screen shows it, measured in a real browser: the width used at 1600 px, header and
agent column kept in view while scrolling, rank and its interval on one line, a column chooser that is
remembered, and at 1366×768 at least eight rows above the fold. Screenshots go to var/screenshots/."""

from pathlib import Path
from typing import Any

import pytest

from grading.models import Flag
from leaderboard import services
from tests.leaderboard.builders import entry, split_members
from tests.leaderboard.test_board_landing import _non_comparable_by_one_decision

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
WIDE: dict[str, Any] = {
    "llms": ["gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022"],
    "hardware": {"gpus": [{"model": "H100", "memory_gb": 80, "count": 8}], "vcpus": 192, "ram_gb": 2048},
    "runtime_hours": 23.5,
    "agent": {"name": "placeholder", "version": "2.1.0", "open_source": True, "source_url": "https://example.org/a"},
}


def _board(team, count: int = 14) -> None:
    low = split_members("low")
    for index in range(count):
        manifest = {**WIDE, "agent": {**WIDE["agent"], "name": f"Agent number {index}"}}
        entry(
            team,
            agent=f"Agent number {index}",
            split="split75" if index % 2 else "low",
            # Pairs with the same medals, so that ties show; one in four non-comparable.
            medals={s: low[: 1 + (index // 2) % 11] for s in range(3)},
            comparable=index % 4 != 3,
            manifest=manifest,
        )


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name))


@pytest.mark.browser
def test_at_1600_px_the_board_uses_the_width_without_a_sideways_scroll_and_ranks_fit_one_line(
    page, transactional_db, team
):
    _board(team)
    # Entries with footnotes: one decision on three flags (one note), and five distinct reasons (three marks, +2).
    _non_comparable_by_one_decision(team, "Decided twice", "tuned on the test set")
    noted = entry(team, agent="Noted five times", comparable=False, refresh=False)
    for index, code in enumerate(("test_set_feedback", "benchmark_version", "rule_violation", "runtime_over_budget")):
        Flag.objects.create(submission=noted, code=code, severity="warning", key=str(index), message=f"{code}.")
    services.board_refresh(submission_ids=[noted.pk])
    page.set_viewport_size({"width": 1600, "height": 900})
    page.goto("/leaderboard/?board=all")
    _shot(page, "board-1600x900.png")
    page.locator("#footnotes").scroll_into_view_if_needed()
    _shot(page, "board-1600x900-footnotes.png")
    assert page.locator("#footnotes li").count() == 6
    table = page.locator("#board").bounding_box()
    assert table and table["width"] >= 1500, table
    wrap = page.evaluate(
        "(() => { const w = document.getElementById('board-wrap'); return [w.scrollWidth, w.clientWidth]; })()"
    )
    assert wrap[0] <= wrap[1] + 1, wrap  # every column in view: nothing to scroll sideways
    assert page.locator("th.col-verified").bounding_box()["x"] + 10 < 1600
    heights = page.evaluate(
        "[...document.querySelectorAll('#board tbody td.col-rank')].map(td => td.getBoundingClientRect().height)"
    )
    assert heights and max(heights) <= 40, heights  # rank, interval and tie mark on one line
    assert page.locator("#board tbody .tie").count() >= 2


@pytest.mark.browser
def test_at_1366_by_768_eight_rows_show_and_header_and_agent_stay_in_view(page, transactional_db, team):
    _board(team)
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto("/leaderboard/?board=all")
    _shot(page, "board-1366x768.png")
    bottoms = page.evaluate(
        "[...document.querySelectorAll('#board tbody tr')].map(tr => tr.getBoundingClientRect().bottom)"
    )
    assert sum(bottom <= 768 for bottom in bottoms) >= 8, bottoms

    # On a short window the table scrolls in its box: scrolled down, the header row is still at the box's top.
    page.set_viewport_size({"width": 1366, "height": 360})
    page.evaluate("document.getElementById('board-wrap').scrollIntoView()")
    scrolled = page.evaluate(
        "(() => { const w = document.getElementById('board-wrap'); w.scrollTop = 150; return w.scrollTop; })()"
    )
    assert scrolled >= 100
    wrap = page.locator("#board-wrap").bounding_box()
    header = page.locator("#board thead th.col-agent").bounding_box()
    assert abs(header["y"] - wrap["y"]) <= 2, (header, wrap)
    first_row = page.locator("#board tbody tr >> nth=0").bounding_box()
    assert first_row["y"] < wrap["y"]  # the rows went up under it
    _shot(page, "board-1366x360-scrolled.png")

    # Narrower, the table scrolls sideways, and the rank and agent columns stay where they were.
    page.set_viewport_size({"width": 900, "height": 768})
    page.evaluate("document.getElementById('board-wrap').scrollLeft = 0")
    before = page.locator("#board tbody tr >> nth=0").locator("td.col-agent").bounding_box()
    scrolled = page.evaluate(
        "(() => { const w = document.getElementById('board-wrap'); w.scrollLeft = 500; return w.scrollLeft; })()"
    )
    assert scrolled > 100
    after = page.locator("#board tbody tr >> nth=0").locator("td.col-agent").bounding_box()
    assert abs(after["x"] - before["x"]) <= 2, (before, after)
    _shot(page, "board-900-scrolled-sideways.png")


@pytest.mark.browser
def test_a_visitor_chooses_columns_and_the_choice_is_remembered(page, transactional_db, team):
    _board(team, count=2)
    page.goto("/leaderboard/")
    assert page.locator("th.col-hardware").is_visible()
    page.click("#column-chooser summary")
    page.uncheck("#column-chooser input[data-col=hardware]")
    page.uncheck("#column-chooser input[data-col=benchmark]")
    assert (
        not page.locator("th.col-hardware").is_visible() and not page.locator("td.col-benchmark >> nth=0").is_visible()
    )
    page.reload()
    assert not page.locator("th.col-hardware").is_visible()  # remembered in this browser
    assert "2 hidden" in page.locator("#column-chooser summary").inner_text()
    page.click("#column-chooser summary")
    page.click("#columns-reset")
    assert page.locator("th.col-hardware").is_visible() and page.locator("th.col-benchmark").is_visible()


@pytest.mark.browser
def test_the_plots_tick_dates_show_whole_competition_names_and_an_empty_board_has_no_axis(page, transactional_db, team):
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto("/leaderboard/")
    assert page.locator("#over-time-empty").is_visible() and page.locator("#plot-over-time").count() == 0
    assert "2000" not in page.locator("main").inner_text()
    _shot(page, "board-empty-1366x768.png")

    _board(team, count=3)  # every entry made today: one date
    page.goto("/leaderboard/?tier=low&board=all")
    page.wait_for_selector("#plot-over-time[data-drawn=true]")
    page.wait_for_selector("#plot-heatmap[data-drawn=true]")
    ticks = page.locator("#plot-over-time .xtick text").all_text_contents()
    assert ticks and not [tick for tick in ticks if ":" in tick or "." in tick], ticks  # dates, not times of day
    names = page.locator("#plot-heatmap .ytick text").all_text_contents()
    assert sorted(names) == sorted(split_members("low")), names  # whole names, none cut
    plot_box = page.locator("#plot-heatmap").bounding_box()
    for label in page.locator("#plot-heatmap .ytick text").all():
        box = label.bounding_box()
        assert box and box["x"] >= plot_box["x"] - 1, (label.text_content(), box, plot_box)
    page.locator("#plot-heatmap").scroll_into_view_if_needed()
    page.locator("#plot-heatmap").screenshot(path=str(SCREENSHOTS / "board-heatmap.png"))
    page.locator("#plot-over-time").screenshot(path=str(SCREENSHOTS / "board-over-time.png"))


@pytest.mark.browser
def test_the_competition_page_shows_scores_with_the_medal_in_words(page, transactional_db, team):
    low = split_members("low")
    entry(team, agent="Scored", medals={0: low[:1], 1: low[:1]})
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"/leaderboard/competitions/{low[0]}/")
    cells = page.locator("#competition-results .seed-scores .cell").all_inner_texts()
    assert cells == ["0.5 (gold)", "0.5 (gold)", "0.5 (no medal)"], cells
    _shot(page, "competition-page.png")
