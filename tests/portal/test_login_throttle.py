"""Wrong passwords make the guesser wait, with growing delays, and never lock the account's owner out.

Counters in the real Redis (scripts/test's REDIS_URL); addresses read through the proxy only when it is
trusted. Replaces the lockout: five wrong passwords used to keep anyone, the owner too, out of an account.
"""

import re
import threading
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.db import connection
from django.test import Client

from portal.accounts.login_throttle import DEVICE_COOKIE
from tests.conftest import persona

PROXY = "10.0.0.1"
WRONG = "The email address and/or password you specified are not correct."
THROTTLED = "Too many failed logins"
ATTACKER, OWNER_HOME, ELSEWHERE = "203.0.113.5", "198.51.100.7", "192.0.2.44"

pytestmark = pytest.mark.usefixtures("fast_passwords", "behind_proxy", "redis_counters", "steady_waits")


@pytest.fixture
def steady_waits(settings):
    # Waits long enough that no test's loop outlasts one by chance; short_waits is for the test that waits.
    settings.LOGIN_THROTTLE_FIRST_DELAY_SECONDS = 30


@pytest.fixture
def fast_passwords(settings):
    # Each attempt checks a password; the real hasher's cost would make these tests take a minute.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def behind_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1


@pytest.fixture
def redis_counters(settings):
    if not settings.REDIS_URL:
        pytest.skip("the login throttle's tests count in Redis: set REDIS_URL (scripts/test does)")
    assert settings.CACHES["default"]["BACKEND"] == "portal.cache.ReusedClientRedisCache"


@pytest.fixture
def short_waits(settings):
    settings.LOGIN_THROTTLE_FREE_PER_ADDRESS = 3
    settings.LOGIN_THROTTLE_FREE_PER_ACCOUNT = 3
    settings.LOGIN_THROTTLE_FIRST_DELAY_SECONDS = 1
    settings.LOGIN_THROTTLE_MAX_DELAY_SECONDS = 4


def _login(email: str, password: str, *, forwarded: str = ATTACKER, client: Client | None = None, **extra: Any):
    client = client or Client()
    response = client.post(
        "/accounts/login/",
        {"login": email, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded,
        **extra,
    )
    return response.status_code, response.content.decode()


def _wait_in(page: str) -> int:
    match = re.search(r"try again in (\d+) seconds?", page)
    assert match, page[-2000:]
    return int(match.group(1))


def _guesses(times: int, *, forwarded: str = ATTACKER) -> list[str]:
    """Wrong passwords for as many made-up accounts: only the address's counter is shared."""
    return [_hammer(f"guess{n}@example.org", 1, forwarded=forwarded)[0] for n in range(times)]


def _hammer(email: str, times: int, *, forwarded: str = ATTACKER) -> list[str]:
    """What each wrong attempt answered: 'wrong' (its password was checked) or 'throttled' (it was not)."""
    answers = []
    for _ in range(times):
        status, page = _login(email, "wrong", forwarded=forwarded)
        assert status == 200
        answers.append("wrong" if WRONG in page else "throttled" if THROTTLED in page else page)
    return answers


def test_the_owner_logs_in_from_their_own_address_while_the_attacker_waits(db):
    persona("maya", maintainer=True)
    owner = Client()
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME, client=owner)[0] == 302
    owner.post("/accounts/logout/")

    answers = _hammer("maya@example.org", 20)  # (allauth refuses a 31st login post a minute from one address)
    assert answers[:6] == ["wrong"] * 6 and set(answers[6:]) == {"throttled"}  # nothing but waits after them

    # The owner, from the address they logged in from before, with or without their browser's cookie.
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME)[0] == 302
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME, client=owner)[0] == 302
    # From a new address, the browser they logged in with before is known by its cookie.
    assert owner.cookies.get(DEVICE_COOKIE)
    owner.post("/accounts/logout/")
    assert _login("maya@example.org", "maya-password-1", forwarded=ELSEWHERE, client=owner)[0] == 302


def test_many_addresses_guessing_one_account_wait_but_never_lock_it(db, settings):
    persona("maya", maintainer=True)
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME)[0] == 302
    answers = [_hammer("maya@example.org", 1, forwarded=f"203.0.113.{n}")[0] for n in range(1, 20)]
    assert answers[:6] == ["wrong"] * 6 and set(answers[6:]) == {"throttled"}
    status, page = _login("maya@example.org", "wrong", forwarded="203.0.113.99")
    assert "for this account from addresses and browsers it has not been used from" in page
    assert 1 <= _wait_in(page) <= 30
    # Another account is not slowed by them, nor is the owner at home.
    persona("bob")
    assert _login("bob@example.org", "bob-password-1", forwarded="203.0.113.50")[0] == 302
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME)[0] == 302
    # The owner's login cleared the account's wait: a stranger's right password gets in again (no lock).
    assert _login("maya@example.org", "maya-password-1", forwarded="203.0.113.98")[0] == 302


def test_the_waits_double_up_to_the_cap_and_then_let_an_attempt_through(db, short_waits):
    persona("bob")
    assert _hammer("nobody@example.org", 4) == ["wrong"] * 4  # three free, the fourth gets through and waits
    waits = []
    for _ in range(4):
        status, page = _login("nobody@example.org", "wrong")
        assert THROTTLED in page
        waits.append(_wait_in(page))
        time.sleep(waits[-1] + 0.1)
        assert _hammer("nobody@example.org", 1) == ["wrong"]  # after the wait one attempt is checked again
    assert waits == [1, 2, 4, 4]
    # Waited out, the right password gets in: a delay, not a lock.
    time.sleep(4.1)
    assert _login("bob@example.org", "bob-password-1")[0] == 302


def test_refused_attempts_do_not_make_the_wait_longer(db, short_waits):
    _hammer("nobody@example.org", 4)
    _, first = _login("nobody@example.org", "wrong")
    for _ in range(20):
        _, page = _login("nobody@example.org", "wrong")
        assert _wait_in(page) <= _wait_in(first)


def test_attempts_sent_at_once_get_no_more_password_checks_than_the_free_ones(transactional_db, settings):
    persona("bob")
    settings.LOGIN_THROTTLE_FREE_PER_ADDRESS = 3
    answers: list[str] = []

    def attempt(n: int) -> None:
        try:
            status, page = _login(f"guess{n}@example.org", "wrong")
            answers.append("checked" if WRONG in page else "refused")  # allauth's own flood limit answers 429
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 24 and answers.count("checked") <= 4, answers


def test_the_owner_is_mailed_once_per_episode_and_told_at_the_next_login(db, settings):
    persona("maya", maintainer=True)
    assert _login("maya@example.org", "maya-password-1", forwarded=OWNER_HOME)[0] == 302
    for n in range(12):
        _hammer("maya@example.org", 1, forwarded=f"203.0.113.{n + 1}")
    assert len(mail.outbox) == 1
    notice = mail.outbox[0]
    assert notice.to == ["maya@example.org"] and "Failed logins" in notice.subject
    assert "not locked" in notice.body and "203.0.113.5" in notice.body and "/accounts/password/reset/" in notice.body

    owner = Client()
    response = owner.post(
        "/accounts/login/",
        {"login": "maya@example.org", "password": "maya-password-1"},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=OWNER_HOME,
        follow=True,
    )
    page = response.content.decode()
    assert "6 failed login attempts on your account" in page and "nothing was locked" in page

    # A new episode after the owner's login mails again; the owner's own typos mail no one.
    for n in range(8):
        _hammer("maya@example.org", 1, forwarded=f"192.0.2.{n + 1}")
    assert len(mail.outbox) == 2
    for _ in range(6):
        _login("maya@example.org", "wrong", forwarded=OWNER_HOME)
    assert len(mail.outbox) == 2


def test_the_admin_login_is_throttled_by_the_same_counters(db, settings):
    staff = persona("root")
    staff.is_staff = staff.is_superuser = True
    staff.save()

    def admin_login(username: str, password: str, forwarded: str) -> tuple[int, str]:
        response = Client().post(
            "/admin/login/?next=/admin/",
            {"username": username, "password": password},
            REMOTE_ADDR=PROXY,
            HTTP_X_FORWARDED_FOR=forwarded,
        )
        return response.status_code, response.content.decode()

    assert admin_login("root", "root-password-1", OWNER_HOME)[0] == 302
    _guesses(11)  # the address's free attempts, spent on allauth's form
    status, page = admin_login("root", "wrong", ATTACKER)
    assert status == 200 and THROTTLED in page and "from your address" in page
    for n in range(10):
        admin_login("root", "wrong", f"203.0.113.{n + 10}")
    status, page = admin_login("root", "root-password-1", "203.0.113.77")
    assert THROTTLED in page and "for this account" in page
    # Its owner, by user name or email, from where it logged in before.
    assert admin_login("root", "root-password-1", OWNER_HOME)[0] == 302


def test_a_client_cannot_dodge_the_address_counter_by_writing_its_own_forwarded_for(db):
    answers = [_hammer(f"guess{n}@example.org", 1, forwarded=f"192.0.2.{n}, {ATTACKER}")[0] for n in range(20)]
    assert answers[:11] == ["wrong"] * 11 and set(answers[11:]) == {"throttled"}


def test_without_a_trusted_proxy_forwarded_for_is_ignored(db, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    persona("bob")
    for n in range(20):
        Client().post(
            "/accounts/login/",
            {"login": f"guess{n}@example.org", "password": "wrong"},
            REMOTE_ADDR="192.0.2.10",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        )
    refused = Client().post(
        "/accounts/login/", {"login": "bob@example.org", "password": "bob-password-1"}, REMOTE_ADDR="192.0.2.10"
    )
    assert THROTTLED in refused.content.decode()
    other = Client().post(
        "/accounts/login/", {"login": "bob@example.org", "password": "bob-password-1"}, REMOTE_ADDR="192.0.2.11"
    )
    assert other.status_code == 302


def test_a_configured_client_address_header_is_used_instead(db, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    settings.TRUSTED_CLIENT_IP_HEADER = "X-Real-IP"
    persona("bob")
    for n in range(20):
        _login(f"guess{n}@example.org", "wrong", HTTP_X_REAL_IP=ATTACKER)
    assert THROTTLED in _login("bob@example.org", "bob-password-1", HTTP_X_REAL_IP=ATTACKER)[1]
    assert _login("bob@example.org", "bob-password-1", HTTP_X_REAL_IP="198.51.100.9")[0] == 302


def test_successful_logins_take_their_attempts_back(db):
    persona("alice")
    _hammer("alice@example.org", 4)
    for _ in range(8):
        assert _login("alice@example.org", "alice-password-1")[0] == 302
    assert _hammer("alice@example.org", 1) == ["wrong"]


def test_a_forged_device_cookie_is_a_stranger(db):
    persona("maya", maintainer=True)
    _hammer("maya@example.org", 12, forwarded=ELSEWHERE)
    forged = Client()
    forged.cookies[DEVICE_COOKIE] = "e30:1tXYZ:forged"
    status, page = _login("maya@example.org", "maya-password-1", forwarded=ELSEWHERE, client=forged)
    assert THROTTLED in page


def test_too_many_login_posts_from_one_address_still_get_the_portals_429_page(db, settings):
    settings.ACCOUNT_RATE_LIMITS = {"login": "2/m/ip"}
    for _ in range(2):
        _login("nobody@example.org", "wrong")
    status, page = _login("nobody@example.org", "wrong")
    assert status == 429
    assert "Too many attempts" in page and "try again" in page
    assert _login("nobody@example.org", "wrong", forwarded="198.51.100.70")[0] == 200


def test_no_account_is_locked_by_allauths_own_counter(db):
    # allauth's "login_failed" limit (five failures per email address) is off; only the waits above apply.
    persona("alice")
    assert _login("alice@example.org", "alice-password-1", forwarded=OWNER_HOME)[0] == 302
    for n in range(8):
        _hammer("alice@example.org", 1, forwarded=f"203.0.113.{n + 1}")
    assert _login("alice@example.org", "alice-password-1", forwarded=OWNER_HOME)[0] == 302
    assert User.objects.get(username="alice").is_active


@pytest.mark.parametrize("login", ["nul\x00@example.org", "x" * 5000 + "@example.org", " ", "maya"])
def test_odd_logins_are_a_form_error_not_a_server_error(db, login):
    persona("maya", maintainer=True)
    status, page = _login(login, "wrong")
    assert status == 200 and "errorlist" in page
    assert Client().post("/admin/login/", {"username": login, "password": "x"}, REMOTE_ADDR=PROXY).status_code == 200


def test_the_owner_in_a_new_place_gets_in_by_the_password_reset_mail(db):
    persona("maya", maintainer=True)
    for n in range(8):
        _hammer("maya@example.org", 1, forwarded=f"203.0.113.{n + 1}")
    traveller = Client()
    assert THROTTLED in _login("maya@example.org", "maya-password-1", forwarded=ELSEWHERE, client=traveller)[1]

    where = {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": ELSEWHERE}
    traveller.post("/accounts/password/reset/", {"email": "maya@example.org"}, **where)
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+)", mail.outbox[-1].body)
    assert link, mail.outbox[-1].body
    form = traveller.get(link.group(1), follow=True, **where)
    done = traveller.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link.group(1),
        {"password1": "a-Long-new-phrase-42", "password2": "a-Long-new-phrase-42"},
        **where,
    )
    assert done.status_code == 302, done.content.decode()[-1500:]
    assert traveller.cookies.get(DEVICE_COOKIE)  # this browser proved the mailbox: it is known now
    assert _login("maya@example.org", "a-Long-new-phrase-42", forwarded=ELSEWHERE, client=traveller)[0] == 302
