"""Every page names an icon, and /favicon.ico (which browsers ask for on their own) is served, not a 404."""

import pytest


@pytest.mark.browser
def test_a_page_names_its_icon_and_every_icon_address_answers_an_image(page, transactional_db):
    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    page.goto("/leaderboard/")
    hrefs = page.eval_on_selector_all("link[rel=icon]", "links => links.map(link => link.href)")
    assert len(hrefs) == 2, hrefs
    for url in [*hrefs, "/favicon.ico"]:
        answer = page.request.get(url)
        assert answer.status == 200, url
        assert answer.headers["content-type"] in ("image/x-icon", "image/vnd.microsoft.icon", "image/svg+xml"), url
        assert len(answer.body()) > 100, url
    assert failed == []


def test_favicon_ico_is_the_static_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.ico")
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
