"""The headers a security scanner expects, on pages, API answers and error pages; no inline script in any template.

The browser side (every page kind loads in Chromium with no CSP violation) is tests/portal/test_browser_csp.py.
"""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _csp(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


@pytest.mark.parametrize("path", ["/", "/leaderboard/", "/accounts/login/", "/api/docs/", "/no/such/page/", "/admin/"])
def test_every_answer_carries_the_policy_and_the_other_headers(client, db, path):
    response = client.get(path, follow=path == "/admin/")
    policy = _csp(response)
    assert policy["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no other origin
    assert policy["default-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"] and response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "camera=()" in response["Permissions-Policy"] and "geolocation=()" in response["Permissions-Policy"]
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response  # plain HTTP: no HSTS


def test_api_answers_carry_them_too(client, db):
    response = client.get("/api/v1/me/")
    assert response.status_code in (401, 403)
    assert "script-src 'self'" in response["Content-Security-Policy"] and response["X-Frame-Options"] == "DENY"


def test_hsts_is_sent_only_over_tls_as_the_proxy_reports_it(client, db, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31536000
    assert "Strict-Transport-Security" not in client.get("/leaderboard/")
    secure = client.get("/leaderboard/", HTTP_X_FORWARDED_PROTO="https")
    assert secure["Strict-Transport-Security"] == "max-age=31536000"


def test_the_api_docs_load_their_start_up_script_as_a_file(client, db):
    page = client.get("/api/docs/").content.decode()
    assert re.search(r'<script src="/api/docs/\?script="', page)
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)
HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)


def test_no_template_has_an_inline_script_or_an_event_handler_attribute():
    found = []
    for template in sorted((REPO / "templates").rglob("*.html")) + sorted(REPO.glob("*/templates/**/*.html")):
        text = template.read_text()
        for pattern in (INLINE_SCRIPT, HANDLER):
            found += [f"{template.relative_to(REPO)}: {m.group(0)[:80]}" for m in pattern.finditer(text)]
        found += [f"{template.relative_to(REPO)}: javascript: URL" for _ in re.finditer(r"javascript:", text)]
    assert not found, "scripts go in static/js files (the CSP refuses inline ones):\n" + "\n".join(found)
