"""The red-team corpus (competitions/demo/corpus.py) as real uploads through the pipeline: every cheat is held
(in review, not comparable, its expected flag raised), and honest entries are published comparable.

Each case is built on a few Lite competitions it applies to (its cheat does not need more), from the session's
Lite packs; the cases across teams upload the earlier team's bundle as bob's first. The honest entries cover
the whole Lite split with three seeds, as a comparable entry must.
"""

import pytest

from competitions.demo import corpus as corpora
from grading.models import Flag, Submission
from tests.lite import pipeline_upload

CASES = {case.name: case for case in corpora.red_team() if not case.beyond_files}
HONEST = {case.name: case for case in corpora.honest()}
PER_CASE = 2  # Lite competitions per red-team case
SETTINGS = {"scan_max_bytes": "CHECK_SCAN_MAX_BYTES"}


@pytest.fixture
def upload(registry_with_packs, lite_packs, alice, bob, monkeypatch, settings, django_capture_on_commit_callbacks):
    """Upload a built bundle as alice's (the case's team) or bob's (another team), through every step."""
    from grading import queue
    from leaderboard.tasks import refresh_board

    monkeypatch.setattr(queue, "send", lambda task, pk: None)
    monkeypatch.setattr(refresh_board, "delay", lambda *args, **kwargs: None)

    def send(path, *, user) -> Submission:
        return pipeline_upload(path, user=user, capture=django_capture_on_commit_callbacks)

    def run_case(case: corpora.Case, out, *, competitions=None) -> Submission:
        for name, value in case.settings.items():
            setattr(settings, SETTINGS[name], value)
        chosen = competitions if competitions is not None else case.applies_to[:PER_CASE]
        uploads = case.build(packs=lite_packs, out_dir=out, competitions=chosen)
        *earlier, own = uploads
        for other in earlier:
            send(other.bundle, user=bob if other.team != own.team else alice)
        return send(own.bundle, user=alice)

    return run_case


@pytest.mark.parametrize("name", list(CASES))
def test_the_cheat_is_held(name, upload, tmp_path):
    case = CASES[name]
    submission = upload(case, tmp_path / "case")
    flags = Flag.objects.filter(submission=submission)
    raised = {(f.code, f.severity) for f in flags}
    assert not submission.comparable, (name, sorted(raised))
    if case.expected.blocking:
        assert (case.expected.code, "blocking") in raised, (name, sorted(raised))
        assert submission.status == Submission.Status.IN_REVIEW, (submission.status, submission.status_reason)
    else:
        assert case.expected.code in {code for code, _ in raised}, (name, sorted(raised))


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in HONEST
        if n.startswith(("honest_model/q=0.95", "shared_scaffold", "notebook_images", "binary_checkpoints"))
    ],
)
def test_an_honest_entry_is_published_comparable(name, upload, tmp_path):
    submission = upload(HONEST[name], tmp_path / "case", competitions=corpora.LITE)
    blocking = list(Flag.objects.filter(submission=submission, severity="blocking").values_list("code", "key"))
    assert blocking == []
    assert submission.status == Submission.Status.PUBLISHED, (submission.status, submission.status_reason)
    assert submission.comparable


def test_a_match_with_another_team_names_them_to_maintainers_only(upload, tmp_path, client, alice, bob, maintainer):
    """The public texts of the flag (the team's own pages and API, and the entry once published) say that a file
    matches an earlier submission; which one, and whose, only the review page and the review API say."""
    from django.urls import reverse

    from grading.services.review import flag_decide
    from leaderboard.services import board_refresh

    submission = upload(CASES["reupload/newline"], tmp_path / "case")
    original = Submission.objects.get(team=bob.teams.get())
    flag = Flag.objects.get(submission=submission, code="duplicate_submissions", key="other_team")
    assert flag.severity == "blocking" and "match an earlier submission of another team" in flag.message
    assert flag.private_evidence["other_entries"] == [{"submission": original.pk, "team": "Bob Works"}]
    secrets = ("Bob Works", f"submission {original.pk}", "other_submission", "other_entries")

    def shown(path: str, *, with_message: bool = True) -> str:
        response = client.get(path)
        text = response.content.decode()
        assert response.status_code == 200 and (not with_message or "match an earlier submission" in text), path
        return text

    client.force_login(alice)
    public = [shown(reverse("submission_detail", args=[submission.pk])), shown(f"/api/v1/submissions/{submission.pk}/")]
    client.force_login(maintainer)
    review = shown(reverse("review_submission", args=[submission.pk]))
    review_api = shown("/api/v1/review/flags/")
    for text in (review, review_api):
        assert "Bob Works" in text and "other_submission" in text

    for blocking in Flag.objects.filter(submission=submission, severity="blocking"):
        flag_decide(flag_id=blocking.pk, decision="accept", reason="checked by hand", actor=maintainer)
    board_refresh(submission_ids=[submission.pk])
    submission.refresh_from_db()
    assert submission.status == Submission.Status.PUBLISHED
    client.logout()
    entry = submission.board_entry
    public += [
        shown(reverse("leaderboard_entry", args=[entry.pk])),
        shown(f"/api/v1/entries/{entry.pk}/", with_message=False),
    ]
    for text in public:
        for secret in secrets:
            assert secret not in text, secret


def test_the_entry_page_says_which_seeds_were_merged_and_why(upload, tmp_path, client):
    from django.urls import reverse

    from leaderboard.services import board_refresh

    submission = upload(CASES["cosmetic_seeds/rows_reordered"], tmp_path / "case")
    assert submission.status == Submission.Status.PUBLISHED and not submission.comparable
    board_refresh(submission_ids=[submission.pk])
    page = client.get(reverse("leaderboard_entry", args=[submission.board_entry.pk])).content.decode()
    assert "seeds 0, 1, 2 submitted one file up to cosmetic edits" in page
    assert "seed 1 is identical once parsed and normalised" in page and "count as one seed" in page
