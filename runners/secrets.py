"""Hosted runs' environment variables, encrypted at rest (Fernet: AES-128-CBC with an HMAC).

The values are decrypted in one place only: the answer to the claim of the worker that runs the task.
They are never shown again, never logged, and redacted from what the worker sends back.
"""

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    key = settings.HOSTED_SECRETS_KEY
    if key:
        return Fernet(key.encode())
    # Derived from SECRET_KEY, with a purpose of its own so the two never serve as each other.
    digest = hashlib.sha256(f"hosted-run-secrets:{settings.SECRET_KEY}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def env_encrypt(env: dict[str, str]) -> str:
    if not env:
        return ""
    return _fernet().encrypt(json.dumps(env, sort_keys=True).encode()).decode()


def env_decrypt(token: str) -> dict[str, str]:
    if not token:
        return {}
    try:
        return json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken:
        raise RuntimeError(
            "A hosted run's variables cannot be decrypted: SECRET_KEY or HOSTED_SECRETS_KEY changed since it was made."
        ) from None
