"""One run's grading error of ours: retried, then recorded for that run alone, the entry held by a blocking
grading_error flag until a maintainer re-grades it after the fix; never the team's failure.

The worker test injects a grader that raises on one competition (tests/grading/faulty_worker.py) into a real
Celery worker and sends a Lite bundle through the whole pipeline.
"""

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from competitions.demo.runs import default_manifest, write_run_bundle
from grading.models import Flag, Run, Submission
from grading.services import finish, pipeline
from grading.services.regrade import submission_regrade
from grading.services.review import entry_decide, flag_decide
from leaderboard.models import Entry
from tests.conftest import REPO, WorkerProcess, _worker_env, api_client_for
from tests.grading.builders import lite_submission
from tests.grading.faulty_worker import LEAKED_ANSWER
from tests.grading.test_pipeline import grade_with_command, upload, wait_final

BROKEN = "spooky-author-identification"  # its grader raises every time
FLAKY = "aerial-cactus-identification"  # its grader raises once, then grades


class FaultyWorker(WorkerProcess):
    """A worker process in which BROKEN's grader always raises an error of ours and FLAKY's raises once."""

    def __init__(self, *, env: dict):
        self.name = f"faulty-{uuid.uuid4().hex[:8]}@%h"
        self.log = Path(settings.DATA_DIR) / f"worker-{uuid.uuid4().hex[:8]}.log"
        command = [sys.executable, "-m", "tests.grading.faulty_worker", "-A", "portal", "worker"]
        command += ["-Q", "default,grading", "-c", "1", "-n", self.name, "--without-gossip", "--without-mingle"]
        self._log_file = self.log.open("wb")
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_worker_env({**env, "TEST_GRADER_FAILS_ON": f"{BROKEN},{FLAKY}:1", "GRADING_ERROR_RETRY_SECONDS": "1"}),
        )


def claiming_bundle(lite_run_group: Path, tmp_path: Path) -> Path:
    """The Lite bundle with the team's own report claiming BROKEN's seed 0 as valid, with its honest score."""
    group = tmp_path / lite_run_group.name
    shutil.copytree(lite_run_group, group)
    run = sorted(p for p in group.iterdir() if p.name.startswith(f"{BROKEN}_"))[0]
    honest = grade_with_command(BROKEN, run / "submission" / "submission.csv")
    claim = {**honest, "submission_path": f"runs/{group.name}/{run.name}/submission/submission.csv"}
    report = {"total_runs": 1, "total_runs_with_submissions": 1, "total_valid_submissions": 1, "total_medals": 0}
    report |= {"total_gold_medals": 0, "total_silver_medals": 0, "total_bronze_medals": 0, "total_above_median": 0}
    (group / "2026-11-30T10-00-00-GMT_grading_report.json").write_text(
        json.dumps({**report, "competition_reports": [claim]})
    )
    return write_run_bundle(run_group=group, out_path=tmp_path / "claiming.tar.gz", manifest=default_manifest())


@pytest.mark.worker
def test_a_grader_failing_on_one_competition_holds_the_entry_until_a_regrade_after_the_fix(
    registry_with_packs, alice_api, start_worker, mail_dir, lite_run_group, maintainer, tmp_path, client
):
    faulty = FaultyWorker(env={"EMAIL_FILE_PATH": str(mail_dir)})
    try:
        faulty.wait_ready()
        submission_id = upload(alice_api, claiming_bundle(lite_run_group, tmp_path)).json()["id"]
        body = wait_final(alice_api, submission_id)
    finally:
        faulty.kill()

    # Held for a maintainer, not failed: every other run is graded, and the reason says whose error it is.
    assert body["status"] == "in_review", body
    assert body["progress"] == {"done": 66, "total": 66}
    assert "could not be graded because of an error of the portal (not of the submission)" in body["status_reason"]
    runs = {(r.competition.slug, r.seed): r for r in Run.objects.filter(submission_id=submission_id)}
    for seed in (0, 1, 2):  # tried three times (GRADING_ERROR_RETRIES=2), then recorded with the reason
        broken = runs[(BROKEN, seed)]
        assert broken.status == Run.Status.DONE and broken.attempts == 3 and broken.regraded is None
        assert broken.grading_error.startswith("AnswersProblem in tests/grading/faulty_worker.py:")
        assert broken.grading_error.endswith("(broken), after 3 attempt(s)")
    flaky = [runs[(FLAKY, seed)] for seed in (0, 1, 2)]  # a passing error: the retry grades it
    assert sorted(r.attempts for r in flaky) == [1, 1, 2] and all(r.regraded["valid_submission"] for r in flaky)
    assert not any(r.grading_error for r in flaky)
    assert sum(1 for r in runs.values() if r.grading_error) == 3

    # One blocking grading_error flag per run; nothing blames the team for the runs we failed to grade.
    errors = [f for f in body["flags"] if f["code"] == "grading_error"]
    assert sorted(f["severity"] for f in errors) == ["blocking"] * 3
    assert "an error of the portal, not of the submission" in errors[0]["message"]
    about_broken = [f for f in body["flags"] if f["code"] != "grading_error" and BROKEN in json.dumps(f)]
    assert about_broken == [], about_broken
    assert body["comparable"] is False

    results = alice_api.get(f"/api/v1/submissions/{submission_id}/results/").json()["results"]
    row = next(r for r in results if r["competition_id"] == BROKEN and r["seed"] == 0)
    assert row["regraded"] is None and row["grading_error"].startswith("AnswersProblem in ")
    assert row["claimed"]["valid_submission"] is True  # the team's claim is kept, and compared after the re-grade
    report = alice_api.get(f"/api/v1/submissions/{submission_id}/grading-report/").json()
    assert len(report["competition_reports"]) == 63  # no report is made up for the runs we could not grade

    # The grader's message quoted an answer: it reaches no answer, page or mail (only the server's log).
    client.force_login(Submission.objects.get(pk=submission_id).created_by)
    page = client.get(f"/submissions/{submission_id}/").content.decode()
    assert "grading error (ours)" in page
    seen = [json.dumps(body), json.dumps(results), json.dumps(report), page]
    seen += [mail.read_text() for mail in mail_dir.glob("*.log")]
    assert not any(LEAKED_ANSWER in text for text in seen)
    assert LEAKED_ANSWER in faulty.output()

    # The board does not list it, and a maintainer's accept of the flags does not publish it either.
    assert not Entry.objects.filter(submission_id=submission_id).exists()
    entry_decide(submission_id=submission_id, decision="accept", reason="looked at it", actor=maintainer)
    held = Submission.objects.get(pk=submission_id)
    assert held.status == Submission.Status.IN_REVIEW and "error of the portal" in held.status_reason
    assert not Entry.objects.filter(submission_id=submission_id).exists()

    # After the fix (a worker without the fault) a maintainer re-grades it: every run has its result.
    start_worker()
    from portal.accounts import services

    services.team_create(user=maintainer, name="Maintainers")
    assert api_client_for(maintainer).post(f"/api/v1/submissions/{submission_id}/regrade/").status_code == 202
    body = wait_final(alice_api, submission_id)
    assert body["progress"] == {"done": 66, "total": 66}
    assert not [f for f in body["flags"] if f["code"] == "grading_error"]
    assert "error of the portal" not in body["status_reason"]
    regraded = Run.objects.get(submission_id=submission_id, competition__slug=BROKEN, seed=0)
    assert regraded.grading_error == "" and regraded.attempts == 1 and regraded.regraded["valid_submission"]
    assert body["aggregates"]["low"]["complete"]["seeds"] == 3


def test_an_accepted_grading_error_flag_keeps_the_entry_held_and_a_regrade_clears_it(
    registry_with_packs, alice, maintainer, lite_run_group
):
    runs = sorted(p for p in lite_run_group.iterdir() if p.name.startswith(f"{BROKEN}_"))[:2]
    submission = lite_submission(alice.teams.get(), runs)
    good, bad = Run.objects.filter(submission=submission).order_by("seed")
    pipeline.run_grade(run_id=good.pk)
    pipeline.run_grading_error(run_id=bad.pk, reason="KeyError in grading/engine/x.py:1 (f), after 3 attempt(s)")
    pipeline.run_grading_error(run_id=bad.pk, reason="a second report of the same run changes nothing")
    assert Submission.objects.get(pk=submission.pk).status == Submission.Status.CHECKING
    finish.submission_finish(submission_id=submission.pk)

    submission.refresh_from_db()
    assert submission.status == Submission.Status.IN_REVIEW and submission.progress_done == 2
    flag = Flag.objects.get(submission=submission, code="grading_error")
    assert flag.severity == "blocking" and flag.key == f"{BROKEN}/seed-1"
    assert flag.evidence["error"] == "KeyError in grading/engine/x.py:1 (f), after 3 attempt(s)"
    flag_decide(flag_id=flag.pk, decision="accept", reason="not the team's fault", actor=maintainer)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.IN_REVIEW  # accepted, and still no result to publish

    assert submission_regrade(submission_id=submission.pk)
    bad.refresh_from_db()
    assert (bad.status, bad.grading_error, bad.attempts) == (Run.Status.PENDING, "", 0)
    assert not Flag.objects.filter(submission=submission, code="grading_error").exists()


def test_a_grading_errors_reason_names_our_line_and_never_the_message():
    def grader_with_a_bug():
        raise ValueError(f"cannot compare {LEAKED_ANSWER}")

    try:
        grader_with_a_bug()
    except ValueError as exc:
        reason = pipeline.grading_error_reason(exc, attempts=3)
    assert reason.startswith("ValueError in tests/grading/test_grading_errors.py:")
    assert reason.endswith("(grader_with_a_bug), after 3 attempt(s)")
    assert LEAKED_ANSWER not in reason and "cannot compare" not in reason
