"""Soak of the one-machine portal's broker: both workers under mixed load for a bounded time.

    .venv/bin/python benchmarks/broker_soak.py [--minutes 10] [--broker filesystem|sqlite|redis] [--keep DIR]

It starts `scripts/run` itself (web server, the grading worker with beat, the hosted-runs worker with the
process backend) on a fresh copy of a prepared data folder (SQLite, demo packs; made once under
benchmarks/out/soak-seed), and for `--minutes` mixes:

* an upload of a small bundle every 12 s (1 to 3 competitions of the Lite packs, 1 to 2 seeds);
* hosted runs that fit no worker at hand (the Lite split, 22 tasks of 1 GPU each), two at a time, each
  cancelled after 40 s: the portal refuses a request that no registered worker can hold, so the soak registers
  a GPU worker of 1 GPU that never comes to take anything, and the local hosted-runs worker, which has no GPU,
  sends each of their 44 tasks back to the queue every 5 s, as in issue 19;
* a hosted run of the example agent every 15 s, every third one cancelled 2 s after it was asked for.

Then it stops the load, waits up to 3 minutes for everything to end, and prints:

* tasks: the messages each worker received (Celery's "received" lines), and the re-queues of tasks that
  fit no worker among them;
* re-deliveries: a message delivered again by the broker (a task id received more often than it was sent:
  once plus its retries); lost: the other way round;
* watchdog: grading runs and hosted tasks taken again after their worker was lost;
* crashes: a worker's unrecoverable error or "The worker stopped" of scripts/run, and the restarts;
* longest wait: a grading run from queued to claimed, a hosted task (that fits) from queued to started, an
  upload from accepted to its final state; and what had not ended when the wait was over.

`--broker` picks what scripts/run is given: `filesystem` (the default setup: nothing set), `sqlite`
(kombu's SQLAlchemy transport on the portal's SQLite file, `CELERY_BROKER_URL=sqla+sqlite:///…`; needs
`pip install sqlalchemy` in .venv, which the lock files do not hold) or `redis` (Debian's `redis-server`
started here on a unix socket in the data folder, as `REDIS_URL`). The exit code is 1 when a worker
crashed, a message was delivered twice or lost, something had not ended, or the load was refused (load errors).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
PYTHON = ROOT / ".venv" / "bin" / "python"
BROKERS = ("filesystem", "sqlite", "redis")
UPLOAD_EVERY, HOSTED_EVERY, UNFIT_AT_ONCE, UNFIT_LIFETIME = 12.0, 15.0, 2, 40.0
ABSENT_BEAT_EVERY = 20.0  # under HOSTED_WORKER_LOST_SECONDS, so the absent GPU worker keeps counting as capacity
LOAD_ENV = {
    # The demo's entries (330 runs, seeded on a first start) are not this load: they would fill the queue first.
    "PORTAL_DEMO_ENTRIES": "0",
    "SUBMISSION_DAILY_QUOTA": "100000",
    "HOSTED_RUNS_DAILY_QUOTA": "100000",
    "API_RATE_UPLOADS": "100000/h",
    "API_RATE_AUTHENTICATED": "100000/m",
}
BUNDLES = [  # (competitions of the Lite packs, seeds)
    (["spooky-author-identification"], 1),
    (["aerial-cactus-identification", "nomad2018-predict-transparent-conductors"], 2),
    (["spooky-author-identification", "random-acts-of-pizza", "leaf-classification"], 1),
]
FINAL_SUBMISSION = ("in_review", "published", "rejected", "failed")
FINAL_HOSTED = ("done", "failed", "cancelled")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update(LOAD_ENV)
    env.update(extra)
    return env


def seed_folder() -> Path:
    """A data folder set up once (migrated, demo account, Lite packs) and the bundles made from its packs."""
    seed = OUT / "soak-seed"
    if not (seed / "bundles" / "done").exists():
        shutil.rmtree(seed, ignore_errors=True)
        seed.mkdir(parents=True)
        env = _clean_env(PORTAL_DATA_DIR=str(seed / "data"))
        print("preparing the soak's data folder (once) ...", file=sys.stderr)
        for command in (["migrate", "--noinput"], ["demo_setup"]):
            subprocess.run([str(PYTHON), "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
        subprocess.run(
            [
                str(PYTHON),
                "-c",
                "import sys; sys.path.insert(0, 'benchmarks'); import broker_soak; broker_soak._bundles()",
            ],
            cwd=ROOT,
            env={**env, "DJANGO_SETTINGS_MODULE": "portal.settings"},
            check=True,
        )
        (seed / "bundles" / "done").touch()
    return seed


def _bundles() -> None:
    sys.path.insert(0, str(ROOT))
    from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group

    data = Path(os.environ["PORTAL_DATA_DIR"])
    out = data.parent / "bundles"
    for index, (competitions, seeds) in enumerate(BUNDLES):
        with tempfile.TemporaryDirectory() as runs:
            group = write_run_group(
                out_dir=Path(runs),
                competition_ids=competitions,
                seeds=tuple(range(seeds)),
                quality=0.8,
                answers=pack_answers(data / "demo-packs"),
            )
            write_run_bundle(run_group=group, out_path=out / f"bundle-{index}.tar.gz", manifest=default_manifest())


@dataclass
class Soak:
    broker: str
    data: Path
    port: int = field(default_factory=_free_port)
    token: str = ""
    absent_key: str = ""  # the absent GPU worker's key: it beats (so it counts as capacity) but never claims
    process: subprocess.Popen | None = None
    redis: subprocess.Popen | None = None
    submissions: list[int] = field(default_factory=list)
    hosted: list[int] = field(default_factory=list)
    unfit: dict[int, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data.parent / "run.log"

    def broker_env(self) -> dict[str, str]:
        if self.broker == "sqlite":
            return {"CELERY_BROKER_URL": f"sqla+sqlite:///{self.data / 'db.sqlite3'}"}
        if self.broker == "redis":
            sock = self.data / "redis.sock"
            self.redis = subprocess.Popen(
                ["redis-server", "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700", "--dir",
                 str(self.data), "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + 10
            while not sock.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            return {"REDIS_URL": f"unix://{sock}"}
        return {}

    def start(self) -> None:
        env = _clean_env(PORT=str(self.port), PORTAL_DATA_DIR=str(self.data), **self.broker_env())
        self.log = self.log_path.open("w+")
        self.process = subprocess.Popen(
            [str(ROOT / "scripts" / "run")],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 180
        while self._status("/healthz") != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the portal did not come up:\n{self.output()[-4000:]}")
            time.sleep(0.5)
        self.token = (
            subprocess.run(
                [str(PYTHON), "manage.py", "issue_token", "--username", "demo", "--team", "Demo team"],
                cwd=ROOT, env=env, capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
        )  # fmt: skip
        self.register_absent_gpu_worker(env)

    def register_absent_gpu_worker(self, env: dict[str, str]) -> None:
        """A registered worker with 1 GPU that beats but never claims: the unfit runs are accepted (capacity counts
        workers heard from within HOSTED_WORKER_LOST_SECONDS), and only the local worker, which has no GPU, takes
        their messages (and sends them back)."""
        key = self.absent_key = (
            subprocess.run(
                [str(PYTHON), "manage.py", "issue_worker_token", "--name", "soak-absent-gpu", "--trusted"],
                cwd=ROOT, env=env, capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
        )  # fmt: skip
        capacity = {"gpus": 1, "cpus": 8, "memory_gb": 32, "backend": "docker"}
        request = urllib.request.Request(
            f"{self.url}/api/v1/workers/register/",
            method="POST",
            data=json.dumps(capacity).encode(),
            headers={"Authorization": f"Worker {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60):
            pass

    def absent_worker_beat(self) -> None:
        request = urllib.request.Request(
            f"{self.url}/api/v1/workers/heartbeat/",
            method="POST",
            data=json.dumps({"running": []}).encode(),
            headers={"Authorization": f"Worker {self.absent_key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60):
                pass
        except (urllib.error.HTTPError, OSError) as exc:
            self.errors.append(f"absent worker's heartbeat: {exc}")

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _status(self, path: str) -> int | None:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            return None

    def api(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            f"{self.url}/api/v1/{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def upload(self, bundle: Path) -> None:
        result = subprocess.run(
            [sys.executable, str(ROOT / "client" / "mleportal.py"), "upload", str(bundle), "--url", self.url,
             "--token", self.token, "--no-wait"],
            capture_output=True, text=True,
        )  # fmt: skip
        if result.returncode != 0:
            self.errors.append(f"upload of {bundle.name}: {result.stderr.strip()[-300:]}")
            return
        self.submissions.append(json.loads(result.stdout)["id"])

    def hosted_run(self, *, gpus: int) -> int | None:
        body = {"image": "example-agent:latest", "split": "low", "seeds": 1, "time_limit_hours": 1,
                "gpus_per_run": gpus}  # fmt: skip
        if not gpus:  # one task that runs; the unfit ones are the whole Lite split, 22 tasks each
            body["competitions"] = ["spooky-author-identification"]
        try:
            run = self.api("POST", "hosted-runs/", body)
        except (urllib.error.HTTPError, OSError) as exc:
            self.errors.append(f"hosted run: {exc}")
            return None
        self.hosted.append(run["id"])
        return run["id"]

    def cancel(self, hosted_id: int) -> None:
        try:
            self.api("POST", f"hosted-runs/{hosted_id}/cancel/", {})
        except urllib.error.HTTPError as exc:
            if exc.code != 409:  # already ended
                self.errors.append(f"cancel of {hosted_id}: {exc}")

    def load(self, seconds: float) -> None:
        bundles = sorted((self.data.parent / "bundles").glob("bundle-*.tar.gz"))
        started = time.monotonic()
        next_upload = next_hosted = next_beat = 0.0
        hosted_count, cancel_at = 0, []
        while (now := time.monotonic() - started) < seconds:
            if self.process is not None and self.process.poll() is not None:
                self.errors.append(f"scripts/run exited with {self.process.returncode}")
                return
            if now >= next_beat:
                self.absent_worker_beat()
                next_beat += ABSENT_BEAT_EVERY
            if now >= next_upload:
                self.upload(bundles[len(self.submissions) % len(bundles)])
                next_upload += UPLOAD_EVERY
            if now >= next_hosted:
                hosted_count += 1
                run_id = self.hosted_run(gpus=0)
                if run_id and hosted_count % 3 == 0:
                    cancel_at.append((now + 2, run_id))
                next_hosted += HOSTED_EVERY
            for run_id, born in list(self.unfit.items()):
                if now - born >= UNFIT_LIFETIME:
                    self.cancel(run_id)
                    del self.unfit[run_id]
            while len(self.unfit) < UNFIT_AT_ONCE:
                run_id = self.hosted_run(gpus=1)
                if run_id is None:
                    break
                self.unfit[run_id] = now
            for item in [c for c in cancel_at if c[0] <= now]:
                self.cancel(item[1])
                cancel_at.remove(item)
            time.sleep(0.5)

    def drain(self, seconds: float = 180) -> None:
        for run_id in self.unfit:
            self.cancel(run_id)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.unfinished():
            time.sleep(1)
        time.sleep(12)  # re-queues sent just before the cancels come back once more, and are refused then

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.data / 'db.sqlite3'}?mode=ro", uri=True, timeout=30)

    def unfinished(self) -> list[str]:
        with self._db() as db:
            subs = db.execute(
                f"select id, status from grading_submission where status not in {FINAL_SUBMISSION}"
            ).fetchall()
            hosted = db.execute(
                f"select id, status from runners_hostedrun where status not in {FINAL_HOSTED}"
            ).fetchall()
        return [f"submission {i} {s}" for i, s in subs] + [f"hosted run {i} {s}" for i, s in hosted]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.redis is not None:
            os.killpg(self.redis.pid, signal.SIGTERM)
            self.redis.wait(timeout=10)

    def figures(self) -> dict:
        log = self.output()
        received = collections.Counter(re.findall(r"Task ([\w.]+\[[0-9a-f-]{36}\]) received", log))
        retries = collections.Counter(re.findall(r"Task ([\w.]+\[[0-9a-f-]{36}\]) retry:", log))
        redelivered = sum(max(0, n - 1 - retries[t]) for t, n in received.items())
        lost = sum(max(0, 1 + retries[t] - received[t]) for t in retries)
        gpu = sum(n for t, n in received.items() if t.startswith("runners.hosted_task"))
        with self._db() as db:

            def longest(query: str) -> float:
                rows = db.execute(query).fetchall()
                return max(
                    [
                        (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
                        for a, b in rows
                        if a and b
                    ],
                    default=0.0,
                )

            figures = {
                "broker": self.broker,
                "messages received": sum(received.values()),
                "by the grading worker": sum(received.values()) - gpu,
                "by the hosted-runs worker": gpu,
                "of them re-queues of tasks that fit no worker": sum(retries.values()),
                "re-deliveries": redelivered,
                "lost": lost,
                "runs re-queued by the watchdog": db.execute(
                    "select count(*) from grading_run where attempts > 1"
                ).fetchone()[0],
                "hosted tasks re-queued by the watchdog": db.execute(
                    "select count(*) from runners_hostedtask where attempt > 1"
                ).fetchone()[0],
                "unrecoverable errors": log.count("Unrecoverable error"),
                "worker restarts": log.count("The worker stopped"),
                "uploads": len(self.submissions),
                "graded runs": db.execute("select count(*) from grading_run where status = 'done'").fetchone()[0],
                "hosted runs": len(self.hosted),
                "hosted tasks that ran": db.execute(
                    "select count(*) from runners_hostedtask where started_at is not null"
                ).fetchone()[0],
                "longest wait, run queued to claimed (s)": longest("select queued_at, claimed_at from grading_run"),
                "longest wait, hosted task queued to started (s)": longest(
                    "select queued_at, started_at from runners_hostedtask"
                ),
                "longest wait, upload to final state (s)": longest(
                    f"select created_at, status_changed_at from grading_submission where status in {FINAL_SUBMISSION}"
                ),
            }
        figures["not ended"] = self.unfinished()
        figures["load errors"] = self.errors
        return figures


def soak(*, minutes: float, broker: str = "filesystem", keep: Path | None = None) -> dict:
    """Run one soak and return its figures (the test suite's short version calls this)."""
    seed = seed_folder()
    work = Path(tempfile.mkdtemp(prefix="soak-", dir=os.environ.get("SOAK_TMP")))
    loaded = 0.0
    try:
        shutil.copytree(seed / "data", work / "data", symlinks=True)
        shutil.copytree(seed / "bundles", work / "bundles")
        for stale in ("broker", "celerybeat-schedule", "gpu-worker", "cache"):
            shutil.rmtree(work / "data" / stale, ignore_errors=True)
        run = Soak(broker=broker, data=work / "data")
        try:
            run.start()
            started = time.monotonic()
            run.load(minutes * 60)
            loaded = time.monotonic() - started
            run.drain()
            figures = run.figures()
        finally:
            run.stop()
        figures["minutes of load"] = round(loaded / 60, 1)
        return figures
    finally:
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(work / "run.log", keep / f"run-{broker}.log")
        shutil.rmtree(work, ignore_errors=True)


def failed(figures: dict) -> bool:
    return bool(
        figures["unrecoverable errors"]
        or figures["worker restarts"]
        or figures["re-deliveries"]
        or figures["lost"]
        or figures["not ended"]
        or figures["load errors"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the load lasts (default 10)")
    parser.add_argument("--broker", choices=BROKERS, default="filesystem")
    parser.add_argument("--keep", type=Path, help="copy scripts/run's log into this folder")
    args = parser.parse_args()
    if args.minutes <= 0:
        parser.error("--minutes must be more than 0")
    figures = soak(minutes=args.minutes, broker=args.broker, keep=args.keep)
    width = max(map(len, figures))
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    sys.exit(1 if failed(figures) else 0)


if __name__ == "__main__":
    main()
