"""The README's "Try it in two minutes", command by command, against a portal started with ./scripts/run on a fresh
data folder: the seeded demo entries, a bundle made and uploaded by the web form and by the CLI, graded, ranked."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.portal.test_run_command import _as_from_a_terminal, _free_port

REPO = Path(__file__).resolve().parents[2]
PYTHON = str(REPO / ".venv" / "bin" / "python")
CLIENT = str(REPO / "client" / "mleportal.py")
README = (REPO / "README.md").read_text()
MAKE_BUNDLE = (
    "--split low --seeds 3 --runtime-hours 24 --gpu A10:24:1 --vcpus 36 --ram-gb 440 --benchmark-commit 783b15af "
    "--benchmark-version v1 --no-internet-access --closed-source --llm none"
)


def _api(url: str, token: str | None = None):
    headers = {"Authorization": f"Token {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
        return json.loads(response.read())


def _ranked(board: str, count: int) -> list[dict] | None:
    """The board's rows once it lists `count`, all ranked (ranks follow the rows a moment later)."""
    body = _api(board)
    return body["rows"] if body["count"] == count and all(row["rank"] for row in body["rows"]) else None


def _wait(condition, what: str, timeout: float, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if result := condition():
                return result
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(f"{what} after {timeout}s:\n{log.read_text()[-5000:]}")


def test_the_readme_names_exactly_the_commands_this_test_runs():
    section = README.split("## Try it in two minutes", 1)[1].split("\n## ", 1)[0]
    for command in (
        "./scripts/run",
        ".venv/bin/python manage.py make_demo_run --out /tmp/my-run --quality 0.75",
        f"python3 client/mleportal.py make-bundle /tmp/my-run --out /tmp/my-agent.tar.gz --agent-name 'My agent' "
        f"--agent-version 1.0 {MAKE_BUNDLE}",
        '.venv/bin/python manage.py issue_token --username demo --team "Demo team"',
        ".venv/bin/python manage.py make_demo_run --out /tmp/my-run-2 --quality 0.6 --first-seed 3",
        f"python3 client/mleportal.py make-bundle /tmp/my-run-2 --out /tmp/my-agent-2.tar.gz --agent-name 'My agent' "
        f"--agent-version 2.0 {MAKE_BUNDLE}",
        "python3 client/mleportal.py upload /tmp/my-agent-2.tar.gz --url http://127.0.0.1:8000 --token $TOKEN",
    ):
        assert command in " ".join(section.replace("\\\n", " ").split()), command


@pytest.mark.browser
@pytest.mark.worker
def test_the_two_minute_recipe_on_a_fresh_portal(page, tmp_path):
    port, data, log_path = _free_port(), tmp_path / "data", tmp_path / "run.log"
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
    env.update({"PORT": str(port), "PORTAL_DATA_DIR": str(data)})
    log = log_path.open("w")
    process = subprocess.Popen(
        [str(REPO / "scripts" / "run")],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )

    def run(*command: str, timeout: float = 300) -> str:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        return done.stdout

    try:
        started = time.monotonic()
        _wait(lambda: urllib.request.urlopen(f"{url}/healthz", timeout=5).status == 200, "no portal", 400, log_path)
        up = time.monotonic() - started
        account = re.search(r"Demo account \(maintainer of 'Demo team'\): (\S+) / (\S+)", log_path.read_text())
        assert account, log_path.read_text()[-5000:]
        email, password = account.groups()

        # The seeded entries: four ranked on the Lite tier, one held in the review queue.
        board = f"{url}/api/v1/leaderboard/?board=comparable&tier=low"
        rows = _wait(lambda: _ranked(board, 4), "no seeded entries", 400, log_path)
        seeded = time.monotonic() - started
        assert all(row["team"].startswith("Demo - ") for row in rows)
        token = run(PYTHON, "manage.py", "issue_token", "--username", "demo", "--team", "Demo team").split()[-1]
        flags = _wait(lambda: _api(f"{url}/api/v1/review/flags/", token), "empty queue", 120, log_path)
        assert [(f["team"], f["severity"], f["code"]) for f in flags] == [
            ("Demo - Shortcut Inc", "blocking", "test_set_feedback")
        ]

        # Make a bundle and upload it by the web form, signed in with the printed account.
        run(PYTHON, "manage.py", "make_demo_run", "--out", str(tmp_path / "my-run"), "--quality", "0.75")
        bundle = tmp_path / "my-agent.tar.gz"
        run("python3", CLIENT, "make-bundle", str(tmp_path / "my-run"), "--out", str(bundle), "--agent-name",
            "My agent", "--agent-version", "1.0", *MAKE_BUNDLE.split())  # fmt: skip
        page.goto(f"{url}/accounts/login/")
        page.fill("input[name=login]", email)
        page.fill("input[name=password]", password)
        page.locator("form button[type=submit]").last.click()
        page.goto(f"{url}/submit/")
        page.set_input_files("#bundle", str(bundle))
        page.click("#upload-form button[type=submit]")
        page.wait_for_url(re.compile(r".*/submissions/\d+/$"), timeout=60000)
        # A locator wait, not wait_for_function: the portal's CSP allows no eval in the page.
        expect(page.locator("#status")).to_have_text("published", timeout=300000)

        # A second one by the CLI, with a token; it waits, then prints the figures and the flags.
        run(PYTHON, "manage.py", "make_demo_run", "--out", str(tmp_path / "my-run-2"), "--quality", "0.6",
            "--first-seed", "3")  # fmt: skip
        bundle = tmp_path / "my-agent-2.tar.gz"
        run("python3", CLIENT, "make-bundle", str(tmp_path / "my-run-2"), "--out", str(bundle), "--agent-name",
            "My agent", "--agent-version", "2.0", *MAKE_BUNDLE.split())  # fmt: skip
        printed = run("python3", CLIENT, "upload", str(bundle), "--url", url, "--token", token, "--poll-interval", "1")
        assert "published" in printed and "flags: none" in printed, printed

        # Both are ranked beside the demo entries, and neither raised a flag (no code shared with the demo teams).
        rows = _wait(lambda: _ranked(board, 6), "not ranked", 120, log_path)
        mine = [row for row in rows if row["team"] == "Demo team"]
        assert sorted(row["agent_version"] for row in mine) == ["1.0", "2.0"]
        submissions = _api(f"{url}/api/v1/submissions/", token)
        assert [s["flags"] for s in submissions if s["status"] == "published"] == [[], []]
        print(f"portal up in {up:.0f} s; seeded entries ranked {seeded:.0f} s after the start")
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
