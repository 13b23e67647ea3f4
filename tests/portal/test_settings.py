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
        ({"LOGIN_FAILURES_PER_ACCOUNT": "0/m"}, "LOGIN_FAILURES_PER_ACCOUNT='0/m' is not a rate"),
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
            "LOGIN_FAILURES_PER_ACCOUNT": "3/15m",
            "LOGIN_FAILURES_PER_IP": "20/m",
            "API_RATE_UPLOADS": "5/h",
            "TRUSTED_PROXY_COUNT": "1",
        }
    )
    script = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.ACCOUNT_RATE_LIMITS['login_failed'], s.API_RATE_UPLOADS, s.API_RATE_AUTHENTICATED, "
        "s.TRUSTED_PROXY_COUNT, s.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["20/60s/ip,3/900s/key", "5/h", "300/m", "1", "1"]
