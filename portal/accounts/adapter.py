from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.forms import ValidationError
from django.http import HttpRequest

from portal.accounts import login_throttle
from portal.client_ip import client_ip


class AccountAdapter(DefaultAccountAdapter):
    """allauth, with the portal's login throttle (growing delays, no lockout) in place of allauth's lockout."""

    def get_client_ip(self, request: HttpRequest) -> str:
        ip = client_ip(request)
        if not ip:
            raise PermissionDenied("Unable to determine the client's IP address.")
        return ip

    def pre_authenticate(self, request: HttpRequest, **credentials: Any) -> None:
        # allauth's own "login_failed" limit refuses an account to everyone, its owner too: not called.
        login = str(credentials.get("email") or credentials.get("username") or "")
        try:
            request.login_attempt = login_throttle.begin(request, login)  # type: ignore[attr-defined]
        except login_throttle.LoginThrottled as refused:
            raise ValidationError(refused.message, code="login_throttled") from None

    def authenticate(self, request: HttpRequest, **credentials: Any) -> AbstractBaseUser | None:
        user = super().authenticate(request, **credentials)
        attempt = getattr(request, "login_attempt", None)
        if attempt is not None:
            del request.login_attempt  # type: ignore[attr-defined]
            if user is not None:
                login_throttle.succeeded(request, attempt, user)
            else:
                login_throttle.failed(request, attempt)
        return user
