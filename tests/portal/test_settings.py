"""A wrong setting stops the start with a message that names the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _start(tmp_path, **env) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    full_env.update({"PORTAL_DATA_DIR": str(tmp_path / "data"), "DJANGO_SETTINGS_MODULE": "portal.settings", **env})
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "mysql://root@localhost/x"}, "DATABASE_URL='mysql://***@localhost/x' is not supported"),
        ({"DATABASE_URL": "postgresql://u:secret@localhost:5432"}, "names no database"),
        ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL='http://localhost:6379' is not a Redis URL"),
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"DEBUG": "false"}, "SECRET_KEY must be set when DEBUG is off"),
        ({"DEBUG": "false", "SECRET_KEY": "s" * 40}, "ALLOWED_HOSTS must be set when DEBUG is off"),
        ({"DEBUG": "false", "SECRET_KEY": "short", "ALLOWED_HOSTS": "x"}, "SECRET_KEY is too short"),
        ({"STORAGE_BACKEND": "ftp"}, "STORAGE_BACKEND='ftp' is not one of: local, s3"),
        ({"SECRET_KEY_FILE": "/nonexistent/key"}, "SECRET_KEY_FILE='/nonexistent/key' cannot be read"),
        ({"API_RATE_UPLOADS": "lots"}, "API_RATE_UPLOADS='lots' is not a rate; use REQUESTS/WINDOW"),
        ({"LOGIN_FAILURES_PER_ACCOUNT": "5/5m"}, "LOGIN_FAILURES_PER_ACCOUNT is no longer read: logins are throttled"),
        ({"LOGIN_THROTTLE_FREE_PER_ADDRESS": "0"}, "LOGIN_THROTTLE_FREE_PER_ADDRESS=0 is too small"),
        (
            {"LOGIN_THROTTLE_FIRST_DELAY_SECONDS": "60", "LOGIN_THROTTLE_MAX_DELAY_SECONDS": "30"},
            "LOGIN_THROTTLE_MAX_DELAY_SECONDS=30 must be at least LOGIN_THROTTLE_FIRST_DELAY_SECONDS=60",
        ),
        ({"TRUSTED_PROXY_COUNT": "-1"}, "TRUSTED_PROXY_COUNT=-1 is too small"),
        ({"SUBMISSION_DAILY_QUOTA_PER_USER": "many"}, "SUBMISSION_DAILY_QUOTA_PER_USER='many' is not an integer"),
        ({"HOSTED_RUNS_DAILY_QUOTA_PER_USER": "-1"}, "HOSTED_RUNS_DAILY_QUOTA_PER_USER=-1 is too small"),
        (
            {"PORTAL_PRIVATE_ROOT": "/dev/null/private"},
            "PORTAL_PRIVATE_ROOT: '/dev/null/private' cannot be made readable by this user only",
        ),
    ],
)
def test_a_wrong_value_fails_at_start_naming_the_variable(tmp_path, env, message):
    result = _start(tmp_path, **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr
    assert "secret" not in result.stderr.split("ImproperlyConfigured")[-1]


def test_embedded_defaults_start_with_nothing_set(tmp_path):
    result = _start(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "secret_key").exists()
    assert (tmp_path / "data" / "broker" / "queue").is_dir()


def test_production_settings_start_when_complete(tmp_path):
    result = _start(
        tmp_path,
        DEBUG="false",
        SECRET_KEY="k" * 40,
        ALLOWED_HOSTS="portal.example.org",
        DATABASE_URL="postgresql://postgres@127.0.0.1:5432/portal",
        REDIS_URL="redis://127.0.0.1:6379/1",
    )
    assert result.returncode == 0, result.stderr


def test_login_limits_api_rates_and_the_proxy_come_from_the_environment(tmp_path):
    full_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    full_env.update(
        {
            "PORTAL_DATA_DIR": str(tmp_path / "data"),
            "DJANGO_SETTINGS_MODULE": "portal.settings",
            "LOGIN_THROTTLE_FREE_PER_ACCOUNT": "3",
            "LOGIN_THROTTLE_MAX_DELAY_SECONDS": "600",
            "API_RATE_UPLOADS": "5/h",
            "TRUSTED_PROXY_COUNT": "1",
        }
    )
    script = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.LOGIN_THROTTLE_FREE_PER_ACCOUNT, s.LOGIN_THROTTLE_MAX_DELAY_SECONDS, "
        "s.API_RATE_UPLOADS, s.API_RATE_AUTHENTICATED, "
        "s.TRUSTED_PROXY_COUNT, s.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "600", "5/h", "300/m", "1", "1"]
