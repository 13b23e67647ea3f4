"""A Lite bundle through the real pipeline: API upload, Redis, Celery worker processes, PostgreSQL."""

import json
import signal
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from grading.models import Run

FINAL = {"in_review", "published", "rejected", "failed"}


def upload(api, path: Path):
    with path.open("rb") as handle:
        return api.post("/api/v1/submissions/", {"bundle": handle}, format="multipart")


def wait_final(api, submission_id: int, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = api.get(f"/api/v1/submissions/{submission_id}/").json()
        if body["status"] in FINAL:
            return body
        time.sleep(0.5)
    raise AssertionError(f"submission {submission_id} not final after {timeout}s: {body}")


def grade_with_command(competition_id: str, path: Path) -> dict:
    out = StringIO()
    call_command("grade", "--competition", competition_id, str(path), stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.mark.worker
def test_a_lite_bundle_is_regraded_and_every_score_equals_the_grade_command(
    registry_with_packs, alice_api, celery_worker, lite_bundle, lite_run_group, mail_dir
):
    response = upload(alice_api, lite_bundle)
    assert response.status_code == 202, response.content
    accepted = response.json()
    assert accepted["status"] == "received" and accepted["url"].endswith(f"/api/v1/submissions/{accepted['id']}/")

    body = wait_final(alice_api, accepted["id"])
    assert body["status"] in ("in_review", "published"), body
    assert body["progress"] == {"done": 66, "total": 66}
    low = body["aggregates"]["low"]
    assert low["complete"]["seeds"] == 3 and low["padded"]["seeds"] == 3
    assert 0 <= low["complete"]["any_medal"]["mean"] <= 100
    assert "seed" in body["seed_rule"].lower()

    results = alice_api.get(f"/api/v1/submissions/{accepted['id']}/results/").json()["results"]
    assert len(results) == 66 and {r["seed"] for r in results} == {0, 1, 2}
    for row in results:
        source = lite_run_group / row["run_id"] / "submission" / "submission.csv"
        expected = grade_with_command(row["competition_id"], source)
        regraded = row["regraded"]
        for key in ("score", "gold_medal", "silver_medal", "bronze_medal", "above_median", "valid_submission"):
            assert regraded[key] == expected[key], (row["competition_id"], row["seed"], key)
    assert all(run.grader_version for run in Run.objects.all())

    report = alice_api.get(f"/api/v1/submissions/{accepted['id']}/grading-report/").json()
    assert report["total_runs"] == 66 and len(report["competition_reports"]) == 66
    assert "reason" not in report["competition_reports"][0]

    # The team hears that grading ended.
    mails = list(mail_dir.glob("*.log"))
    assert mails and f"Submission {accepted['id']}" in mails[0].read_text()
    assert "low: any medal " in mails[0].read_text() and "% over 3 seed(s)" in mails[0].read_text()


@pytest.mark.worker
def test_a_report_that_lies_about_a_score_shows_the_mismatch(
    registry_with_packs, alice_api, celery_worker, lite_run_group, tmp_path
):
    import shutil

    from competitions.demo.runs import default_manifest, write_run_bundle

    group = tmp_path / lite_run_group.name
    shutil.copytree(lite_run_group, group)
    spooky = sorted(p for p in group.iterdir() if p.name.startswith("spooky-author-identification_"))[0]
    honest = grade_with_command("spooky-author-identification", spooky / "submission" / "submission.csv")
    lie = {
        **honest,
        "score": 0.01,
        "gold_medal": True,
        "any_medal": True,
        "submission_path": f"runs/{group.name}/{spooky.name}/submission/submission.csv",
    }
    report = {
        "total_runs": 1,
        "total_runs_with_submissions": 1,
        "total_valid_submissions": 1,
        "total_medals": 1,
        "total_gold_medals": 1,
        "total_silver_medals": 0,
        "total_bronze_medals": 0,
        "total_above_median": 1,
        "competition_reports": [lie],
    }
    (group / "2026-11-30T10-00-00-GMT_grading_report.json").write_text(json.dumps(report))
    bundle = write_run_bundle(run_group=group, out_path=tmp_path / "lying.tar.gz", manifest=default_manifest())

    submission_id = upload(alice_api, bundle).json()["id"]
    body = wait_final(alice_api, submission_id)
    assert body["status"] == "in_review" and body["comparable"] is False
    mismatch = [f for f in body["flags"] if f["code"] == "score_mismatch"]
    assert len(mismatch) == 1 and mismatch[0]["severity"] == "blocking"
    assert "score claimed 0.01, re-graded" in mismatch[0]["message"]
    results = alice_api.get(f"/api/v1/submissions/{submission_id}/results/").json()["results"]
    row = next(r for r in results if r["run_id"] == spooky.name)
    assert row["claimed"]["score"] == 0.01 and row["regraded"]["score"] == honest["score"]


@pytest.mark.worker
def test_a_worker_killed_midway_leaves_the_submission_finishing_on_another(
    registry_with_packs, alice_api, start_worker, lite_bundle
):
    # A short visibility timeout lets Redis hand the killed worker's unacknowledged tasks to the other one.
    victim = start_worker(CELERY_VISIBILITY_TIMEOUT="10")
    survivor = start_worker(CELERY_VISIBILITY_TIMEOUT="10")
    submission_id = upload(alice_api, lite_bundle).json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if Run.objects.filter(submission_id=submission_id, status=Run.Status.DONE).exists():
            break
        time.sleep(0.05)
    victim.kill(signal.SIGKILL)
    body = wait_final(alice_api, submission_id, timeout=300)
    assert body["status"] in ("in_review", "published"), body
    assert body["progress"] == {"done": 66, "total": 66}
    assert Run.objects.filter(submission_id=submission_id).exclude(status=Run.Status.DONE).count() == 0
    assert survivor.process.poll() is None


@pytest.mark.worker
def test_a_maintainer_regrades_a_submission_and_others_cannot(
    registry_with_packs, alice_api, celery_worker, lite_bundle, maintainer
):
    from portal.accounts import services
    from tests.conftest import api_client_for

    submission_id = upload(alice_api, lite_bundle).json()["id"]
    wait_final(alice_api, submission_id)
    first = {run.pk: run.graded_at for run in Run.objects.filter(submission_id=submission_id)}

    denied = alice_api.post(f"/api/v1/submissions/{submission_id}/regrade/")
    assert denied.status_code == 403 and denied.json()["error"]["message"] == "Only maintainers can do this."

    services.team_create(user=maintainer, name="Maintainers")
    maint_api = api_client_for(maintainer)
    assert maint_api.post(f"/api/v1/submissions/{submission_id}/regrade/").status_code == 202
    body = wait_final(alice_api, submission_id)
    assert body["progress"] == {"done": 66, "total": 66}
    again = {run.pk: run.graded_at for run in Run.objects.filter(submission_id=submission_id)}
    assert all(again[pk] > first[pk] for pk in first)
    assert maint_api.post("/api/v1/submissions/regrade-all/").json() == {"queued": 1}
    wait_final(alice_api, submission_id)
