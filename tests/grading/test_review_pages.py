"""The review queue and review pages (maintainers only), the public audit trail, the team's answer, re-upload."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from competitions.services import competitions_load
from grading.models import Flag, ReviewEvent, Submission
from grading.services.review import entry_decide
from tests.grading.builders import flagged_submission


@pytest.fixture
def entry(db, alice):
    competitions_load()
    return flagged_submission(alice.teams.get(), user=alice)


def test_team_members_outsiders_and_anonymous_visitors_get_403_and_see_nothing(client, entry, alice, bob):
    flag = entry.flags.get()
    for user in (alice, bob, None):
        client.logout()
        if user:
            client.force_login(user)
        for response in (
            client.get("/review/"),
            client.get("/review/?code=test_set_feedback"),
            client.get(f"/review/submissions/{entry.pk}/"),
            client.post(
                f"/review/flags/{flag.pk}/decision/",
                {f"flag-{flag.pk}-decision": "accept", f"flag-{flag.pk}-reason": "x"},
            ),
            client.post(f"/review/submissions/{entry.pk}/decision/", {"entry-decision": "accept", "entry-reason": "x"}),
        ):
            text = response.content.decode()
            assert response.status_code == 403
            assert "test_set_feedback" not in text and "leaderboard says" not in text
    assert not ReviewEvent.objects.exists()


def test_the_queue_groups_open_flags_by_submission_with_filters(client, maintainer, entry, bob):
    other = flagged_submission(bob.teams.get(), flags=[{"code": "score_mismatch", "severity": "warning"}])
    client.force_login(maintainer)
    text = client.get("/review/").content.decode()
    assert text.index(f'id="entry-{entry.pk}"') < text.index(f'id="entry-{other.pk}"')
    filtered = client.get("/review/?code=score_mismatch").content.decode()
    assert f'id="entry-{other.pk}"' in filtered and f'id="entry-{entry.pk}"' not in filtered
    assert f'id="entry-{entry.pk}"' in client.get("/review/?severity=blocking&team=Alice+Lab").content.decode()
    assert "No flags are waiting" in client.get("/review/?older_than_days=5").content.decode()


def test_the_review_page_shows_evidence_and_numbers(client, maintainer, entry):
    flagged_submission(entry.team, flags=[])  # another entry, not shown
    Flag.objects.create(
        submission=entry,
        code="duplicate_submissions",
        severity="warning",
        key="dup",
        message="dup",
        evidence={"files": [{"path": "runs/g/a/submission.csv", "sha256": "ab12"}]},
    )
    client.force_login(maintainer)
    text = client.get(f"/review/submissions/{entry.pk}/").content.decode()
    assert "runs/group/spooky_0/logs/agent.log" in text and "leaderboard says: test accuracy 0.91" in text
    assert (
        '<span class="line-number">41</span> <span class="hit-text">'
        "leaderboard says: test accuracy 0.91, <mark>silver medal</mark>" in text
    )
    assert "ab12" in text and "runs/g/a/submission.csv" in text
    assert 'id="review-runs"' in text and "0.45" in text and "0.2" in text


def test_a_decision_from_the_page_needs_a_reason(client, maintainer, entry):
    flag = entry.flags.get()
    client.force_login(maintainer)
    response = client.post(
        f"/review/flags/{flag.pk}/decision/",
        {f"flag-{flag.pk}-decision": "accept", f"flag-{flag.pk}-reason": ""},
        follow=True,
    )
    text = response.content.decode()
    assert "Nothing was decided on flag test_set_feedback (bundle)." in text and "Give a reason" in text
    flag.refresh_from_db()
    assert flag.decision == ""


def test_the_public_page_shows_the_trail_and_the_team_answers_there(client, entry, alice, bob, maintainer):
    entry_decide(
        submission_id=entry.pk, decision="non_comparable", reason="The agent saw its test score.", actor=maintainer
    )
    client.force_login(bob)  # published now: everyone sees it, only the team answers
    text = client.get(f"/submissions/{entry.pk}/").content.decode()
    assert "The agent saw its test score." in text and 'id="non-comparable"' in text and 'id="team-answer"' not in text
    assert client.post(f"/submissions/{entry.pk}/answer/", {"text": "not mine"}).status_code == 403
    client.force_login(alice)
    assert 'id="team-answer"' in client.get(f"/submissions/{entry.pk}/").content.decode()
    client.post(f"/submissions/{entry.pk}/answer/", {"text": "It was the validation score."})
    client.logout()
    trail = client.get(f"/submissions/{entry.pk}/").content.decode()
    assert "It was the validation score." in trail and "alice" in trail and "maya" in trail


def test_a_new_upload_names_the_submission_it_replaces(entry, alice, bob, maintainer, alice_api, lite_bundle):
    entry_decide(submission_id=entry.pk, decision="request_changes", reason="Add the logs.", actor=maintainer)

    def upload(client, replaces):
        with open(lite_bundle, "rb") as bundle:
            return client.post(
                "/api/v1/submissions/",
                {"bundle": SimpleUploadedFile("b.tar.gz", bundle.read()), "replaces": replaces},
                format="multipart",
            )

    from tests.conftest import api_client_for

    refused = upload(api_client_for(bob), entry.pk)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_replaces"
    accepted = upload(alice_api, entry.pk)
    assert accepted.status_code == 202, accepted.json()
    assert Submission.objects.get(pk=accepted.json()["id"]).replaces == entry
    again = upload(alice_api, accepted.json()["id"])  # not in changes_requested
    assert again.status_code == 400 and again.json()["error"]["code"] == "invalid_replaces"


@pytest.mark.browser
def test_a_maintainer_marks_an_entry_non_comparable_in_a_real_browser(page, transactional_db, alice, maintainer):
    competitions_load()
    entry = flagged_submission(alice.teams.get(), user=alice)
    page.goto("/accounts/login/")
    page.fill("input[name=login]", "maya@example.org")
    page.fill("input[name=password]", "maya-password-1")
    page.locator("form button[type=submit]").last.click()
    page.wait_for_url(re.compile(r".*/team/$"))
    page.goto("/review/")
    page.click(f"#entry-{entry.pk} h3 a")
    page.wait_for_url(re.compile(rf".*/review/submissions/{entry.pk}/$"))
    evidence = page.locator("section.flag[data-code=test_set_feedback] .evidence").inner_text()
    assert "runs/group/spooky_0/logs/agent.log" in evidence and "leaderboard says: test accuracy 0.91" in evidence
    page.check("#decide-entry input[name=entry-decision][value=non_comparable]")
    page.fill("#decide-entry textarea[name=entry-reason]", "The agent read its test accuracy during the run.")
    page.click("#decide-entry button[type=submit]")
    page.wait_for_selector("#audit-trail")
    page.context.clear_cookies()
    page.goto(f"/submissions/{entry.pk}/")
    assert "The agent read its test accuracy during the run." in page.locator("#non-comparable").inner_text()
    assert "non-comparable" in page.locator("#audit-trail").inner_text().replace(" ", "-")


@pytest.mark.parametrize("replaces", ["\u00b2", "9" * 400, "-1"])
def test_an_odd_replaces_is_a_400_that_names_the_field(entry, alice_api, lite_bundle, replaces):
    with open(lite_bundle, "rb") as bundle:
        response = alice_api.post(
            "/api/v1/submissions/",
            {"bundle": SimpleUploadedFile("b.tar.gz", bundle.read()), "replaces": replaces},
            format="multipart",
        )
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == "invalid_replaces"
    assert error["details"] == {"field": "replaces"} and len(error["message"]) < 100
    assert Submission.objects.count() == 1  # nothing left behind


@pytest.mark.parametrize("wanted", ["\u00b2", "9" * 400])
def test_an_odd_team_for_a_browser_upload_is_a_400_that_names_the_field(entry, client, alice, lite_bundle, wanted):
    client.force_login(alice)
    with open(lite_bundle, "rb") as bundle:
        response = client.post(f"/api/v1/submissions/?team={wanted}", {"bundle": bundle})
    error = response.json()["error"]
    assert response.status_code == 400 and error["details"] == {"field": "team"} and len(error["message"]) < 100
    assert Submission.objects.count() == 1
