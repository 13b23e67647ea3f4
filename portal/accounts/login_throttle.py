"""Growing delays on password logins, never a lock that a stranger can trigger (README "Login throttling").

Every password attempt (allauth's login form, the admin's, allauth's re-authentication) first reserves a
place on counters in the cache (Redis in production), before the password is checked:

- per client address, for any account: an address guessing across accounts waits;
- per account, for attempts from addresses and browsers that have never logged in to it: many addresses
  guessing one account wait;
- per account and known address or browser, for attempts from where the account's owner logged in before:
  those skip the two counters above, so a stranger who makes the account or its own address wait does not
  make its owner wait.

The first attempts of each counter are free; after them each attempt that gets through makes the next one
wait, the wait doubling from LOGIN_THROTTLE_FIRST_DELAY_SECONDS up to LOGIN_THROTTLE_MAX_DELAY_SECONDS. An
attempt that arrives during a wait is refused without its password being checked, and does not count. A
successful login takes its attempt back from the address's counter and clears its account's counters;
failures are forgotten LOGIN_THROTTLE_FORGET_SECONDS after the last one.

The owner is told: once per episode by email, when strangers' failures start to make their account wait,
and on their next login by a notice that counts the failures since.
"""

import logging
import math
import secrets
import time
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core import signing
from django.core.cache import cache
from django.core.mail import send_mail
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from portal.client_ip import client_ip_key

log = logging.getLogger(__name__)

DEVICE_COOKIE = "portal_device"
_DEVICE_SALT = "portal.accounts.login_throttle.device"
_PREFIX = "login-throttle"


class LoginThrottled(Exception):
    """The attempt is refused without its password being checked; try again after retry_after seconds."""

    def __init__(self, retry_after: int, scope: str) -> None:
        self.retry_after = retry_after
        self.scope = scope
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = {
            "address": "from your address",
            "account": "for this account from addresses and browsers it has not been used from",
            "known": "for this account from your address",
        }[self.scope]
        wait = f"{self.retry_after} second{'s' if self.retry_after != 1 else ''}"
        return (
            f"Too many failed logins {where}: try again in {wait}. Nothing is locked; each wait grows with "
            "further failures, up to a limit."
        )


@dataclass
class Attempt:
    """A reserved attempt: the counters it used, to be given back or kept when its outcome is known."""

    ip: str
    login: str
    user_id: int | None
    trusted: bool
    counters: list[str] = field(default_factory=list)


def _delay(count: int, free: int) -> float:
    """The wait the count-th attempt puts before the next one: none for the free ones, then doubling to the cap."""
    if count <= free:
        return 0.0
    first = settings.LOGIN_THROTTLE_FIRST_DELAY_SECONDS
    cap = settings.LOGIN_THROTTLE_MAX_DELAY_SECONDS
    return float(min(cap, first * 2 ** min(count - free - 1, 40)))


def _consume(counter: str, free: int) -> int | None:
    """Reserve one attempt on a counter: None when it may go on, else the seconds left to wait."""
    forget = settings.LOGIN_THROTTLE_FORGET_SECONDS
    count_key, wait_key = f"{counter}:n", f"{counter}:wait"
    until = cache.get(wait_key)
    now = time.time()
    if until is not None and until > now:
        return max(1, math.ceil(until - now))
    cache.add(count_key, 0, forget)
    count = cache.incr(count_key)
    cache.touch(count_key, forget)
    delay = _delay(count, free)
    if delay <= 0:
        return None
    # Only one of the attempts that arrive together opens the wait; the others wait behind it.
    if cache.add(wait_key, now + delay, math.ceil(delay)):
        return None
    cache.decr(count_key)
    until = cache.get(wait_key) or now + 1
    return max(1, math.ceil(until - now))


def _give_back(counter: str) -> None:
    try:
        if cache.decr(f"{counter}:n") < 0:
            cache.set(f"{counter}:n", 0, settings.LOGIN_THROTTLE_FORGET_SECONDS)
    except ValueError:
        pass  # forgotten meanwhile


def _clear(counter: str) -> None:
    cache.delete_many([f"{counter}:n", f"{counter}:wait"])


def _hashed(text: str) -> str:
    return sha256(text.strip().lower().encode()).hexdigest()[:32]


def _user_for(login: str) -> User | None:
    login = login.strip()
    if not login:
        return None
    return User.objects.filter(Q(email__iexact=login) | Q(username=login)).order_by("pk").first()


def _device(request: HttpRequest, user_id: int) -> str | None:
    """The id of this browser when it carries a cookie from an earlier login to this account."""
    value = request.COOKIES.get(DEVICE_COOKIE)
    if not value:
        return None
    try:
        data = signing.loads(value, salt=_DEVICE_SALT, max_age=settings.LOGIN_THROTTLE_TRUST_DAYS * 86400)
    except signing.BadSignature:
        return None
    devices = data.get("devices", {}) if isinstance(data, dict) else {}
    device = devices.get(str(user_id))
    return device if isinstance(device, str) else None


def _known_key(user_id: int, ip: str) -> str:
    return f"{_PREFIX}:known:{user_id}:{_hashed(ip)}"


def begin(request: HttpRequest, login: str) -> Attempt:
    """Reserve an attempt to log in as `login` (an email address or user name); raises LoginThrottled."""
    ip = client_ip_key(request)
    user = _user_for(login)
    user_id = user.pk if user else None
    attempt = Attempt(ip=ip, login=login, user_id=user_id, trusted=False)
    if user_id is not None:
        device = _device(request, user_id)
        if device is not None:
            attempt.trusted = True
            place = f"device:{device}"
        elif cache.get(_known_key(user_id, ip)):
            attempt.trusted = True
            place = f"ip:{_hashed(ip)}"
        if attempt.trusted:
            counter = f"{_PREFIX}:known:{user_id}:{place}"
            wait = _consume(counter, settings.LOGIN_THROTTLE_FREE_PER_ACCOUNT)
            if wait is not None:
                raise LoginThrottled(wait, "known")
            attempt.counters.append(counter)
            return attempt
    address = f"{_PREFIX}:ip:{_hashed(ip)}"
    wait = _consume(address, settings.LOGIN_THROTTLE_FREE_PER_ADDRESS)
    if wait is not None:
        raise LoginThrottled(wait, "address")
    attempt.counters.append(address)
    account = f"{_PREFIX}:account:{user_id if user_id is not None else _hashed(login)}"
    wait = _consume(account, settings.LOGIN_THROTTLE_FREE_PER_ACCOUNT)
    if wait is not None:
        _give_back(address)  # refused before its password was checked: it does not count
        raise LoginThrottled(wait, "account")
    attempt.counters.append(account)
    return attempt


def succeeded(request: HttpRequest, attempt: Attempt, user: Any) -> None:
    """The password was right: its address and browser become known, and the owner hears of any failures."""
    for counter in attempt.counters:
        if ":ip:" in counter:
            _give_back(counter)  # an address's failures are not wiped by a success: a guesser could interleave them
        else:
            _clear(counter)
    _clear(f"{_PREFIX}:account:{user.pk}")
    trust = settings.LOGIN_THROTTLE_TRUST_DAYS * 86400
    cache.set(_known_key(user.pk, attempt.ip), 1, trust)
    if _device(request, user.pk) is None:
        request.login_throttle_device = (user.pk, secrets.token_urlsafe(12))  # type: ignore[attr-defined]
    episode = cache.get(f"{_PREFIX}:episode:{user.pk}")
    cache.delete_many([f"{_PREFIX}:episode:{user.pk}", f"{_PREFIX}:told:{user.pk}"])
    if episode and episode.get("failures"):
        messages.warning(
            request,
            f"{episode['failures']} failed login attempt{'s' if episode['failures'] != 1 else ''} on your "
            f"account since {episode['first']}, the last from {episode['last_ip']} at {episode['last']} (UTC). "
            "If they were not yours, nothing was locked and no one got in; a password only you know keeps it so.",
        )


def mailbox_proven(request: HttpRequest, user: Any) -> None:
    """A password set through the reset mail: this address and browser become known, the account's wait ends.

    The owner's way in from a new place while strangers keep the account's counter waiting."""
    _clear(f"{_PREFIX}:account:{user.pk}")
    cache.set(_known_key(user.pk, client_ip_key(request)), 1, settings.LOGIN_THROTTLE_TRUST_DAYS * 86400)
    if _device(request, user.pk) is None:
        request.login_throttle_device = (user.pk, secrets.token_urlsafe(12))  # type: ignore[attr-defined]


def failed(request: HttpRequest, attempt: Attempt) -> None:
    """The password was wrong: the attempt keeps its place; a stranger's failures are kept for the owner."""
    if attempt.user_id is None or attempt.trusted:
        return
    key = f"{_PREFIX}:episode:{attempt.user_id}"
    now = timezone.now().strftime("%Y-%m-%d %H:%M")
    episode = cache.get(key) or {"failures": 0, "first": now}
    episode.update(failures=episode["failures"] + 1, last=now, last_ip=attempt.ip)
    cache.set(key, episode, settings.LOGIN_THROTTLE_FORGET_SECONDS)
    if episode["failures"] >= settings.LOGIN_THROTTLE_FREE_PER_ACCOUNT and cache.add(
        f"{_PREFIX}:told:{attempt.user_id}", 1, settings.LOGIN_THROTTLE_FORGET_SECONDS
    ):
        _tell_owner(request, attempt.user_id, episode)


def _tell_owner(request: HttpRequest, user_id: int, episode: dict[str, Any]) -> None:
    user = User.objects.filter(pk=user_id).first()
    if user is None or not user.email:
        return
    reset = request.build_absolute_uri(reverse("account_reset_password"))
    lines = [
        f"{episode['failures']} wrong passwords were tried for your account {user.email} on the MLE portal "
        f"since {episode['first']} (UTC), the last from {episode['last_ip']}.",
        "",
        "Your account is not locked. Logins to it from addresses and browsers it has not been used from now wait "
        f"between attempts, up to {settings.LOGIN_THROTTLE_MAX_DELAY_SECONDS} seconds; from the browsers and "
        "addresses you logged in from before, you log in as usual.",
        "",
        "If these were your attempts, wait a little, or set a new password: " + reset,
        "If not, nothing needs doing while your password is one only you know. This is the only mail about "
        "these attempts; your next login lists them.",
    ]
    try:
        send_mail("Failed logins on your MLE portal account", "\n".join(lines), None, [user.email])
    except Exception:  # a mail server down must not turn a refused password into an error page
        log.exception("the failed-login notice to user %s could not be sent", user_id)


class DeviceCookieMiddleware:
    """Gives a browser that just logged in a signed cookie naming it, so its next logins count as known."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        new = getattr(request, "login_throttle_device", None)
        if new is not None:
            user_id, device = new
            data: dict[str, Any] = {"devices": {}}
            value = request.COOKIES.get(DEVICE_COOKIE)
            if value:
                try:
                    data = signing.loads(value, salt=_DEVICE_SALT)
                except signing.BadSignature:
                    pass
            devices = dict(list(data.get("devices", {}).items())[-9:])  # a shared browser: the last ten accounts
            devices[str(user_id)] = device
            response.set_cookie(
                DEVICE_COOKIE,
                signing.dumps({"devices": devices}, salt=_DEVICE_SALT),
                max_age=settings.LOGIN_THROTTLE_TRUST_DAYS * 86400,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
