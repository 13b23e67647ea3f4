import pytest
from django.core.management import CommandError, call_command

from grading.models import Run, Submission


@pytest.fixture
def published(db, alice):
    from competitions.models import Competition
    from competitions.services import competitions_load

    benchmark, _, _ = competitions_load()
    submission = Submission.objects.create(
        team=alice.teams.get(),
        created_by=alice,
        benchmark=benchmark,
        status=Submission.Status.PUBLISHED,
        progress_done=1,
        progress_total=1,
    )
    Run.objects.create(
        submission=submission,
        competition=Competition.objects.get(slug="spooky-author-identification"),
        seed=0,
        run_group="g",
        run_id="spooky-author-identification_1",
        status=Run.Status.DONE,
    )
    return submission


def test_a_maintainer_regrades_from_the_submission_page(
    client, maintainer, published, django_capture_on_commit_callbacks
):
    client.force_login(maintainer)
    assert "Re-grade this submission" in client.get(f"/submissions/{published.pk}/").content.decode()
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(f"/submissions/{published.pk}/regrade/")
    assert response.status_code == 302
    # The runs are dispatched, and the board hears that a published entry left it while it is re-graded.
    assert sorted(c.__qualname__ for c in callbacks) == [
        "entry_changed_receiver.<locals>.after_commit",
        "runs_dispatch",
    ]
    published.refresh_from_db()
    assert published.status == "grading" and published.progress_done == 0
    assert Run.objects.get().status == Run.Status.PENDING


def test_a_team_member_cannot_regrade(client, alice, published):
    client.force_login(alice)
    assert "Re-grade this submission" not in client.get(f"/submissions/{published.pk}/").content.decode()
    assert client.post(f"/submissions/{published.pk}/regrade/").status_code == 403
    assert client.post("/review/regrade-all/").status_code == 403
    published.refresh_from_db()
    assert published.status == "published"


def test_the_regrade_command_takes_ids_or_all(published, capsys):
    call_command("regrade", str(published.pk))
    assert f"{published.pk}: queued" in capsys.readouterr().out
    call_command("regrade", str(published.pk))
    assert "not re-gradable" in capsys.readouterr().out
    with pytest.raises(CommandError, match="Give submission ids or --all"):
        call_command("regrade")
