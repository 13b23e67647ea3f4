import re

import pytest

from portal.accounts.keys import hash_key
from portal.accounts.models import ApiToken, Team


@pytest.mark.browser
def test_a_person_signs_up_creates_a_team_and_a_token_in_a_real_browser(page, transactional_db):
    page.goto("/")
    page.get_by_role("link", name="Sign up").click()
    page.fill("input[name=email]", "frank@example.org")
    page.fill("input[name=password1]", "a-Long-pass-phrase-9")
    page.fill("input[name=password2]", "a-Long-pass-phrase-9")
    page.locator("form button[type=submit]").last.click()

    page.wait_for_url(re.compile(r".*/team/$"))
    page.fill("#team-create input[name=name]", "Frank Labs")
    page.click("#team-create button[type=submit]")
    page.wait_for_url(re.compile(r".*/teams/\d+/$"))
    assert page.locator("#members").inner_text().count("frank@example.org") == 1

    page.get_by_role("link", name="Tokens").first.click()
    page.fill("#token-create input[name=name]", "laptop")
    page.click("#token-create button[type=submit]")
    key = page.locator("#new-token-key").inner_text().strip()
    assert key.startswith("mlep_")
    assert "laptop" in page.locator("#tokens").inner_text()

    token = ApiToken.objects.get()
    assert token.team == Team.objects.get(name="Frank Labs") and token.key_hash == hash_key(key)

    # A phone-sized screen still reaches the navigation through the menu toggle.
    page.set_viewport_size({"width": 375, "height": 740})
    page.reload()
    assert not page.get_by_role("link", name="Leaderboard").first.is_visible()
    page.click("label.nav-toggle-label")
    assert page.get_by_role("link", name="Leaderboard").first.is_visible()
