import hashlib
import secrets

TOKEN_PREFIX = "mlep_"


def new_key() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_key(key: str) -> bool:
    return key.startswith(TOKEN_PREFIX) and 20 <= len(key) <= 100 and key.isascii()
