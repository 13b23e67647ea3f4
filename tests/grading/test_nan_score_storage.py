"""A NaN score (a valid submission that earns nothing, MECHANICS (c) 1) is stored, served and downloaded:
PostgreSQL's jsonb and strict JSON clients refuse NaN, MLE-bench's report format writes it."""

import json
import math

import pytest

from grading.models import Run
from grading.services import pipeline


@pytest.fixture
def graded_nan(registry_with_packs, alice, lite_bundle, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading.services.intake import submission_create

    submission = submission_create(
        team=alice.teams.get(), user=alice, upload=SimpleUploadedFile("lite.tar.gz", lite_bundle.read_bytes())
    )
    run = Run.objects.filter(submission=submission).select_related("competition").first()
    report = pipeline.invalid_run_report(run, "unused")
    report.update(score=math.nan, valid_submission=True, reason=None)
    pipeline._run_record(run, report)
    return run


def test_a_nan_score_is_stored_as_null_with_a_marker_and_nan_in_the_score_column(graded_nan):
    run = Run.objects.get(pk=graded_nan.pk)
    assert run.status == Run.Status.DONE and run.valid_submission
    assert run.regraded["score"] is None and run.regraded["score_is_nan"] is True
    assert math.isnan(run.score)


def test_the_results_api_answers_strict_json_and_the_report_download_writes_nan(graded_nan, alice_api):
    submission_id = graded_nan.submission_id
    results = alice_api.get(f"/api/v1/submissions/{submission_id}/results/")
    assert results.status_code == 200
    row = next(r for r in json.loads(results.content)["results"] if r["regraded"] and r["regraded"].get("score_is_nan"))
    assert row["regraded"]["score"] is None

    download = alice_api.get(f"/api/v1/submissions/{submission_id}/grading-report/")
    assert download.status_code == 200
    assert download["Content-Disposition"] == f'attachment; filename="submission-{submission_id}_grading_report.json"'
    assert '"score": NaN' in download.content.decode()
    report = json.loads(download.content)  # Python's json, as MLE-bench's scripts read it
    nan_entries = [r for r in report["competition_reports"] if r["score"] is not None and math.isnan(r["score"])]
    assert len(nan_entries) == 1 and "score_is_nan" not in nan_entries[0]


def test_the_report_page_shows_a_nan_score_as_nan(graded_nan, client, alice):
    client.force_login(alice)
    page = client.get(f"/submissions/{graded_nan.submission_id}/grading-report/").content.decode()
    assert 'NaN <span class="muted">(earns nothing)</span>' in page
