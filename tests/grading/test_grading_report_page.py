"""The server's grading report as a page: one row per competition report, seen by whoever sees the
submission, and linked from the submission page next to the JSON download."""

import pytest

from competitions.services import competitions_load
from grading.models import Submission
from tests.grading.builders import reported_submission


@pytest.fixture
def alices_submission(alice):
    competitions_load()
    return reported_submission(alice.teams.get())


def test_alice_sees_each_report_with_score_validity_medal_thresholds_and_reason(client, alice, alices_submission):
    client.force_login(alice)
    response = client.get(f"/submissions/{alices_submission.pk}/grading-report/")
    assert response.status_code == 200
    rows = response.context["table"].rows
    assert [(row.seed, row.medal, row.report.valid_submission) for row in rows] == [
        (0, "silver", True),
        (1, "none", False),
    ]
    assert response.context["table"].totals["total_medals"] == 1
    page = response.content.decode()
    for text in (
        "spooky-author-identification",
        "0.2512",
        "silver",
        "0.16506",
        "0.26996",
        "0.29381",
        "0.418785",
        "lower",
        "invalid",
        "has 1 value that is not a number",
    ):
        assert text in page


def test_the_submission_page_links_the_report_page_next_to_the_download(client, alice, alices_submission):
    client.force_login(alice)
    page = client.get(f"/submissions/{alices_submission.pk}/").content.decode()
    assert f'href="/submissions/{alices_submission.pk}/grading-report/" id="report-view"' in page
    assert f'href="/api/v1/submissions/{alices_submission.pk}/grading-report/" id="report-download" download' in page


def test_the_download_is_an_attachment_with_a_file_name(client, alice, alices_submission):
    client.force_login(alice)
    response = client.get(f"/api/v1/submissions/{alices_submission.pk}/grading-report/")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="submission-{alices_submission.pk}_grading_report.json"'
    )
    assert "reason" not in response.json()["competition_reports"][0]


def test_bob_cannot_see_the_report_of_alices_unpublished_submission(client, bob, alices_submission):
    client.force_login(bob)
    assert client.get(f"/submissions/{alices_submission.pk}/grading-report/").status_code == 404
    assert client.get(f"/submissions/{alices_submission.pk}/").status_code == 404


def test_an_anonymous_visitor_gets_404_for_an_unpublished_report_as_for_the_submission(client, alices_submission):
    assert client.get(f"/submissions/{alices_submission.pk}/grading-report/").status_code == 404
    assert client.get(f"/submissions/{alices_submission.pk}/").status_code == 404


def test_everyone_sees_the_report_of_a_published_submission(client, bob, alices_submission):
    Submission.objects.filter(pk=alices_submission.pk).update(status=Submission.Status.PUBLISHED)
    assert client.get(f"/submissions/{alices_submission.pk}/grading-report/").status_code == 200
    client.force_login(bob)
    assert client.get(f"/submissions/{alices_submission.pk}/grading-report/").status_code == 200
