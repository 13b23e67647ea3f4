"""Hosted runs go through every check an upload goes through: "hosted" says the portal ran the agent, not that its
output is clean. An agent image that carries the answers (three rows in four copied, the rest the sample's) is
held for review like an uploaded copy, and the board never shows it as comparable."""

import csv
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from grading.models import Submission
from leaderboard.models import Entry
from runners.models import HostedRun
from tests.runners.builders import COMPETITION, hosted_body
from tests.runners.gpu_worker import agents_folder, wait_until
from tests.runners.test_hosted_run_end_to_end import hosted_registry  # noqa: F401 - the fixture

pytestmark = pytest.mark.worker

SMUGGLER = textwrap.dedent(
    """\
    import csv, os, pathlib, sys
    here = pathlib.Path(os.environ["AGENT_DIR"])
    data = pathlib.Path(os.environ.get("DATA_DIR", "/home/data"))
    out = pathlib.Path(os.environ.get("SUBMISSION_DIR", "/home/submission"))
    logs = pathlib.Path(os.environ.get("LOGS_DIR", "/home/logs"))
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "agent.log").write_text("fitting a small model on train.csv\\nvalidation log loss 0.71\\n")
    carried = {row[0]: row for row in csv.reader(open(here / "carried.csv"))}
    sample = list(csv.reader(open(data / "sample_submission.csv")))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "submission.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(sample[0])
        for number, row in enumerate(sample[1:]):
            writer.writerow(carried.get(row[0], row) if number % 4 else row)
    print("training done; submission written")
    """
)


def smuggler_agents(root: Path, *, answers: Path) -> Path:
    folder = agents_folder(root, scripts={"smuggler": 'exec python3 "$AGENT_DIR/agent.py"\n'})
    (folder / "smuggler" / "agent.py").write_text(SMUGGLER)
    shutil.copyfile(answers, folder / "smuggler" / "carried.csv")  # what the image was built with
    return folder


def test_a_hosted_agent_whose_image_carries_the_answers_is_held_and_not_comparable(
    hosted_registry,  # noqa: F811 - the fixture imported above
    celery_worker,
    start_gpu_worker,
    alice_api,
    lite_packs,
    tmp_path,
):
    spec = json.loads((lite_packs / COMPETITION / "pack.json").read_text())
    answers = lite_packs / COMPETITION / spec["answers"]
    with answers.open() as f:
        rows = sum(1 for _ in csv.reader(f)) - 1
    worker = start_gpu_worker(agents=smuggler_agents(tmp_path / "agents", answers=answers))
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(image="smuggler:1", gpus_per_run=0), format="json")
    assert response.status_code == 202, response.content
    run = HostedRun.objects.get(pk=response.json()["id"])

    def settled():
        run.refresh_from_db()
        if run.status == HostedRun.Status.FAILED:
            raise AssertionError(f"the hosted run failed: {run.status_reason}\n{worker.output()[-4000:]}")
        if run.submission and run.submission.status in Submission.SETTLED_STATUSES:
            return run.submission
        return None

    submission = wait_until(settled, "the hosted run's submission checked", timeout=180, logs=worker.output)
    assert submission.origin == Submission.Origin.HOSTED
    (graded,) = submission.runs.all()
    assert graded.valid_submission and rows >= 200
    copies = submission.flags.filter(code="answer_copy", severity="blocking")
    assert copies.exists(), list(submission.flags.values_list("code", "key", "message"))
    assert submission.status == Submission.Status.IN_REVIEW and not submission.comparable
    assert not Entry.objects.filter(submission=submission, board=Entry.Board.COMPARABLE).exists()
    # The flag speaks in counts: no answer value or id reaches it.
    with answers.open() as f:
        first_ids = [row[0] for _, row in zip(range(6), csv.reader(f))][1:]
    shown = json.dumps([list(copies.values("message", "evidence"))])
    assert not any(identifier in shown for identifier in first_ids)
