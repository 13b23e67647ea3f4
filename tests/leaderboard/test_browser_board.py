"""A visitor in a real browser: switches tiers, sorts, filters, opens an entry, sees its matrix and a plot."""

import re
from pathlib import Path

import pytest

from tests.leaderboard.builders import entry, split_members

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.mark.browser
def test_a_visitor_switches_tiers_sorts_filters_and_opens_an_entry(page, transactional_db, team):
    low = split_members("low")
    entry(team, agent="Alpha", split="split75", medals={s: low[:6] for s in range(3)})
    entry(team, agent="Beta", medals={s: low[:2] for s in range(3)}, manifest={"llms": ["claude-3.5"]})
    entry(team, agent="Gamma", medals={s: low[:4] for s in range(3)}, comparable=False)

    page.goto("/leaderboard/")
    assert page.locator("#board tbody tr").count() == 2  # every comparable entry, a column per tier
    page.click("#tier-tabs a[data-tier=all]")
    page.wait_for_url(re.compile(r".*tier=all.*"))
    assert page.locator("#board tbody tr").count() == 1  # the All tab: only the split75 entry
    page.click("#tier-tabs a[data-tier=low]")
    page.wait_for_url(re.compile(r".*tier=low.*"))
    assert page.locator("#board tbody tr").count() == 2
    page.click("#board-tabs a[data-board=all]")
    page.wait_for_url(re.compile(r".*board=all.*"))
    assert page.locator("#board tbody tr").count() == 3

    page.click("a[data-sort=agent]")
    page.wait_for_url(re.compile(r".*sort=agent.*"))
    names = page.locator("#board tbody tr td.col-agent > a").all_inner_texts()
    assert names == ["Alpha", "Beta", "Gamma"]

    page.click("#filters-menu summary")  # the filters fold away until asked for
    page.fill("#filters input[name=llm]", "claude")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r".*llm=claude.*"))
    assert page.locator("#board tbody tr td.col-agent > a").all_inner_texts() == ["Beta"]
    assert "sort=agent" in page.url and "tier=low" in page.url  # the state lives in the URL

    page.goto("/leaderboard/?tier=low")
    page.wait_for_selector("#plot-over-time[data-drawn=true]")  # plotly.js, from our static files, drew it
    assert page.locator("#plot-over-time .main-svg").count() >= 1

    page.click("#board tbody tr >> text=Alpha")
    page.wait_for_url(re.compile(r".*/leaderboard/entries/\d+/$"))
    assert page.locator("#entry-title").inner_text().startswith("Alpha")
    assert page.locator("#matrix td.cell.gold").count() == 18  # 6 competitions × 3 seeds
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / "leaderboard-entry.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


@pytest.mark.browser
def test_hostile_agent_names_neither_stop_the_plots_nor_become_links(page, transactional_db, team):
    low = split_members("low")
    names = ("x<!--<script>", '<a href="https://evil.example/">y</a>')
    ids = [
        entry(team, agent=name, medals={s: low[: 2 + i] for s in range(3)}).board_entry.pk
        for i, name in enumerate(names)
    ]
    page.goto(f"/leaderboard/?tier=low&compare={ids[0]}&compare={ids[1]}")
    for plot in ("over-time", "tier-bars", "heatmap"):
        page.wait_for_selector(f"#plot-{plot}[data-drawn=true]")
    assert page.locator("#plot-over-time .scatterlayer .trace").count() == 1
    assert page.locator("#plot-tier-bars .barlayer .trace").count() == 2
    assert page.locator("#plot-heatmap .hm").count() == 1
    legend = page.locator("#plot-tier-bars .legendtext").all_text_contents()
    assert sorted(text.rsplit(" (#", 1)[0] for text in legend) == sorted(names)  # shown literally
    ticks = page.locator("#plot-heatmap .xtick text").all_text_contents()
    assert sorted(text.rsplit(" #", 1)[0] for text in ticks) == sorted(names)
    page.hover("#plot-over-time .scatterlayer .point >> nth=0", force=True)  # plotly hovers from its drag layer
    hovered = page.locator("#plot-over-time .hoverlayer .hovertext").text_content() or ""
    assert any(name in hovered for name in names), hovered
    links = page.evaluate(
        "[...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')"
    )
    assert links and not [link for link in links if "evil.example" in link]
    assert page.locator("footer.site-footer").count() == 1  # the rest of the page is there
    assert sorted(page.locator("#board tbody tr td.col-agent > a").all_inner_texts()) == sorted(names)


@pytest.mark.browser
def test_a_visitor_filters_by_minimum_evidence_level_and_the_badges_show(page, transactional_db, team):
    from django.utils import timezone

    from grading.models import Registration, Submission
    from leaderboard import services

    low = split_members("low")
    entry(team, agent="Hosted", origin=Submission.Origin.HOSTED, medals={s: low[:2] for s in range(3)})
    registered = entry(team, agent="Registered", medals={s: low[:3] for s in range(3)}, refresh=False)
    registration = Registration.objects.create(
        team=team,
        agent_name="Registered",
        agent_version="1",
        split="low",
        seeds=3,
        nonce="b" * 32,
        deadline=timezone.now(),
    )
    Submission.objects.filter(pk=registered.pk).update(registration=registration)
    services.board_refresh(submission_ids=[registered.pk])
    entry(team, agent="Uploaded", medals={s: low[:4] for s in range(3)})

    page.goto("/leaderboard/")
    levels = page.locator("#board tbody td.col-verified .badge").evaluate_all("els => els.map(e => e.dataset.level)")
    assert sorted(levels) == ["registered", "reported", "verified"]  # every level by default, each with its badge
    page.click("#filters-menu summary")
    page.select_option("#level-filter", "registered")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r".*level=registered.*"))
    names = page.locator("#board tbody tr td.col-agent > a").all_inner_texts()
    assert sorted(names) == ["Hosted", "Registered"]
    page.reload()  # the filter lives in the URL
    assert page.locator("#level-filter").input_value() == "registered"
    assert page.locator("#board tbody tr").count() == 2
