"""A management command run against a data folder never set up says so and how to fix it, not a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
    env["PORTAL_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "command",
    [
        ["issue_token", "--username", "alice", "--team", "Alice Lab"],
        ["load_competitions"],
        ["grade", "--competition", "spooky-author-identification", "submission.csv"],
    ],
)
def test_a_command_on_an_empty_data_dir_names_the_database_and_the_fix(tmp_path, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _manage(empty, *command)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "no such table" not in result.stderr
    assert str(empty / "db.sqlite3") in result.stderr
    assert "has no tables yet" in result.stderr
    assert "./scripts/run" in result.stderr and "manage.py migrate" in result.stderr


def test_migrate_sets_the_data_dir_up_and_then_commands_run(tmp_path):
    data = tmp_path / "data"
    assert _manage(data, "migrate", "--noinput", "-v", "0").returncode == 0
    result = _manage(data, "issue_token", "--username", "alice", "--team", "Alice Lab")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1]  # the token, alone on its last line


def test_help_and_unknown_commands_are_left_to_django(tmp_path):
    assert _manage(tmp_path / "data", "help").returncode == 0
    unknown = _manage(tmp_path / "data", "no_such_command")
    assert unknown.returncode == 1 and "Unknown command" in unknown.stderr
