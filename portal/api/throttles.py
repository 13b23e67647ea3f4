"""API throttles: per account for requests with a token or session, per client address for anonymous ones.

Rates come from settings (API_RATE_*, read at each request so that tests can lower them), counters live in
the Django cache (Redis when REDIS_URL is set, so every web process shares them). A throttled request gets
429 in the API's error shape with Retry-After (portal/api/exception_handler.py).
"""

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from portal.client_ip import client_ip_key
from portal.env import parse_rate

if TYPE_CHECKING:  # rest_framework.views imports this module for its settings
    from rest_framework.views import APIView


class _RateFromSettings(SimpleRateThrottle):
    rate_setting = ""

    def get_rate(self) -> str:
        return getattr(settings, self.rate_setting)

    def parse_rate(self, rate: str | None) -> tuple[int | None, int | None]:
        return parse_rate(rate) if rate else (None, None)

    def get_ident(self, request: Request) -> str:
        return client_ip_key(request)


class AnonymousRateThrottle(_RateFromSettings):
    scope = "anonymous"
    rate_setting = "API_RATE_ANONYMOUS"

    def get_cache_key(self, request: Request, view: "APIView") -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AccountRateThrottle(_RateFromSettings):
    """One budget per account: all its tokens and its browser session together, so more tokens buy nothing."""

    scope = "account"
    rate_setting = "API_RATE_AUTHENTICATED"

    def get_cache_key(self, request: Request, view: "APIView") -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class UploadRateThrottle(AccountRateThrottle):
    """A tighter budget for bundle uploads (a POST to a view with throttle_scope = "uploads"): each may be
    gigabytes, streamed to disk and unpacked before it is refused."""

    scope = "uploads"
    rate_setting = "API_RATE_UPLOADS"

    def allow_request(self, request: Request, view: "APIView") -> bool:
        if request.method != "POST" or getattr(view, "throttle_scope", None) != "uploads":
            return True
        return super().allow_request(request, view)
