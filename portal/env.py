"""Reading settings from the environment, failing loudly on a bad value.

Every reader supports a ``NAME_FILE`` variant that points at a file holding the value,
so that secrets can come from mounted files instead of the process environment.
"""

import os
import re
from pathlib import Path
from typing import Any, overload

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        try:
            return Path(file_name).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc.strerror}") from None
    return os.environ.get(name)


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = _raw(name)
    if value is None or value == "":
        return default
    return value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None or value == "":
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is too small; it must be at least {minimum}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    assert value is not None
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}")
    return value


_RATE = re.compile(r"^(\d+)/(\d*)(s|sec|second|m|min|minute|h|hour|d|day)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(text: str) -> tuple[int, int]:
    """'120/m', '5/15m', '30/hour' -> (requests, window in seconds); ValueError for anything else."""
    match = _RATE.match(text.strip().lower())
    if not match or int(match.group(1)) < 1 or match.group(2) == "0":
        raise ValueError(text)
    return int(match.group(1)), int(match.group(2) or 1) * _UNIT_SECONDS[match.group(3)[0]]


def env_rate(name: str, default: str) -> str:
    """A rate such as '120/m' (requests per window: s, m, h or d, optionally with a count, as in '5/15m')."""
    value = env_str(name, default)
    assert value is not None
    try:
        parse_rate(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a rate; use REQUESTS/WINDOW such as 120/m, 5/15m, 30/h or 1000/d"
        ) from None
    return value.strip().lower()


def database_from_url(name: str, url: str, *, conn_max_age: int = 60) -> dict[str, Any]:
    import dj_database_url

    if not url.startswith(("postgres://", "postgresql://", "sqlite://")):
        raise ImproperlyConfigured(
            f"{name}={_redact(url)!r} is not supported; use postgresql://USER:PASSWORD@HOST:PORT/NAME "
            "(or sqlite:///PATH for a single machine)"
        )
    try:
        config = dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
    except Exception as exc:  # the library raises several types for malformed URLs
        raise ImproperlyConfigured(f"{name} is not a valid database URL: {exc}") from None
    if not config.get("NAME"):
        raise ImproperlyConfigured(f"{name}={_redact(url)!r} names no database; add /NAME at the end")
    return dict(config)  # a plain dict[str, Any], as DATABASES holds, rather than the library's TypedDict


def redis_url(name: str) -> str | None:
    url = env_str(name)
    if url is None:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(f"{name}={_redact(url)!r} is not a Redis URL; use redis://HOST:PORT/DB")
    return url


def _redact(url: str) -> str:
    # Keep credentials out of error messages and logs.
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
