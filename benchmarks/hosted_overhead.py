"""The overhead the portal adds to a hosted run, with the process and the Docker backends.

    .venv/bin/python benchmarks/hosted_overhead.py [--backends process docker] [--repeats 5] [--burst 20]

Needs PostgreSQL and Redis (as scripts/test starts them); the Docker backend also needs DOCKER_HOST to name a
running engine holding example-agent:latest (scripts/dockerd, scripts/build_agent_image), and is
skipped with a note otherwise. For each backend it starts a fresh portal (gunicorn, one grading worker) and
one GPU worker (runners/worker/app.py, 2 slots) on small synthetic Lite packs, then:

* `--repeats` times, one hosted run of one task (the example agent on spooky-author-identification), one after
  the other, and prints per run:
  - queue to agent start: from the request (the task queued) to the agent's process or container running:
    the broker's delivery, the claim, fetching the public data (cached after the first), the task's folders
    and the oracle, and the backend's start;
  - agent exit to graded result: collecting and sending the folders, the assembly of the bundle, intake,
    grading and the checks, until the re-graded run is stored;
  each as median and worst, next to the agent's own run time, which is not overhead;
* one hosted run of `--burst` tasks, and the rate at which the worker started them (runs per minute).

Targets (issue 10): under 2 s of overhead per run with Docker, under 0.5 s with the process backend, where
"overhead per run" is queue to start plus exit to the archive sent (what a task costs beyond its agent); the
exit-to-graded figure also includes the grading of the whole entry, which an upload pays too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pipeline_speed import BIN, OUT, Portal  # noqa: E402

COMPETITION = "spooky-author-identification"


def packs() -> Path:
    folder = OUT / "hosted-packs"
    if not (folder / "index.json").exists():
        from competitions.demo.packs import make_demo_pack

        make_demo_pack(out_dir=folder, split="low", size="small", seed=0, n_teams=80)
    return folder


class HostedPortal(Portal):
    """The benchmark portal plus one GPU worker, which gets a worker token and no database settings."""

    def __init__(self, *, backend: str):
        os.environ.setdefault("HOSTED_RUNS_DAILY_QUOTA", "1000")
        os.environ.setdefault("HOSTED_HEARTBEAT_SECONDS", "2")
        super().__init__(workers=1, label=f"hosted_{backend}", packs=packs())
        key = self.manage("issue_worker_token", "--name", f"bench-{backend}", "--trusted").strip().splitlines()[-1]
        gpu_env = {k: v for k, v in self.env.items() if k != "DATABASE_URL"}
        gpu_env.update(
            {
                "PORTAL_URL": self.url,
                "PORTAL_WORKER_TOKEN": key,
                "RUNNER_BACKEND": backend,
                "RUNNER_WORK_DIR": str(self.data / "gpu-worker"),
                "RUNNER_GPUS": "1",
                "RUNNER_SLOTS": "2",
                "CELERY_BROKER_URL": self.env["REDIS_URL"],
            }
        )
        saved, self.env = self.env, gpu_env
        self.gpu = self.spawn(
            [str(BIN / "celery"), "-A", "runners.worker.app", "worker", "-Q", "gpu", "-P", "threads", "-c", "2"]
            + ["-n", f"gpu-{backend}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"]
        )
        self.env = saved
        time.sleep(3)

    def api(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def sql(self, query: str) -> list[list[str]]:
        db = self.env["DATABASE_URL"].rsplit("/", 1)[1]
        out = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-At", "-F", "\t", "-c", query],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return [line.split("\t") for line in out.splitlines() if line]


def ask(portal: HostedPortal, *, seeds: int, competitions: list[str]) -> int:
    body = {
        "image": "example-agent:latest",
        "split": "low",
        "seeds": seeds,
        "time_limit_hours": 1,
        "gpus_per_run": 0,
        "competitions": competitions,
    }
    return portal.api("POST", "/api/v1/hosted-runs/", body)["id"]


def wait_graded(portal: HostedPortal, run_id: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = portal.sql(
            f"SELECT h.status, count(r.id) FILTER (WHERE r.graded_at IS NULL), count(r.id) FROM runners_hostedrun h "
            f"LEFT JOIN grading_run r ON r.submission_id = h.submission_id WHERE h.id = {run_id} GROUP BY h.status"
        )
        status, ungraded, total = rows[0]
        if status in ("failed", "cancelled"):
            raise RuntimeError(f"hosted run {run_id} ended {status}")
        if int(total) and not int(ungraded):
            return
        time.sleep(0.1)
    raise RuntimeError(f"hosted run {run_id} not graded after {timeout} s")


def one_task_figures(portal: HostedPortal, run_id: int) -> tuple[float, float, float, float]:
    """(queue to agent start, exit to archive sent, exit to graded result, agent's own seconds) of a
    one-task run, from the database's timestamps and the worker's own measures."""
    (row,) = portal.sql(
        "SELECT EXTRACT(EPOCH FROM t.started_at - t.queued_at), t.setup_seconds, t.collect_seconds, "
        "t.elapsed_seconds, EXTRACT(EPOCH FROM max(r.graded_at) - t.finished_at) "
        "FROM runners_hostedtask t JOIN runners_hostedrun h ON h.id = t.hosted_run_id "
        f"JOIN grading_run r ON r.submission_id = h.submission_id WHERE h.id = {run_id} "
        "GROUP BY t.id"
    )
    to_claim, setup, collect, elapsed, finish_to_graded = (float(v) for v in row)
    return to_claim + setup, collect, collect + finish_to_graded, elapsed


def measure(backend: str, repeats: int, burst: int) -> None:
    portal = HostedPortal(backend=backend)
    try:
        starts, collects, graded, agent = [], [], [], []
        for _ in range(repeats):
            run_id = ask(portal, seeds=1, competitions=[COMPETITION])
            wait_graded(portal, run_id)
            start, collect, to_graded, elapsed = one_task_figures(portal, run_id)
            starts.append(start)
            collects.append(collect)
            graded.append(to_graded)
            agent.append(elapsed)
        overhead = [s + c for s, c in zip(starts, collects)]
        print(f"\n{backend} backend, {repeats} one-task runs (seconds, median / worst):")
        print(f"  queue to agent start        {statistics.median(starts):7.3f} / {max(starts):7.3f}")
        print(f"  agent exit to archive sent  {statistics.median(collects):7.3f} / {max(collects):7.3f}")
        print(f"  overhead per run            {statistics.median(overhead):7.3f} / {max(overhead):7.3f}")
        print(f"  agent exit to graded result {statistics.median(graded):7.3f} / {max(graded):7.3f}")
        print(f"  the agent itself            {statistics.median(agent):7.3f} / {max(agent):7.3f}")
        competitions = [COMPETITION, "aerial-cactus-identification"]
        seeds = max(1, burst // len(competitions))
        run_id = ask(portal, seeds=seeds, competitions=competitions)
        wait_graded(portal, run_id)
        ((first, last, count),) = portal.sql(
            "SELECT EXTRACT(EPOCH FROM min(started_at)), EXTRACT(EPOCH FROM max(started_at)), count(*) "
            f"FROM runners_hostedtask WHERE hosted_run_id = {run_id}"
        )
        span = float(last) - float(first)
        rate = (int(count) - 1) / span * 60 if span > 0 else float("inf")
        print(f"  burst of {count} tasks on one worker (2 slots): {rate:.0f} runs started per minute")
    finally:
        portal.stop()


def docker_ready() -> str:
    if not os.environ.get("DOCKER_HOST"):
        return "DOCKER_HOST is not set (scripts/dockerd prints it)"
    probe = subprocess.run(["docker", "image", "inspect", "example-agent:latest"], capture_output=True, text=True)
    if probe.returncode:
        return "the engine has no example-agent:latest (scripts/build_agent_image)"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["process", "docker"], choices=["process", "docker"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--burst", type=int, default=20)
    args = parser.parse_args()
    for backend in args.backends:
        if backend == "docker" and (why := docker_ready()):
            print(f"\ndocker backend: skipped, {why}")
            continue
        measure(backend, args.repeats, args.burst)


if __name__ == "__main__":
    main()
