import re

import pytest
from playwright.sync_api import expect

from grading.models import Submission


@pytest.mark.browser
@pytest.mark.worker
def test_a_member_uploads_a_bundle_in_the_browser_and_follows_it_live(
    page, live_server, registry_with_packs, alice, celery_worker, lite_bundle
):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", "alice@example.org")
    page.fill("input[name=password]", "alice-password-1")
    page.locator("form button[type=submit]").last.click()
    page.goto("/submit/")
    page.set_input_files("#bundle", str(lite_bundle))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/submissions/\d+/$"), timeout=60000)
    # The page follows the pipeline without a manual reload until the status is final.
    # A locator wait, not wait_for_function: the portal's CSP allows no eval in the page.
    expect(page.locator("#status")).to_have_text(re.compile(r"^\s*(in_review|published)\s*$"), timeout=240000)
    page.wait_for_selector("#aggregates", timeout=30000)
    assert "66 of 66 runs graded" in page.inner_text("#progress-text")
    assert page.locator("#runs tbody tr").count() == 66
    submission = Submission.objects.get()
    assert submission.team.name == "Alice Lab" and submission.created_by == alice


def test_bob_cannot_open_alices_unpublished_submission_page(client, alice, bob, db):
    from competitions.services import competitions_load

    benchmark, _, _ = competitions_load()
    submission = Submission.objects.create(team=alice.teams.get(), created_by=alice, benchmark=benchmark)
    client.force_login(bob)
    assert client.get(f"/submissions/{submission.pk}/").status_code == 404
    client.force_login(alice)
    assert client.get(f"/submissions/{submission.pk}/").status_code == 200
