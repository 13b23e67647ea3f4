"""Failed logins count per account and per client address, the address read through the proxy only when it is
trusted: behind the README's proxy one visitor can no longer lock every other out (counters in Redis)."""

from typing import Any

import pytest
from django.test import Client

from tests.conftest import persona

PROXY = "10.0.0.1"
LOCKED = "Too many failed login attempts. Try again later."
WRONG = "The email address and/or password you specified are not correct."

pytestmark = pytest.mark.usefixtures("fast_passwords")


@pytest.fixture
def fast_passwords(settings):
    # Each attempt checks a password; the real hasher's cost would make these tests take a minute.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _login(email: str, password: str, *, remote: str = PROXY, forwarded: str | None = None):
    headers: dict[str, Any] = {"REMOTE_ADDR": remote}  # WSGI environ, passed as **extra
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    response = Client().post("/accounts/login/", {"login": email, "password": password}, **headers)
    return response.status_code, response.content.decode()


def _logs_in(email: str, password: str, **where) -> bool:
    status, _ = _login(email, password, **where)
    return status == 302


@pytest.fixture
def behind_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1


def test_an_account_is_locked_after_its_failures_whatever_the_address(db, behind_proxy):
    persona("alice")
    for attempt in range(5):
        status, page = _login("alice@example.org", "wrong", forwarded=f"203.0.113.{attempt + 1}")
        assert status == 200 and WRONG in page
    # Locked, even with the right password and from an address that never failed.
    status, page = _login("alice@example.org", "alice-password-1", forwarded="203.0.113.99")
    assert status == 200 and LOCKED in page


def test_failures_against_one_account_behind_the_proxy_do_not_lock_out_another(db, behind_proxy):
    persona("alice")
    persona("bob")
    for _ in range(12):
        _login("alice@example.org", "wrong", forwarded="203.0.113.5")
    status, page = _login("alice@example.org", "alice-password-1", forwarded="203.0.113.5")
    assert LOCKED in page
    # Bob comes through the same proxy from another client address.
    assert _logs_in("bob@example.org", "bob-password-1", forwarded="198.51.100.7")


def test_one_address_failing_across_accounts_is_locked_but_others_behind_the_proxy_are_not(db, behind_proxy):
    persona("bob")
    for number in range(10):
        status, page = _login(f"guess{number}@example.org", "wrong", forwarded="203.0.113.5")
        assert WRONG in page
    status, page = _login("bob@example.org", "bob-password-1", forwarded="203.0.113.5")
    assert status == 200 and LOCKED in page
    assert _logs_in("bob@example.org", "bob-password-1", forwarded="198.51.100.7")


def test_a_client_cannot_dodge_the_address_limit_by_writing_its_own_forwarded_for(db, behind_proxy):
    persona("bob")
    # The proxy appends the address it saw; what the client wrote before it is not the client's address.
    for number in range(10):
        _login(f"guess{number}@example.org", "wrong", forwarded=f"192.0.2.{number}, 203.0.113.5")
    status, page = _login("bob@example.org", "bob-password-1", forwarded="192.0.2.200, 203.0.113.5")
    assert LOCKED in page


def test_without_a_trusted_proxy_forwarded_for_is_ignored(db):
    persona("bob")
    for number in range(10):
        _login(f"guess{number}@example.org", "wrong", remote="192.0.2.10", forwarded=f"203.0.113.{number}")
    status, page = _login("bob@example.org", "bob-password-1", remote="192.0.2.10", forwarded="198.51.100.7")
    assert LOCKED in page
    assert _logs_in("bob@example.org", "bob-password-1", remote="192.0.2.11")


def test_a_configured_client_address_header_is_used_instead(db, settings):
    settings.TRUSTED_CLIENT_IP_HEADER = "X-Real-IP"
    persona("bob")
    for number in range(10):
        Client().post(
            "/accounts/login/",
            {"login": f"guess{number}@example.org", "password": "wrong"},
            REMOTE_ADDR=PROXY,
            HTTP_X_REAL_IP="203.0.113.5",
        )
    locked = Client().post(
        "/accounts/login/",
        {"login": "bob@example.org", "password": "bob-password-1"},
        REMOTE_ADDR=PROXY,
        HTTP_X_REAL_IP="203.0.113.5",
    )
    assert LOCKED in locked.content.decode()
    other = Client().post(
        "/accounts/login/",
        {"login": "bob@example.org", "password": "bob-password-1"},
        REMOTE_ADDR=PROXY,
        HTTP_X_REAL_IP="198.51.100.7",
    )
    assert other.status_code == 302


def test_a_successful_login_takes_its_attempt_back(db, behind_proxy):
    persona("alice")
    for _ in range(4):
        _login("alice@example.org", "wrong", forwarded="203.0.113.5")
    for _ in range(3):
        assert _logs_in("alice@example.org", "alice-password-1", forwarded="203.0.113.5")
    status, page = _login("alice@example.org", "wrong", forwarded="203.0.113.5")
    assert WRONG in page


def test_the_limits_follow_the_settings(db, behind_proxy, settings):
    settings.ACCOUNT_RATE_LIMITS = {"login_failed": "10/60s/ip,2/300s/key"}
    persona("alice")
    _login("alice@example.org", "wrong", forwarded="203.0.113.5")
    _login("alice@example.org", "wrong", forwarded="203.0.113.5")
    status, page = _login("alice@example.org", "alice-password-1", forwarded="203.0.113.5")
    assert LOCKED in page


def test_too_many_login_posts_from_one_address_get_the_portals_429_page(db, behind_proxy, settings):
    settings.ACCOUNT_RATE_LIMITS = {"login": "2/m/ip"}
    for _ in range(2):
        _login("nobody@example.org", "wrong", forwarded="203.0.113.5")
    status, page = _login("nobody@example.org", "wrong", forwarded="203.0.113.5")
    assert status == 429
    assert "Too many attempts" in page and "try again" in page
    assert _login("nobody@example.org", "wrong", forwarded="198.51.100.7")[0] == 200
