"""The board's evidence-level filter in a real browser (issue 31): entries at all four levels, a minimum level
chosen in the filters, the URL keeping it across a reload, a badge on every row. The portal's CSP allows no eval,
so every wait is a locator's (expect), never page.wait_for_function."""

import re

import pytest
from django.utils import timezone

from grading.models import Audit, Registration, Submission
from leaderboard import services
from tests.leaderboard.builders import entry, split_members

AGENT_LEVELS = {"Hosted": "verified", "Audited": "audited", "Registered": "registered", "Uploaded": "reported"}
ROWS = "#board tbody tr"


def _registered(team, agent: str, nonce: str) -> Submission:
    """A published upload naming a registration of its team (no flag: every log held the nonce)."""
    low = split_members("low")
    submission = entry(team, agent=agent, medals={s: low[:3] for s in range(3)}, refresh=False)
    registration = Registration.objects.create(
        team=team, agent_name=agent, agent_version="1", split="low", seeds=3, nonce=nonce, deadline=timezone.now()
    )
    Submission.objects.filter(pk=submission.pk).update(registration=registration)
    return submission


def _rows(page) -> dict[str, str]:
    """Each row's agent and the level its badge names; every row must have exactly one visible badge."""
    from playwright.sync_api import expect

    out = {}
    for row in page.locator(ROWS).all():
        badge = row.locator("td.col-verified .badge.level")
        expect(badge).to_have_count(1)
        expect(badge).to_be_visible()
        level = badge.get_attribute("data-level") or ""
        expect(badge).to_contain_text(level)  # the badge says its level, not only in an attribute
        out[row.locator("td.col-agent > a").inner_text()] = level
    return out


def _choose(page, level: str) -> None:
    """Pick the minimum level in the (folded) filters and apply them, as a visitor does."""
    from playwright.sync_api import expect

    if not page.locator("#level-filter").is_visible():
        page.click("#filters-menu summary")
    expect(page.locator("#level-filter")).to_be_visible()
    page.select_option("#level-filter", level)
    page.click("#filters button[type=submit]")


@pytest.mark.browser
def test_choosing_a_minimum_level_changes_the_rows_the_url_keeps_it_across_a_reload(page, transactional_db, team):
    from playwright.sync_api import expect

    low = split_members("low")
    entry(team, agent="Hosted", origin=Submission.Origin.HOSTED, medals={s: low[:2] for s in range(3)})
    audited = _registered(team, "Audited", "a" * 32)
    Audit.objects.create(submission=audited, head_seq=1, head_hash="0" * 64, seed="1" * 64, status=Audit.Status.PASSED)
    registered = _registered(team, "Registered", "b" * 32)
    services.board_refresh(submission_ids=[audited.pk, registered.pk])
    entry(team, agent="Uploaded", medals={s: low[:4] for s in range(3)})

    # By default every level is shown, each row with its badge.
    page.goto("/leaderboard/")
    expect(page.locator(ROWS)).to_have_count(4)
    assert _rows(page) == AGENT_LEVELS
    assert page.locator("#level-filter").input_value() == ""
    options = page.locator("#level-filter option").evaluate_all("els => els.map(e => e.value)")
    assert options == ["", "reported", "registered", "audited", "verified"]

    # Each minimum keeps that level and every stronger one; the URL holds it, a reload keeps it.
    for level, agents in (
        ("verified", {"Hosted"}),
        ("registered", {"Hosted", "Audited", "Registered"}),
        ("audited", {"Hosted", "Audited"}),
        ("reported", set(AGENT_LEVELS)),
    ):
        _choose(page, level)
        page.wait_for_url(re.compile(rf".*[?&]level={level}(&|$).*"))
        expect(page.locator(ROWS)).to_have_count(len(agents))
        assert _rows(page) == {agent: AGENT_LEVELS[agent] for agent in agents}, level
        page.reload()
        assert re.search(rf"[?&]level={level}(&|$)", page.url), page.url
        expect(page.locator("#level-filter")).to_have_value(level)
        expect(page.locator(ROWS)).to_have_count(len(agents))
        assert _rows(page) == {agent: AGENT_LEVELS[agent] for agent in agents}, level

    # The level keeps company with the other state in the URL: a tab switch keeps it.
    _choose(page, "registered")
    page.wait_for_url(re.compile(r".*level=registered.*"))
    page.click("#board-tabs a[data-board=all]")
    page.wait_for_url(re.compile(r".*board=all.*"))
    assert "level=registered" in page.url
    expect(page.locator(ROWS)).to_have_count(3)
    expect(page.locator("#level-filter")).to_have_value("registered")

    # Back to any level: every row again.
    _choose(page, "")
    page.wait_for_url(lambda url: "level=registered" not in url)
    expect(page.locator(ROWS)).to_have_count(4)


@pytest.mark.browser
def test_a_made_up_level_in_the_url_says_so_and_shows_the_default_board(page, transactional_db, team):
    from playwright.sync_api import expect

    low = split_members("low")
    entry(team, agent="Uploaded", medals={s: low[:4] for s in range(3)})
    _registered(team, "Registered", "c" * 32)
    services.board_refresh(submission_ids=list(Submission.objects.values_list("pk", flat=True)))

    response = page.goto("/leaderboard/?level=gold%3Cscript%3E")
    assert response is not None and response.status == 400
    expect(page.locator("#board-problem")).to_contain_text("level must be one of")
    expect(page.locator("#board-problem")).to_contain_text("showing the default board instead")
    assert page.locator("#board-problem script").count() == 0  # shown as text
    expect(page.locator("#level-filter")).to_have_value("")
    expect(page.locator(ROWS)).to_have_count(2)
    assert _rows(page) == {"Uploaded": "reported", "Registered": "registered"}
