"""The review queue by what needs a decision, the review page's words and forms, and the team's mail."""

import re

import pytest
from django.utils import timezone

from competitions.services import competitions_load
from grading.models import SEVERITY_WORDS, Flag, Submission
from grading.services.review import entry_decide, flag_decide
from tests.grading.builders import flagged_submission

S = Submission.Status
WARNING = {"code": "insufficient_seeds", "severity": "warning", "key": "low"}


def _aged(submission, days):
    Submission.objects.filter(pk=submission.pk).update(created_at=timezone.now() - timezone.timedelta(days=days))
    return submission


def test_blocking_entries_come_first_then_warnings_in_review_then_warnings_on_published_entries(
    client, maintainer, alice, bob, db
):
    competitions_load()
    published = _aged(flagged_submission(bob.teams.get(), status=S.PUBLISHED, flags=[WARNING]), 9)  # oldest
    warned = _aged(flagged_submission(bob.teams.get(), flags=[WARNING]), 5)
    blocked = flagged_submission(  # newest, but held off the board
        alice.teams.get(),
        flags=[
            WARNING,
            {"code": "test_set_feedback", "severity": "blocking", "key": "a"},
            {"code": "answer_copy", "severity": "blocking", "key": "spooky-author-identification/seed-0"},
        ],
    )
    client.force_login(maintainer)
    text = client.get("/review/").content.decode()
    order = [int(n) for n in re.findall(r'<section class="queue-entry" id="entry-(\d+)"', text)]
    assert order == [blocked.pk, warned.pk, published.pk]
    assert text.index('id="group-blocking"') < text.index('id="group-warning"') < text.index('id="group-published"')
    section = text[text.index(f'id="entry-{blocked.pk}"') : text.index(f'id="entry-{warned.pk}"')]
    assert (
        '<span class="badge bad">2 blocking</span>' in section
        and '<span class="badge warn">1 warning</span>' in section
    )
    assert "team Alice Lab" in section and "Agent X" in section and "in review" in section
    # Within the entry, its blocking flags before its warning.
    assert section.index("answer_copy") < section.index("insufficient_seeds")
    assert section.index("test_set_feedback") < section.index("insufficient_seeds")


def test_every_flag_says_how_serious_it_is_in_words(client, maintainer, entry):
    Flag.objects.create(
        submission=entry, code="insufficient_seeds", severity="warning", key="low", message="m", evidence={"seeds": 2}
    )
    Flag.objects.create(submission=entry, code="medals_unknown", severity="info", key="x", message="m")
    client.force_login(maintainer)
    text = client.get(f"/review/submissions/{entry.pk}/").content.decode()
    for severity in ("blocking", "warning", "info"):
        words = SEVERITY_WORDS[severity]
        assert f'<p class="seriousness seriousness-{severity}">{words}.</p>' in text
    assert text.index("seriousness-blocking") < text.index("seriousness-warning") < text.index("seriousness-info")
    # A blocking flag's evidence is open; a warning's is one click away (its message says what it is).
    sections = {code: text[text.index(f'data-code="{code}"') :] for code in ("test_set_feedback", "insufficient_seeds")}
    blocking, warning = sections["test_set_feedback"], sections["insufficient_seeds"]
    assert blocking.index('<div class="evidence">') < blocking.find('<details class="evidence-fold">')
    assert warning.index('<details class="evidence-fold"><summary>evidence</summary>') < warning.index("<dt>seeds</dt>")
    assert SEVERITY_WORDS["blocking"].startswith("Blocking — the entry stays off the board until a maintainer")
    assert SEVERITY_WORDS["warning"].startswith("Warning — does not block publication")
    client.force_login(entry.created_by)  # the team reads the same words on its own page
    assert SEVERITY_WORDS["blocking"] in client.get(f"/submissions/{entry.pk}/").content.decode()


def test_no_decision_is_chosen_for_the_maintainer_and_sending_none_says_so(client, maintainer, entry):
    flag = entry.flags.get()
    client.force_login(maintainer)
    text = client.get(f"/review/submissions/{entry.pk}/").content.decode()
    radios = re.findall(r'<input type="radio" name="(?:flag-\d+|entry)-decision"[^>]*>', text)
    assert len(radios) == 8 and not [r for r in radios if "checked" in r] and all("required" in r for r in radios)
    assert "<select" not in text[text.index('id="decide-flag') :]
    response = client.post(
        f"/review/flags/{flag.pk}/decision/", {f"flag-{flag.pk}-reason": "Looks like validation."}, follow=True
    )
    shown = response.content.decode()
    assert "Nothing was decided on flag test_set_feedback (bundle). Choose a decision: none is made for you." in shown
    response = client.post(f"/review/submissions/{entry.pk}/decision/", {"entry-reason": "x"}, follow=True)
    assert f"Nothing was decided on submission {entry.pk}. Choose a decision" in response.content.decode()
    flag.refresh_from_db()
    entry.refresh_from_db()
    assert flag.decision == "" and entry.status == S.IN_REVIEW and not entry.review_events.exists()


def test_hostile_evidence_is_escaped_and_its_match_still_marked(client, maintainer, alice, db):
    competitions_load()
    line = "<script>alert(1)</script> gold_medal <img src=x onerror=alert(2)>"
    start = line.index("gold_medal")
    hostile = flagged_submission(
        alice.teams.get(),
        flags=[
            {
                "code": "test_set_feedback",
                "severity": "blocking",
                "key": "grader_fields",
                "message": "<b>bold</b> claim",
                "evidence": {
                    "hits": [
                        {
                            "file": "runs/g/<i>x</i>/logs/a.log",
                            "line": 2,
                            "excerpt": ["1: <svg onload=alert(3)>", f"2: {line}"],
                            "match": [start, start + 10],
                        }
                    ]
                },
            }
        ],
    )
    client.force_login(maintainer)
    text = client.get(f"/review/submissions/{hostile.pk}/").content.decode()
    for raw in ("<script>alert", "<img src=x", "<svg onload", "<b>bold", "<i>x</i>"):
        assert raw not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>gold_medal</mark> &lt;img src=x onerror=alert(2)&gt;" in text
    assert '<span class="line-number">2</span>' in text and '<span class="line-number">1</span>' in text


def test_the_mail_says_what_was_decided_on_what_and_what_is_left(
    entry, maintainer, mailoutbox, django_capture_on_commit_callbacks
):
    for code, key in (("answer_copy", "spaceship-titanic/seed-0"), ("score_mismatch", "spooky/seed-1")):
        Flag.objects.create(submission=entry, code=code, severity="blocking", key=key, message="m")
    with django_capture_on_commit_callbacks(execute=True):
        flag_decide(
            flag_id=entry.flags.get(code="answer_copy").pk, decision="accept", reason="Not a copy.", actor=maintainer
        )
    mail = mailoutbox[-1]
    assert mail.subject == (
        f"Submission {entry.pk}: flag answer_copy (spaceship-titanic/seed-0) accepted; 2 flags still open"
    )
    assert "- flag score_mismatch (spooky/seed-1), blocking" in mail.body
    assert "- flag test_set_feedback (bundle), blocking" in mail.body
    with django_capture_on_commit_callbacks(execute=True):
        entry_decide(submission_id=entry.pk, decision="non_comparable", reason="Seed 1 differs.", actor=maintainer)
    assert mailoutbox[-1].subject == (
        f"Submission {entry.pk}: the whole entry (2 open flags settled) marked non-comparable; "
        "no flag left open; the entry is published"
    )
    assert "Still waiting" not in mailoutbox[-1].body


@pytest.mark.parametrize("decision, status", [("reject", "rejected"), ("request_changes", "changes requested")])
def test_the_mail_of_an_entry_sent_away_says_where_it_is(
    entry, maintainer, mailoutbox, django_capture_on_commit_callbacks, decision, status
):
    with django_capture_on_commit_callbacks(execute=True):
        flag_decide(flag_id=entry.flags.get().pk, decision=decision, reason="No.", actor=maintainer)
    assert mailoutbox[-1].subject.endswith(f"; the entry is {status}")


@pytest.mark.browser
def test_a_maintainer_sees_the_blocking_entry_first_one_line_marked_and_must_choose(
    page, transactional_db, alice, bob, maintainer
):
    competitions_load()
    _aged(flagged_submission(bob.teams.get(), status=S.PUBLISHED, flags=[WARNING]), 3)
    long_line = "x" * 1500 + " gold_medal " + "y" * 1500
    entry = flagged_submission(
        alice.teams.get(),
        flags=[
            {
                "code": "test_set_feedback",
                "severity": "blocking",
                "key": "grader_fields",
                "evidence": {
                    "hits": [
                        {
                            "file": "runs/g/a/logs/agent.log",
                            "line": 9,
                            "excerpt": ["7: loading", "8: training", f"9: {long_line[1380:1620]}", "10: done"],
                            "match": [121, 131],
                        }
                    ]
                },
            }
        ],
    )
    page.goto("/accounts/login/")
    page.fill("input[name=login]", "maya@example.org")
    page.fill("input[name=password]", "maya-password-1")
    page.locator("form button[type=submit]").last.click()
    page.wait_for_url(re.compile(r".*/team/$"))
    page.goto("/review/")
    first = page.locator("#queue section.queue-entry").first
    assert first.get_attribute("id") == f"entry-{entry.pk}" and "1 blocking" in first.inner_text()
    first.locator("h3 a").click()
    page.wait_for_url(re.compile(rf".*/review/submissions/{entry.pk}/$"))
    flag = page.locator("section.flag").first
    assert SEVERITY_WORDS["blocking"] in flag.inner_text()
    hit_line = flag.locator("pre.hit-line")
    assert hit_line.locator(".line-number").all_inner_texts() == ["9"]  # one number, the hit's own
    mark = hit_line.locator("mark")
    assert mark.inner_text() == "gold_medal" and mark.is_visible()
    box, line_box = mark.bounding_box(), hit_line.bounding_box()
    assert (
        box and line_box and line_box["x"] <= box["x"] and box["x"] + box["width"] <= line_box["x"] + line_box["width"]
    )
    context = flag.locator("details.context")
    assert not context.locator("pre").is_visible()  # the context is one click away
    context.locator("summary").click()
    assert context.locator(".line-number").all_inner_texts() == ["7", "8", "9", "10"]
    form = flag.locator("form")
    assert form.locator("input[type=radio]:checked").count() == 0
    form.locator("textarea").fill("Seen; it is the validation score.")
    form.locator("button[type=submit]").click()  # no decision chosen: the browser refuses to send it
    assert page.evaluate("document.querySelector('section.flag input[type=radio]').validationMessage")
    assert page.url.endswith(f"/review/submissions/{entry.pk}/")
    flag_row = entry.flags.get()
    assert flag_row.decision == ""
    form.locator("input[type=radio][value=accept]").check()
    form.locator("button[type=submit]").click()
    page.wait_for_selector(".messages, #audit-trail")
    flag_row.refresh_from_db()
    assert flag_row.decision == "accept"
