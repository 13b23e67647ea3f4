"""Random audits (SPEC section 9, README "Audits") through the real pipeline, the hosted worker API standing in
for a worker: chosen at upload from the board's head and the id, queued below teams' hosted runs, free of quota,
graded when their tasks end and compared with the entry's own numbers. The run with a real worker process is
tests/runners/test_audit_end_to_end.py."""

import shutil

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.audit_choice import audit_choice, audit_seed
from grading.models import Audit, Flag, Run, Submission
from leaderboard import services
from leaderboard.history import board_head
from leaderboard.models import Entry
from runners.models import HostedRun, HostedTask
from runners.selectors import hosted_run_list
from runners.services.assembly import hosted_run_assemble
from runners.services.hosted import HostedRunRequest, hosted_run_create
from runners.services.workers import WorkerRefused, task_claim, task_finish
from tests.lite import pipeline_upload
from tests.runners.builders import collected_archive, outcome, worker_client

IMAGE = "example-agent:latest"


@pytest.fixture
def sent(monkeypatch):
    """What would go to the broker: (args, options) per hosted task message."""
    messages: list[tuple] = []
    monkeypatch.setattr("runners.queue.app.send_task", lambda name, **kw: messages.append((name, kw)))
    return messages


@pytest.fixture
def upload(registry_with_packs, alice, monkeypatch, django_capture_on_commit_callbacks, sent):
    from grading import queue
    from leaderboard.tasks import refresh_board

    monkeypatch.setattr(queue, "send", lambda task, pk: None)
    monkeypatch.setattr(refresh_board, "delay", lambda *args, **kwargs: None)

    def send(path, *, user=alice) -> Submission:
        return pipeline_upload(path, user=user, capture=django_capture_on_commit_callbacks, commit_create=True)

    return send


def _bundle(tmp_path, lite_packs, *, image=IMAGE, quality=0.9, name="bundle"):
    group = write_run_group(out_dir=tmp_path / name, seeds=(0, 1), quality=quality, answers=pack_answers(lite_packs))
    manifest = default_manifest(split="low", seeds=2)
    if image is not None:
        manifest["agent"]["image"] = image
    return group, write_run_bundle(run_group=group, out_path=tmp_path / f"{name}.tar.gz", manifest=manifest)


def _files_of(group, competition):
    """The submission files of a run group's runs on one competition, by seed order."""
    return sorted(group.glob(f"{competition}_*/submission/submission.csv"))


def _finish_tasks(audit: Audit, worker, group) -> None:
    """A worker claims every task of the audit and sends back, as each one's output, a run group's file."""
    from runners.capability import task_capability

    for task in HostedTask.objects.filter(hosted_run__audit=audit).select_related("competition"):
        task_claim(
            worker=worker,
            task_id=task.pk,
            attempt=1,
            capability=task_capability(task_id=task.pk, attempt=1),
            public_data_url=lambda slug: f"http://portal/{slug}",
        )
        data = _files_of(group, task.competition.slug)[task.seed % 2].read_bytes()
        archive = collected_archive(files={"submission/submission.csv": data, "run.log": b"ran\n"})
        upload = SimpleUploadedFile("collected.tar.gz", archive.read())
        task_finish(worker=worker, task_id=task.pk, outcome=__import__("json").loads(outcome()), archive=upload)


def test_an_upload_naming_an_image_is_audited_on_competitions_chosen_from_the_head_and_its_id(
    upload, alice, lite_packs, tmp_path, sent
):
    worker_client(gpus=2)
    head = board_head()
    _, bundle = _bundle(tmp_path, lite_packs)
    submission = upload(bundle)
    audit = Audit.objects.get(submission=submission)
    candidates = sorted(set(Run.objects.filter(submission=submission).values_list("competition__slug", flat=True)))
    assert (audit.head_seq, audit.head_hash) == (head.seq, head.hash)
    assert audit.seed == audit_seed(head_hash=head.hash, submission_id=submission.pk)
    assert audit.candidates == candidates
    assert audit.competitions == audit_choice(seed=audit.seed, candidates=candidates, k=2)
    assert len(audit.competitions) == 2 and audit.image == IMAGE and audit.status == Audit.Status.QUEUED
    run = HostedRun.objects.get(audit=audit)
    assert run.team == submission.team and run.image == IMAGE and run.seeds == 2
    assert sorted(run.tasks.values_list("competition__slug", "seed")) == sorted(
        (slug, seed) for slug in audit.competitions for seed in (0, 1)
    )
    # Queued at the broker's lowest priority; not the team's: not listed among its runs, no quota taken.
    assert len(sent) == 4 and all(kw["priority"] == 9 for _, kw in sent)
    assert hosted_run_list(user=alice) == []
    with override_settings(HOSTED_RUNS_DAILY_QUOTA=1):
        team_run = hosted_run_create(
            team=alice.teams.get(),
            user=alice,
            request=HostedRunRequest(
                image=IMAGE, split="low", seeds=1, time_limit_hours=1, competitions=(audit.competitions[0],)
            ),
        )
    assert team_run.audit is None


def test_audit_tasks_wait_below_a_teams_hosted_task(upload, alice, lite_packs, tmp_path):
    from runners.capability import task_capability

    worker, _ = worker_client(gpus=2, slots=4)
    _, bundle = _bundle(tmp_path, lite_packs)
    audit = Audit.objects.get(submission=upload(bundle))
    team_run = hosted_run_create(
        team=alice.teams.get(),
        user=alice,
        request=HostedRunRequest(
            image=IMAGE, split="low", seeds=1, time_limit_hours=1, competitions=("spooky-author-identification",)
        ),
    )
    audit_task = HostedTask.objects.filter(hosted_run__audit=audit).first()

    def claim(task):
        return task_claim(
            worker=worker,
            task_id=task.pk,
            attempt=1,
            capability=task_capability(task_id=task.pk, attempt=1),
            public_data_url=lambda slug: slug,
        )

    with pytest.raises(WorkerRefused) as refused:
        claim(audit_task)
    assert refused.value.code == "does_not_fit" and "a team's hosted task waits" in refused.value.message
    claim(team_run.tasks.get())  # the team's task goes first
    assert claim(audit_task)["task_id"] == audit_task.pk  # then the audit's


def test_no_image_means_could_not_run_and_the_entry_page_says_why(upload, lite_packs, tmp_path, client):
    _, bundle = _bundle(tmp_path, lite_packs, image=None)
    submission = upload(bundle)
    audit = Audit.objects.get(submission=submission)
    assert audit.status == Audit.Status.COULD_NOT_RUN and "names no agent image" in audit.reason
    assert not HostedRun.objects.filter(audit=audit).exists()
    services.board_refresh(submission_ids=[submission.pk])
    entry = Entry.objects.get(submission=submission)
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    assert 'data-audit="could_not_run"' in page and "Audit could not run" in page and "names no agent image" in page
    assert "The entry stays at its lower evidence level." in page
    assert client.get(f"/api/v1/entries/{entry.pk}/").json()["audit"]["status"] == "could_not_run"


def test_no_worker_able_to_run_it_means_could_not_run(upload, lite_packs, tmp_path):
    worker_client(gpus=0)  # the manifest declares one GPU per run
    _, bundle = _bundle(tmp_path, lite_packs)
    audit = Audit.objects.get(submission=upload(bundle))
    assert audit.status == Audit.Status.COULD_NOT_RUN
    assert audit.reason.startswith("no worker able to run it: no worker has 1 GPU")


def _registered_bundle(alice, tmp_path, lite_packs, *, name="bundle"):
    from grading.services.registrations import registration_create

    registration = registration_create(
        team=alice.teams.get(), user=alice, agent_name="demo-agent", agent_version="1.0", split="low", seeds=2
    )
    group = write_run_group(
        out_dir=tmp_path / name, seeds=(0, 1), quality=0.9, answers=pack_answers(lite_packs), nonce=registration.nonce
    )
    manifest = {**default_manifest(split="low", seeds=2), "registration": registration.pk}
    manifest["agent"]["image"] = IMAGE
    return group, write_run_bundle(run_group=group, out_path=tmp_path / f"{name}.tar.gz", manifest=manifest)


def test_an_audit_that_reproduces_the_numbers_passes_and_the_entry_reaches_audited(
    upload, alice, lite_packs, tmp_path, client, django_capture_on_commit_callbacks
):
    worker, _ = worker_client(gpus=2, slots=8)
    group, bundle = _registered_bundle(alice, tmp_path, lite_packs)
    submission = upload(bundle)
    assert submission.status == Submission.Status.PUBLISHED, submission.status_reason
    audit = Audit.objects.get(submission=submission)
    with django_capture_on_commit_callbacks(execute=True):
        _finish_tasks(audit, worker, group)  # the same files as the bundle's: the agent reproduces itself
    hosted_run_assemble(hosted_run_id=HostedRun.objects.get(audit=audit).pk)
    audit.refresh_from_db()
    assert audit.status == Audit.Status.PASSED, audit.reason
    assert [v["disagrees"] for v in audit.comparison["competitions"]] == [False, False]
    assert len(audit.runs) == 4 and all(r["valid"] for r in audit.runs)
    assert HostedRun.objects.get(audit=audit).status == HostedRun.Status.DONE
    services.board_refresh(submission_ids=[submission.pk])
    entry = Entry.objects.get(submission=submission)
    assert entry.evidence_level == "audited"
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    assert "Random audit" in page and "passed" in page and audit.competitions[0] in page
    api = client.get(f"/api/v1/entries/{entry.pk}/").json()
    assert api["audit"]["status"] == "passed" and api["audit"]["head"]["hash"] == audit.head_hash
    assert len(api["audit"]["runs"]) == 4


def test_an_audit_far_below_the_bundles_numbers_is_a_blocking_finding_with_both_sets(
    upload, alice, lite_packs, tmp_path, client, django_capture_on_commit_callbacks
):
    worker, _ = worker_client(gpus=2, slots=8)
    _, bundle = _registered_bundle(alice, tmp_path, lite_packs)
    weak = write_run_group(out_dir=tmp_path / "weak", seeds=(0, 1), quality=0.05, answers=pack_answers(lite_packs))
    submission = upload(bundle)
    assert submission.status == Submission.Status.PUBLISHED
    audit = Audit.objects.get(submission=submission)
    with django_capture_on_commit_callbacks(execute=True):
        _finish_tasks(audit, worker, weak)
        hosted_run_assemble(hosted_run_id=HostedRun.objects.get(audit=audit).pk)
    audit.refresh_from_db()
    assert audit.status == Audit.Status.DISAGREES, audit.reason
    flag = Flag.objects.get(submission=submission, code="audit", key="disagrees")
    assert flag.severity == "blocking"
    (first, *_) = flag.evidence["competitions"]
    assert first["bundle_scores"] and first["audit_scores"] and first["disagrees"]
    submission.refresh_from_db()
    assert submission.status == Submission.Status.IN_REVIEW
    shutil.rmtree(tmp_path / "weak")


def test_re_runs_that_all_fail_leave_the_audit_could_not_run_with_the_reason(upload, lite_packs, tmp_path):
    import json

    from runners.capability import task_capability

    worker, _ = worker_client(gpus=2, slots=8)
    _, bundle = _bundle(tmp_path, lite_packs, image="no-such-agent:1")
    submission = upload(bundle)
    audit = Audit.objects.get(submission=submission)
    for task in HostedTask.objects.filter(hosted_run__audit=audit):
        task_claim(
            worker=worker,
            task_id=task.pk,
            attempt=1,
            capability=task_capability(task_id=task.pk, attempt=1),
            public_data_url=lambda slug: slug,
        )
        why = "no agent folder no-such-agent in the agents directory"
        task_finish(
            worker=worker, task_id=task.pk, outcome=json.loads(outcome(status="failed", reason=why)), archive=None
        )
    audit.refresh_from_db()
    assert audit.status == Audit.Status.COULD_NOT_RUN
    assert "ended failed" in audit.reason and "no agent folder" in audit.reason
    assert Submission.objects.get(pk=submission.pk).status == Submission.Status.PUBLISHED  # it stays, unaudited
