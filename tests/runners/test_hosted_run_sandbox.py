"""A hostile team's hosted run, end to end: the live portal, its grading worker and a real GPU worker process
with the process backend, whose agent tries every read, write and connection the sandbox must stop (what the
issue reproduced with BASH_ENV on a worker without one), then submits honestly. Every attempt fails, nothing of
what it was after reaches the bundle, and the run is still collected and graded."""

import shutil
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from competitions.models import CompetitionPack
from grading.models import Submission
from grading.services.submissions import submission_folder
from runners.models import HostedRun, HostedTask
from tests.runners.builders import COMPETITION, SECRET, hosted_body
from tests.runners.gpu_worker import EXAMPLE_AGENT, REPO, agents_folder, wait_until
from tests.runners.test_hosted_run_end_to_end import hosted_registry  # noqa: F401 (a fixture)

pytestmark = pytest.mark.worker

# {placeholders} are filled by the test with the host's real paths and ports.
HOSTILE = r"""#!/usr/bin/env bash
# Tries each read and write a cheating team would, records how each went, then submits as the example agent.
out="$LOGS_DIR/attempts.log"
read_attempt() {  # name, then a command printing what it got
  local name="$1"; shift
  if got="$(timeout 10 "$@" 2>/dev/null)" && [ -n "$got" ]; then
    echo "$name: LEAKED" >> "$out"
    printf '%s\n' "$got" > "$LOGS_DIR/leak-$name"  # what a cheat would keep: the test looks for it in the bundle
  else
    echo "$name: blocked" >> "$out"
  fi
}
read_attempt parent-environ cat /proc/$PPID/environ
read_attempt others-environ bash -c 'for p in /proc/[0-9]*; do [ -O "$p" ] || cat "$p/environ"; done'
read_attempt worker-token bash -c 'grep -a -o "PORTAL_WORKER_TOKEN=[^[:cntrl:]]*" /proc/[0-9]*/environ'
read_attempt worker-cmdline bash -c 'cat /proc/[0-9]*/cmdline | tr "\0" " " | grep -o "[c]elery.*"'
read_attempt secret-key cat {secret_key}
read_attempt sqlite cat {data_dir}/db.sqlite3
read_attempt data-dir ls -A {data_dir}
read_attempt private-root find {private_root} -type f
read_attempt answers cat {answers}
read_attempt other-team cat {other_team}
read_attempt other-task cat {other_task}
read_attempt other-task-relative bash -c 'cat ../../*/submission/submission.csv ../*/submission/submission.csv'
read_attempt work-dir ls -A {work_dir}
read_attempt checkout cat {repo}/manage.py
read_attempt agents-dir ls -A {agents_dir}
read_attempt portal bash -c 'exec 3<>/dev/tcp/127.0.0.1/{portal_port} && echo connected'
read_attempt postgres bash -c 'exec 3<>/dev/tcp/127.0.0.1/5432 && echo connected'
read_attempt redis bash -c 'exec 3<>/dev/tcp/127.0.0.1/6379 && echo connected'
read_attempt internet bash -c 'exec 3<>/dev/tcp/1.1.1.1/443 && echo connected'
read_attempt root-home ls -A /root
for marker in {markers}; do
  touch "$marker" 2>/dev/null && echo "wrote $marker" >> "$out"
done
if [ -s "$LOGS_DIR/leak-answers" ]; then  # the cheat of the issue: the answers as the submission
  cp "$LOGS_DIR/leak-answers" "$SUBMISSION_DIR/submission.csv"
  exit 0
fi
exec python3 "$AGENT_DIR/agent.py"
"""
ATTEMPTS = [
    "parent-environ", "others-environ", "worker-token", "worker-cmdline", "secret-key", "sqlite", "data-dir",
    "private-root", "answers", "other-team", "other-task", "other-task-relative", "work-dir", "checkout",
    "agents-dir", "portal", "postgres", "redis", "internet", "root-home",
]  # fmt: skip


def fill(template: str, **values: object) -> str:
    """template with each {name} replaced (str.format would take bash's own braces for fields)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def test_a_hostile_agent_reads_writes_and_reaches_nothing_and_its_run_is_still_graded(
    hosted_registry,  # noqa: F811
    celery_worker,
    start_gpu_worker,
    live_server,
    alice_api,
    tmp_path,
):
    agents = agents_folder(tmp_path / "agents", scripts={})
    (agents / "hostile").mkdir()
    shutil.copy(EXAMPLE_AGENT / "agent.py", agents / "hostile" / "agent.py")
    worker = start_gpu_worker(agents=agents)
    work_dir = worker.work_dir

    # What the agent is after, each with content of its own to look for afterwards.
    data_dir, private_root = Path(settings.DATA_DIR), Path(settings.PRIVATE_ROOT)
    secret_key = data_dir / "secret_key"
    if not secret_key.exists():
        secret_key.write_text(f"secret-key-canary-{uuid.uuid4().hex}")
    answers = private_root / CompetitionPack.objects.get(competition__slug=COMPETITION).answers_path
    other_team = private_root / "submissions" / "999999" / "runs" / "x" / "submission.csv"
    other_task = work_dir / "tasks" / "999999-1" / "submission" / "submission.csv"
    for path, text in ((other_team, "other-team-canary"), (other_task, "other-task-canary")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"id,label\n{text}-{uuid.uuid4().hex},1\n")
    mark = f"marker-{uuid.uuid4().hex[:8]}"  # a name of this run's own: a marker left by another cannot pass for it
    markers = [
        work_dir / mark,
        work_dir / "tasks" / mark,
        REPO / mark,
        data_dir / mark,
        private_root / mark,
        agents / "hostile" / mark,
        Path("/tmp") / mark,
        Path("/root") / mark,
    ]
    script = fill(
        HOSTILE,
        secret_key=secret_key,
        data_dir=data_dir,
        private_root=private_root,
        answers=answers,
        other_team=other_team,
        other_task=other_task,
        work_dir=work_dir,
        repo=REPO,
        agents_dir=agents,
        portal_port=live_server.url.rsplit(":", 1)[1].strip("/"),
        markers=" ".join(str(marker) for marker in markers),
    )
    (agents / "hostile" / "start.sh").write_text(script)

    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(image="hostile:1", gpus_per_run=0), format="json")
    assert response.status_code == 202, response.content
    run = HostedRun.objects.get(pk=response.json()["id"])

    def graded() -> Submission | None:
        run.refresh_from_db()
        assert run.status != HostedRun.Status.FAILED, f"{run.status_reason}\n{worker.output()[-4000:]}"
        done = run.submission and run.submission.status in Submission.SETTLED_STATUSES
        return run.submission if done else None

    submission = wait_until(graded, "the hostile run graded", timeout=180, logs=worker.output)

    # The run completed: the agent exited 0, its honest submission was collected and graded.
    task = HostedTask.objects.get(hosted_run=run)
    assert task.status == HostedTask.Status.DONE and task.exit_code == 0, task.reason
    (graded_run,) = submission.runs.all()
    assert graded_run.valid_submission

    # Every attempt failed, as the agent itself recorded it.
    folder = submission_folder(submission)
    (attempts_log,) = folder.rglob("attempts.log")
    attempts = dict(line.split(": ", 1) for line in attempts_log.read_text().splitlines() if ": " in line)
    assert attempts == dict.fromkeys(ATTEMPTS, "blocked"), attempts_log.read_text()
    assert not list(folder.rglob("leak-*"))
    assert "wrote /tmp/" in attempts_log.read_text()  # its own /tmp, not the host's (below)
    for marker in markers:
        assert not marker.exists(), f"the agent wrote {marker} on the worker's machine"

    # Nothing it was after is anywhere in what was kept or shown.
    canaries = {
        "the worker token": worker.token.encode(),
        "the secret key": secret_key.read_bytes().strip(),
        "the answers": answers.read_bytes(),
        "another team's submission": other_team.read_bytes(),
        "another task's submission": other_task.read_bytes(),
        "the team's secret": SECRET.encode(),
    }
    kept = [path for path in folder.rglob("*") if path.is_file()]
    submitted = next(path for path in kept if path.name == "submission.csv").read_bytes()
    assert submitted != answers.read_bytes()
    for what, canary in canaries.items():
        assert not any(canary in path.read_bytes() for path in kept), f"{what} reached the bundle"
        assert canary.decode() not in task.output_tail, f"{what} reached the output tail"
