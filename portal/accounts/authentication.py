from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from portal.accounts.keys import hash_key, looks_like_key
from portal.accounts.models import ApiToken


class HashedTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Token <key>`, matched by the SHA-256 of the key. request.auth is the ApiToken."""

    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if parts[0] != self.keyword:
            return None
        if len(parts) != 2 or not looks_like_key(parts[1]):
            raise exceptions.AuthenticationFailed(
                "Malformed token header: send 'Authorization: Token <key>' with the key shown when it was created."
            )
        token = ApiToken.objects.select_related("user", "team").filter(key_hash=hash_key(parts[1])).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown token: create one on the Tokens page.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed(
                f"This token was revoked on {token.revoked_at:%Y-%m-%d %H:%M} UTC; create a new one on the Tokens page."
            )
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("The account of this token is disabled.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword


class HashedTokenScheme(OpenApiAuthenticationExtension):
    target_class = HashedTokenAuthentication
    name = "TokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`; create keys on the Tokens page or with `manage.py issue_token`.",
        }
