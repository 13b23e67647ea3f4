"""In Chromium: every kind of page loads under the Content-Security-Policy with no violation, and the plots and the
API docs still work; the login throttle's page, as a guesser and as the account's owner see it."""

import re
from typing import Any

import pytest

from portal.accounts.selectors import teams_for_user
from tests.conftest import persona
from tests.grading.builders import flagged_submission
from tests.leaderboard.builders import entry, split_members
from tests.runners.builders import hosted_body

# Registered before any of the page's own scripts run (Playwright's init scripts are not subject to the CSP).
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


def _log_in(page, email: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.locator("form button[type=submit]").last.click()


@pytest.fixture
def site(registry_with_packs, alice, settings) -> dict[str, Any]:
    """One of each thing a page shows: published entries with plots, a flagged submission, a hosted run."""
    from rest_framework.test import APIClient

    from portal.accounts import services
    from runners.models import HostedRun
    from runners.services.workers import Capacity, worker_register, worker_token_issue

    team = alice.teams.get()
    low = split_members("low")
    first = entry(team, agent="Alpha", medals={s: low[:4] for s in range(3)})
    second = entry(team, agent="Beta", medals={s: low[:2] for s in range(3)})
    flagged = flagged_submission(team, user=alice)
    worker, _ = worker_token_issue(name="gpu-box-1")
    capacity = Capacity(
        gpus=1,
        gpu_model="A10",
        gpu_memory_gb=24,
        cpus=8,
        memory_gb=64,
        slots=2,
        backend="process",
        version="",
        sandbox="bwrap",
    )
    worker_register(worker=worker, capacity=capacity)
    _, key = services.token_create(user=alice, team=team, name="tests")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    answer = api.post("/api/v1/hosted-runs/", hosted_body(), format="json")
    assert answer.status_code in (201, 202), answer.content
    from grading.models import Registration
    from grading.services.registrations import registration_create

    lapsed = registration_create(team=team, user=alice, agent_name="lapsed", agent_version="1", split="low", seeds=2)
    Registration.objects.filter(pk=lapsed.pk).update(deadline=lapsed.created_at)  # public: past its deadline
    maya = persona("maya", maintainer=True)
    maya.is_staff = maya.is_superuser = True
    maya.save()
    return {
        "team": team,
        "entries": [first.board_entry.pk, second.board_entry.pk],
        "flagged": flagged.pk,
        "run": HostedRun.objects.get().pk,
        "registrations": (lapsed.pk, HostedRun.objects.get().registration_id),
        "slug": low[0],
        "maya": maya,
    }


@pytest.mark.browser
def test_every_kind_of_page_loads_with_no_csp_violation_and_the_plots_draw(page, transactional_db, site):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.on("pageerror", lambda error: console.append(f"page error: {error}"))
    page.context.add_init_script(LISTEN)
    violations: list[str] = []

    def visit(path: str, wait_for: str | None = None) -> None:
        response = page.goto(path)
        assert response is not None and response.status < 500, path
        assert "script-src 'self'" in (response.headers.get("content-security-policy") or ""), path
        if wait_for:
            page.wait_for_selector(wait_for)
        page.wait_for_load_state("networkidle")
        violations.extend(f"{path}: {v}" for v in page.evaluate("window.__csp"))

    # The listener hears a violation, and the policy holds: an injected inline script does not run.
    page.goto("/")
    page.evaluate("""() => { const s = document.createElement("script");
        s.textContent = "window.__ran = true"; document.body.appendChild(s); }""")
    page.wait_for_function("() => window.__csp.length > 0")
    assert page.evaluate("window.__ran") is None and "script-src" in page.evaluate("window.__csp")[0]
    console.clear()

    one, two = site["entries"]
    anonymous = [
        ("/", None),
        ("/leaderboard/?tier=low", "#plot-over-time[data-drawn=true]"),
        (f"/leaderboard/?tier=low&compare={one}&compare={two}", "#plot-heatmap[data-drawn=true]"),
        (f"/leaderboard/entries/{one}/", "#matrix"),
        (f"/leaderboard/competitions/{site['slug']}/", None),
        ("/leaderboard/history/", None),
        ("/competitions/", None),
        (f"/competitions/{site['slug']}/", None),
        ("/decisions/", None),
        ("/registrations/", None),
        (f"/registrations/{site['registrations'][0]}/", "#registration-facts"),
        (f"/submissions/{site['flagged']}/", None),
        ("/status/", None),
        ("/api/docs/", ".swagger-ui .opblock"),  # Swagger UI drew the operations from the schema
        ("/accounts/login/", None),
        ("/accounts/signup/", None),
        ("/accounts/password/reset/", None),
        ("/no/such/page/", None),
    ]
    for path, wait_for in anonymous:
        visit(path, wait_for)
    visit(f"/leaderboard/?tier=low&compare={one}&compare={two}", "#plot-tier-bars[data-drawn=true]")
    for plot in ("over-time", "tier-bars", "heatmap"):  # plotly.js drew each, under the policy
        assert page.locator(f"#plot-{plot} .main-svg").count() >= 1, plot

    _log_in(page, "alice@example.org", "alice-password-1")
    page.wait_for_url(re.compile(r".*/team/$"))
    team = teams_for_user(user=site["team"].memberships.first().user).first()
    for path, wait_for in [
        ("/team/", None),
        (f"/teams/{team.pk}/", "#members"),
        ("/tokens/", None),
        ("/submit/", None),
        (f"/submissions/{site['flagged']}/", None),
        ("/hosted-runs/", None),
        (f"/hosted-runs/{site['run']}/", None),
        (f"/teams/{team.pk}/registrations/", "#registration-form"),
        (f"/teams/{team.pk}/registrations/{site['registrations'][1]}/", "#registration-facts"),
    ]:
        visit(path, wait_for)
    page.context.clear_cookies()

    _log_in(page, "maya@example.org", "maya-password-1")
    page.wait_for_url(re.compile(r".*/team/$"))
    for path, wait_for in [
        ("/review/", None),
        (f"/review/submissions/{site['flagged']}/", None),
        ("/hosted-runs/workers/", None),
        ("/admin/", "#content"),
        ("/admin/auth/user/", "#result_list"),
        (f"/admin/auth/user/{site['maya'].pk}/change/", "#user_form"),
        ("/admin/auth/user/add/", None),
    ]:
        visit(path, wait_for)

    from_console = [line for line in console if "Content Security Policy" in line or "page error" in line]
    assert not violations and not from_console, "\n".join(violations + from_console)


@pytest.mark.browser
def test_a_guesser_sees_the_wait_and_the_owner_logs_in_from_their_browser(
    page, live_server, transactional_db, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TRUSTED_CLIENT_IP_HEADER = "X-Real-IP"  # each browser context says where it comes from
    settings.LOGIN_THROTTLE_FIRST_DELAY_SECONDS = 60
    persona("maya", maintainer=True)
    owner = page
    owner.context.set_extra_http_headers({"X-Real-IP": "198.51.100.7"})
    _log_in(owner, "maya@example.org", "maya-password-1")
    owner.wait_for_url(re.compile(r".*/team/$"))
    owner.get_by_role("button", name="Log out").click()

    browser = page.context.browser
    guesser_context = browser.new_context(base_url=live_server.url)
    guesser_context.set_extra_http_headers({"X-Real-IP": "203.0.113.5"})
    guesser = guesser_context.new_page()
    try:
        for attempt in range(8):
            _log_in(guesser, "maya@example.org", f"guess-{attempt}")
        message = guesser.locator("form").inner_text()
        assert "Too many failed logins for this account" in message
        assert re.search(r"try again in \d+ seconds", message) and "Nothing is locked" in message
        # Even the right password waits, from the guesser's address.
        _log_in(guesser, "maya@example.org", "maya-password-1")
        assert "Too many failed logins" in guesser.locator("form").inner_text()
    finally:
        guesser_context.close()

    # The owner, from a new address but the browser they logged in with before, gets in and is told.
    owner.context.set_extra_http_headers({"X-Real-IP": "192.0.2.44"})
    _log_in(owner, "maya@example.org", "maya-password-1")
    owner.wait_for_url(re.compile(r".*/team/$"))
    notice = owner.locator("ul.messages").inner_text()
    assert "6 failed login attempts on your account" in notice and "203.0.113.5" in notice
