"""The one-machine portal runs on SQLite. Reading a few fields out of stored reports there once turned every
false medal into the text "false" (inside a JSON object SQLite writes a boolean as text), so its competition
pages showed every seed as gold. The report's fields are read one by one (grading.selectors.report_fields); this
runs both readers on a real SQLite database in a process of its own (the suite's database is PostgreSQL)."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

READER = r"""
import django, os
django.setup()
from competitions.models import Competition
from competitions.services import competitions_load
from grading.models import Run, Submission
from grading.selectors import run_outcome, submission_outcomes
from leaderboard import services
from leaderboard.selectors import competition_results
from portal.accounts.models import Team

competitions_load()
competition = Competition.objects.order_by("pk").first()
team = Team.objects.create(name="t")
submission = Submission.objects.create(team=team, benchmark=competition.benchmark, status="published",
                                       manifest={"agent": {"name": "Plain"}})
base = {"submission_exists": True, "valid_submission": True, "above_median": False, "score": 0.25,
        "gold_medal": False, "silver_medal": False, "bronze_medal": False}
Run.objects.create(submission=submission, competition=competition, seed=0, run_id="r0", regraded=base)
Run.objects.create(submission=submission, competition=competition, seed=1, run_id="r1",
                   regraded={**base, "bronze_medal": True})
Run.objects.create(submission=submission, competition=competition, seed=2, run_id="r2",
                   regraded={**base, "medals_known": False, "valid_submission": False})
services.entry_refresh(submission_id=submission.pk)
runs = Run.objects.filter(submission=submission).select_related("competition")
assert sorted(submission_outcomes(submission_id=submission.pk), key=repr) == sorted(map(run_outcome, runs), key=repr)
_, rows = competition_results(slug=competition.slug)
medals = [seed["medal"] for seed in rows[0]["seeds"]]
assert medals == ["valid", "bronze", "invalid"], medals
print("ok", medals)
"""


def test_reports_read_on_sqlite_keep_their_booleans(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
    env["PORTAL_DATA_DIR"] = str(tmp_path / "data")  # the embedded defaults: SQLite in the data folder
    env["DJANGO_SETTINGS_MODULE"] = "portal.settings"
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, capture_output=True
    )
    assert migrated.returncode == 0, migrated.stderr.decode()
    read = subprocess.run([sys.executable, "-c", READER], cwd=REPO, env=env, capture_output=True, text=True)
    assert read.returncode == 0, read.stdout + read.stderr
    assert "ok ['valid', 'bronze', 'invalid']" in read.stdout
