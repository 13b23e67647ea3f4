"""The done-when test of random audits (issue 31): the live portal, its grading worker and a real GPU worker
process on the process backend (bubblewrap where the machine has it, as the other hosted end-to-end tests) re-run
the example agent on the audited competition. The audit passes for the example agent's honest bundle and
disagrees, with a blocking finding, for a bundle whose numbers the agent cannot reproduce."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.models import Audit, Flag, Submission
from grading.services.intake import submission_create
from grading.services.registrations import registration_create
from leaderboard.models import Entry
from runners.models import HostedRun
from tests.runners.builders import COMPETITION
from tests.runners.gpu_worker import EXAMPLE_AGENT, wait_until
from tests.runners.test_hosted_run_end_to_end import with_training_data

pytestmark = pytest.mark.worker
IMAGE = "example-agent:latest"


@pytest.fixture
def audit_registry(transactional_db, lite_packs, tmp_path):
    from competitions.pack_services import pack_import
    from competitions.services import competitions_load

    competitions_load()
    pack_import(path=lite_packs)
    pack_import(path=with_training_data(lite_packs, tmp_path / "packs"))


def _example_agent_output(public: Path, into: Path) -> bytes:
    """What the example agent writes for the competition, run here as a team would run it on its own machine."""
    for name in ("submission", "logs", "code"):
        (into / name).mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DATA_DIR": str(public),
        "SUBMISSION_DIR": str(into / "submission"),
        "LOGS_DIR": str(into / "logs"),
        "CODE_DIR": str(into / "code"),
        "VALIDATE_SUBMISSION": str(into / "no-check.sh"),
        "COMPETITION_ID": COMPETITION,
        "TIME_LIMIT_SECS": "600",
    }
    subprocess.run([sys.executable, str(EXAMPLE_AGENT / "agent.py")], env=env, check=True, capture_output=True)
    return (into / "submission" / "submission.csv").read_bytes()


def _bundle(tmp_path: Path, lite_packs: Path, *, registration, name: str, files: bytes | None) -> Path:
    """A registered two-seed bundle on the competition: the agent's own file in each run (files), else the
    simulated agent's near-perfect ones (numbers the example agent cannot reach)."""
    group = write_run_group(
        out_dir=tmp_path / name,
        competition_ids=[COMPETITION],
        seeds=(0, 1),
        quality=0.99,
        answers=pack_answers(lite_packs),
        nonce=registration.nonce,
    )
    if files is not None:
        for path in group.glob(f"{COMPETITION}_*/submission/submission.csv"):
            path.write_bytes(files)
    manifest = {**default_manifest(split="low", seeds=2), "registration": registration.pk}
    manifest["agent"]["image"] = IMAGE
    manifest["hardware"]["gpus"] = []  # what the audit asks of a worker: no GPU
    manifest["runtime_hours"] = 0.2
    return write_run_bundle(run_group=group, out_path=tmp_path / f"{name}.tar.gz", manifest=manifest)


def _upload(alice, path: Path) -> Submission:
    return submission_create(
        team=alice.teams.get(), user=alice, upload=SimpleUploadedFile(path.name, path.read_bytes())
    )


def _audit_ends(submission: Submission, logs) -> Audit:
    def ended():
        audit = Audit.objects.get(submission=submission)
        return audit if audit.status in Audit.FINAL_STATUSES else None

    return wait_until(ended, f"the audit of submission {submission.pk} ended", timeout=240, logs=logs)


def test_an_audit_on_the_process_backend_passes_the_honest_bundle_and_fails_the_unreachable_one(
    audit_registry, celery_worker, start_gpu_worker, alice, lite_packs, tmp_path
):
    worker = start_gpu_worker()
    registration = registration_create(
        team=alice.teams.get(), user=alice, agent_name="example", agent_version="1", split="low", seeds=2
    )
    public = with_training_data(lite_packs, tmp_path / "packs-here") / "public"
    honest_file = _example_agent_output(public, tmp_path / "agent-run")
    honest = _upload(alice, _bundle(tmp_path, lite_packs, registration=registration, name="honest", files=honest_file))
    audit = _audit_ends(honest, worker.output)
    assert audit.status == Audit.Status.PASSED, f"{audit.reason}\n{audit.runs}\n{worker.output()[-3000:]}"
    assert audit.competitions == [COMPETITION] and len(audit.runs) == 2
    assert all(run["valid"] and run["status"] == "done" for run in audit.runs), audit.runs
    (verdict,) = audit.comparison["competitions"]
    assert not verdict["disagrees"] and verdict["bundle_mean"] == pytest.approx(verdict["audit_mean"])
    run = HostedRun.objects.get(audit=audit)
    assert run.status == HostedRun.Status.DONE and run.submission is None  # graded, never an entry of its own
    entry = wait_until(
        lambda: Entry.objects.filter(submission=honest, evidence_level="audited").first(), "the entry audited"
    )
    assert entry.submission.status == Submission.Status.PUBLISHED

    second = registration_create(
        team=alice.teams.get(), user=alice, agent_name="example", agent_version="1", split="low", seeds=2
    )
    inflated = _upload(alice, _bundle(tmp_path, lite_packs, registration=second, name="inflated", files=None))
    audit = _audit_ends(inflated, worker.output)
    assert audit.status == Audit.Status.DISAGREES, f"{audit.reason}\n{audit.runs}"
    flag = Flag.objects.get(submission=inflated, code="audit", key="disagrees")
    assert flag.severity == Flag.Severity.BLOCKING
    (verdict,) = flag.evidence["competitions"]
    assert verdict["disagrees"] and len(verdict["bundle_scores"]) == 2 and len(verdict["audit_scores"]) == 2
    wait_until(lambda: Submission.objects.get(pk=inflated.pk).status == Submission.Status.IN_REVIEW, "held for review")
    shutil.rmtree(tmp_path / "agent-run", ignore_errors=True)
