from datetime import timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from portal.accounts.keys import TOKEN_PREFIX, hash_key, looks_like_key
from portal.accounts.models import ApiToken


class ApiKeyRefused(exceptions.AuthenticationFailed):
    """A key that does not let its holder in: a 401 in the API's error shape (code invalid_api_key) saying what
    is wrong with it and what to do, with the page that makes a new one in details.tokens_url."""

    error_code = "invalid_api_key"

    def __init__(self, request: Request, message: str, *, why: str) -> None:
        tokens_url = request.build_absolute_uri(reverse("token_list"))
        super().__init__(f"{message} Make a new one at {tokens_url}.")
        self.details = {"reason": why, "tokens_url": tokens_url}


def _not_valid(request: Request, why: str, what: str) -> ApiKeyRefused:
    message = f"This API key is not valid: {what}. Check it was copied whole (it starts with {TOKEN_PREFIX})."
    return ApiKeyRefused(request, message, why=why)


class HashedKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: <keyword> <key>`, the key matched by its SHA-256 (portal/accounts/keys.py): only the
    hash is stored. A subclass finds who holds the hash and says how a malformed header is refused."""

    keyword: str

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        parts = authentication.get_authorization_header(request).decode("latin-1").split()
        if not parts or parts[0] != self.keyword:
            return None
        if len(parts) != 2 or not looks_like_key(parts[1]):
            raise self.malformed(request, parts)
        return self.authenticate_hash(request, hash_key(parts[1]))

    def malformed(self, request: Request, parts: list[str]) -> exceptions.AuthenticationFailed:
        raise NotImplementedError

    def authenticate_hash(self, request: Request, key_hash: str) -> tuple[Any, Any]:
        raise NotImplementedError

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class HashedKeyScheme(OpenApiAuthenticationExtension):
    """The OpenAPI description of a HashedKeyAuthentication: a key in the Authorization header."""

    description = ""

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": "Authorization", "description": self.description}


class HashedTokenAuthentication(HashedKeyAuthentication):
    """`Authorization: Token <key>`: a team member's API token. request.auth is the ApiToken."""

    keyword = "Token"

    def malformed(self, request: Request, parts: list[str]) -> exceptions.AuthenticationFailed:
        if len(parts) != 2:
            return _not_valid(
                request, "malformed", "the header must be 'Authorization: Token <key>', one key with no spaces"
            )
        return _not_valid(request, "malformed", f"a key is {TOKEN_PREFIX} and 43 more letters, digits, - or _")

    def authenticate_hash(self, request: Request, key_hash: str) -> tuple[Any, Any]:
        token = ApiToken.objects.select_related("user", "team").filter(key_hash=key_hash).first()
        if token is None:
            raise _not_valid(request, "unknown", "this portal never made it (or it belongs to another portal)")
        if token.revoked_at is not None:
            revoked = f"{token.revoked_at:%Y-%m-%d %H:%M} UTC"
            raise ApiKeyRefused(request, f"This API key is not valid: it was revoked on {revoked}.", why="revoked")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("The account of this token is disabled.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token


class HashedTokenScheme(HashedKeyScheme):
    target_class = HashedTokenAuthentication
    name = "TokenAuth"
    description = "`Token <key>`; create keys on the Tokens page or with `manage.py issue_token`."
