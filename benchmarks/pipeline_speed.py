"""Upload-to-result speed of the re-grading pipeline, with one and with two Celery worker processes.

    .venv/bin/python benchmarks/pipeline_speed.py [--splits low split75] [--workers 1 2] [--skip-big-upload]
                                                  [--setup separate|default]

Needs PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379), as scripts/test starts them. For each split
(default: Lite, 22 competitions, then split75, all 75) it uses the full-size synthetic packs of
benchmarks/grading_speed.py (written once under benchmarks/out/), makes a 3-seed bundle of a simulated agent
at the real answer sizes (22 × 3 or 75 × 3 runs), and for each worker count: starts a fresh database,
gunicorn (one process) and N worker processes (concurrency 1 each), uploads the bundle with
client/mleportal.py, and waits for the final status. With --setup default it runs scripts/run's one-machine
setup instead: SQLite, the filesystem broker, one worker with --concurrency 2 (prefork) and beat inside it
(--workers is then ignored). It prints the wall time from the start of the upload
to the result, runs per second, and the peak RSS of the web process and of the busiest worker (its prefork
children included), and the grading phase alone: from the first run a worker claimed to the last run graded,
the part that more workers share (upload, unpacking and the final checks are done once). Then it streams a 2 GB
bundle to the web process and prints that process's peak RSS.
First it measures this machine's ceiling: how much more grading two processes do at once than one, without
Celery or a database, the most two workers can gain. With BENCH_KEEP_LOGS=DIR the web and worker logs of each
portal are copied there before it is removed; with BENCH_KEEP_DATA=1 the portal's data folder (with --setup
default, its SQLite database and files too) is kept and its path printed, to profile a step again.
BENCH_DB_PREFIX (default portal_bench) and BENCH_REDIS_DB (default 14) name the PostgreSQL databases and the
Redis database it uses (each is emptied first).

For each bundle it also prints where the time went, from the portal's own timestamps (runs' queued, claimed
and graded times, the submission's status changes in the worker logs, Celery's task times) and the CPU
seconds of the web and worker processes: the upload request (streaming, unpacking, validation, hashing),
the wait before the first run is claimed, grading (the sum over runs and the slowest competitions), the time
workers sat idle between runs, the checks, the client's polling delay and the board refresh after the result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
PY = str(ROOT / ".venv" / "bin" / "python")
BIN = ROOT / ".venv" / "bin"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def peak_mb(pid: int) -> float:
    """VmHWM of a process and all its descendants' largest (prefork children do the grading)."""
    best = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            best = max(best, int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1]) / 1024)
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration):
            continue
    return best


_TIMELINE = """
import json
from grading.models import Run, Submission
sub = Submission.objects.order_by("-pk").first()
runs = [
    {"competition": slug, "seed": seed, "queued": q.timestamp(), "claimed": c.timestamp(), "graded": g.timestamp(),
     "worker": worker, "bytes": 0}
    for slug, seed, q, c, g, worker in Run.objects.filter(submission=sub).values_list(
        "competition__slug", "seed", "queued_at", "claimed_at", "graded_at", "worker")
    if c is not None and g is not None and q is not None
]
print(json.dumps({"created": sub.created_at.timestamp(), "changed": sub.status_changed_at.timestamp(),
                  "status": sub.status, "runs": runs}))
"""
_STATUS_LINE = re.compile(r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO \S+: submission \d+ -> (?P<status>\w+)")
# Celery's own format ("[time: INFO/process] Task ...") or the portal's ("time INFO celery.app.trace: Task ...").
_TASK_LINE = re.compile(
    r"^\[?(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})[^\]]*?(?:\]| INFO celery\.app\.trace:) "
    r"Task (?P<task>[\w.]+)\[[^\]]+\] succeeded in (?P<seconds>[\d.e-]+)s"
)


def _log_time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def cpu_of(pid: int) -> float:
    """utime + stime of a process and its live descendants, plus what its reaped children used."""
    tick = os.sysconf("SC_CLK_TCK")
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15]) / tick  # utime, stime, cutime, cstime
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Portal:
    """A fresh database and data folder, gunicorn and N worker processes (or scripts/run's single worker)."""

    def __init__(self, *, workers: int, label: str, packs: Path, setup: str = "separate"):
        self.setup = setup
        self.data = Path(tempfile.mkdtemp(prefix=f"portal-bench-{label}-"))
        self.env = {
            **os.environ,
            "PORTAL_DATA_DIR": str(self.data),
            "DEBUG": "true",
            "SUBMISSION_DAILY_QUOTA": "100",
            # INFO: the submission's status changes and Celery's task times are read back from the logs.
            "LOG_LEVEL": "INFO",
        }
        if setup == "default":
            for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
                self.env.pop(name, None)
        else:
            db = f"{os.environ.get('BENCH_DB_PREFIX', 'portal_bench')}_{label}"
            redis_db = os.environ.get("BENCH_REDIS_DB", "14")
            subprocess.run(
                [
                    "psql",
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-q",
                    "-c",
                    f"DROP DATABASE IF EXISTS {db}",
                    "-c",
                    f"CREATE DATABASE {db}",
                ],
                check=True,
                capture_output=True,
            )
            subprocess.run(["redis-cli", "-n", redis_db, "flushdb"], check=True, capture_output=True)
            self.env["DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{db}"
            self.env["REDIS_URL"] = f"redis://127.0.0.1:6379/{redis_db}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []
        self.manage("migrate", "--noinput", "-v0")
        self.manage("load_competitions")
        self.manage("import_competition_pack", str(packs))
        self.token = self.manage("issue_token", "--username", "bench", "--team", "Bench").strip().splitlines()[-1]
        self.web = self.spawn(
            [
                str(BIN / "gunicorn"),
                "portal.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "1",
                "--threads",
                "4",
                "--timeout",
                "600",
            ]
        )
        worker = [str(BIN / "celery"), "-A", "portal", "worker", "-Q", "default,grading"]
        quiet = ["--without-gossip", "--without-mingle", "--loglevel", "INFO"]
        if setup == "default":
            # scripts/run's grading worker: one Celery process, two prefork children, beat inside.
            schedule = str(self.data / "celerybeat-schedule")
            self.workers = [
                self.spawn([*worker, "-B", "--concurrency", "2", "--without-heartbeat", "-s", schedule, *quiet])
            ]
        else:
            self.workers = [self.spawn([*worker, "-c", "1", "-n", f"bench{i}@%h", *quiet]) for i in range(workers)]
        self.wait_healthy()

    def manage(self, *args: str) -> str:
        return subprocess.run(
            [PY, "manage.py", *args], cwd=ROOT, env=self.env, check=True, capture_output=True, text=True
        ).stdout

    def spawn(self, command: list[str]) -> subprocess.Popen:
        log = (self.data / f"{Path(command[0]).name}-{len(self.processes)}.log").open("w")
        process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        return process

    def wait_healthy(self) -> None:
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        time.sleep(3)  # let the workers finish starting
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("the portal did not start")

    def runs_per_worker(self) -> list[int]:
        logs = sorted(self.data.glob("celery-*.log"))
        return [log.read_text().count("grading.tasks.grade_run") // 2 for log in logs]

    def timeline(self) -> dict:
        """The runs' and the submission's timestamps, as the portal recorded them (epoch seconds)."""
        out = self.manage("shell", "-c", _TIMELINE)
        return json.loads(out.strip().splitlines()[-1])

    def grading_phase(self) -> float:
        """Seconds from the first run claimed by a worker to the last run graded (the parallel part)."""
        runs = self.timeline()["runs"]
        return max(r["graded"] for r in runs) - min(r["claimed"] for r in runs) if runs else float("nan")

    def log_events(self) -> tuple[list[tuple[float, str]], list[tuple[float, str, float]]]:
        """(time, status) of the submission's status changes and (end time, task, seconds) of Celery's tasks,
        from the web and worker logs."""
        statuses, tasks = [], []
        for log in sorted(self.data.glob("*.log")):
            for line in log.read_text(errors="replace").splitlines():
                if (found := _STATUS_LINE.search(line)) is not None:
                    statuses.append((_log_time(found["at"]), found["status"]))
                elif (found := _TASK_LINE.search(line)) is not None:
                    tasks.append((_log_time(found["at"]), found["task"], float(found["seconds"])))
        return sorted(statuses), sorted(tasks)

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU seconds (user + system) used so far by the web process and by the workers, children included."""
        return cpu_of(self.web.pid), sum(cpu_of(w.pid) for w in self.workers)

    def web_peak(self) -> float:
        return peak_mb(self.web.pid)

    def stop(self) -> None:
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        keep = os.environ.get("BENCH_KEEP_LOGS")
        if keep:
            target = Path(keep) / self.data.name
            target.mkdir(parents=True, exist_ok=True)
            for log in self.data.glob("*.log"):
                shutil.copy(log, target / log.name)
        if os.environ.get("BENCH_KEEP_DATA"):
            print(f"  kept the portal's data folder (BENCH_KEEP_DATA): {self.data}", flush=True)
            return
        shutil.rmtree(self.data, ignore_errors=True)


def split_bundle(split: str) -> tuple[Path, Path]:
    """The split's full-size packs and a 3-seed bundle of a simulated agent of quality 0.8 for them."""
    from grading_speed import SPLIT_NAMES, packs_dir, prepare

    from competitions.demo.catalog import split_ids
    from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group

    prepare(quality=0.8, regenerate=False, split=split)
    name = SPLIT_NAMES[split]
    bundle = OUT / f"{name}-full-3-seeds.tar.gz"
    if not bundle.exists():
        print(f"writing the 3-seed full-size {split} bundle (once) ...", file=sys.stderr)
        runs = OUT / f"{name}-full-runs-3"
        shutil.rmtree(runs, ignore_errors=True)
        group = write_run_group(
            out_dir=runs,
            competition_ids=split_ids(split),
            seeds=(0, 1, 2),
            quality=0.8,
            answers=pack_answers(packs_dir(split)),
        )
        write_run_bundle(run_group=group, out_path=bundle, manifest=default_manifest(split=split))
        shutil.rmtree(runs, ignore_errors=True)
    return packs_dir(split), bundle


def big_bundle(size_gb: float) -> Path:
    """A valid bundle of about size_gb GB: one run plus incompressible logs, stored (not deflated) in a zip."""
    path = OUT / f"big-{size_gb:g}GB.zip"
    if path.exists():
        return path
    print(f"writing a {size_gb:g} GB bundle (once) ...", file=sys.stderr)
    from competitions.demo.runs import default_manifest

    run = "runs/2026-11-30T10-00-00-GMT_run-group_big/spooky-author-identification_00000000-0000-0000-0000-000000000001"
    chunk = os.urandom(64 * 1024**2)
    per_file = 448 * 1024**2
    total = int(size_gb * 1024**3)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr("manifest.json", json.dumps(default_manifest()))
        archive.writestr(f"{run}/submission/submission.csv", "id,EAP,HPL,MWS\n")
        written, index = 0, 0
        while written < total:
            size = min(per_file, total - written)
            with archive.open(f"{run}/logs/part-{index}.bin", "w", force_zip64=True) as member:
                left = size
                while left:
                    piece = chunk[: min(left, len(chunk))]
                    member.write(piece)
                    left -= len(piece)
            written += size
            index += 1
    return path


def upload(portal: Portal, bundle: Path) -> dict:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "client" / "mleportal.py"),
            "upload",
            str(bundle),
            "--url",
            portal.url,
            "--token",
            portal.token,
            "--no-wait",
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout)


def wait_final(portal: Portal, submission_id: int) -> dict:
    while True:
        request = urllib.request.Request(
            f"{portal.url}/api/v1/submissions/{submission_id}/", headers={"Authorization": f"Token {portal.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
        if body["status"] in ("in_review", "published", "rejected", "failed"):
            return body
        time.sleep(0.2)


def machine_ceiling(split: str = "low", repeats: int = 3) -> None:
    """How much grading two processes get done at once here, compared with one: the most two workers can gain.

    One full seed of the split, graded ``repeats`` times over in one process, runs alone (best of two), then in two
    processes at the same time (no Celery, no database). Each reports its own grading time, imports left
    out; the ratio of throughputs, 2 x alone / the slower of the two, is this machine's ceiling for the
    two-worker speedup."""
    from concurrent.futures import ThreadPoolExecutor

    from grading_speed import measure, prepare

    jobs = prepare(quality=0.8, regenerate=False, split=split) * repeats
    alone = min(measure(jobs)["total"] for _ in range(2))
    with ThreadPoolExecutor(2) as pool:
        both = [f.result()["total"] for f in [pool.submit(measure, jobs) for _ in range(2)]]
    print(
        f"this machine's ceiling: {repeats} full {split} seed(s) graded in {alone:.2f} s by one process alone, in "
        f"{both[0]:.2f} s and {both[1]:.2f} s by two at once: two processes grade {2 * alone / max(both):.2f}x "
        f"as much per second as one"
    )


def wait_refresh(portal: Portal, *, timeout: float = 120.0) -> None:
    """Until a worker has logged the board refresh that follows a published submission."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(task == "leaderboard.tasks.refresh_board" for _, task, _ in portal.log_events()[1]):
            return
        time.sleep(0.2)


def breakdown(
    portal: Portal, *, start: float, uploaded: float, seen: float, slots: int, cpu: tuple[float, float]
) -> None:
    """Where the time from the start of the upload to the result went, and the board refresh after it."""
    timeline = portal.timeline()
    statuses, tasks = portal.log_events()
    runs = timeline["runs"]

    def at(status: str) -> float:
        return next((t for t, s in statuses if s == status), float("nan"))

    def rel(t: float) -> str:
        return f"+{t - start:.2f}"

    final = timeline["changed"]
    first_claim = min(r["claimed"] for r in runs)
    last_graded = max(r["graded"] for r in runs)
    span = last_graded - first_claim
    per_run = [r["graded"] - r["claimed"] for r in runs]
    graded_sum = sum(per_run)
    waits = [r["claimed"] - r["queued"] for r in runs]
    task_time = {name: sum(s for _, t, s in tasks if t == name) for name in {t for _, t, _ in tasks}}
    by_comp: dict[str, float] = {}
    for r, took in zip(runs, per_run):
        by_comp[r["competition"]] = by_comp.get(r["competition"], 0.0) + took
    slowest = sorted(by_comp.items(), key=lambda item: -item[1])[:5]
    refresh = [(end, took) for end, t, took in tasks if t == "leaderboard.tasks.refresh_board"]
    print(f"    where the time went (seconds from the start of the upload; {slots} grading process(es)):")
    print(
        f"      upload request (client start, streaming, unpacking, validation, rows): {uploaded - start:.2f} "
        f"(submission row {rel(timeline['created'])}, response {rel(uploaded)})"
    )
    print(
        f"      validate step: 'validating' {rel(at('validating'))}, 'grading' {rel(at('grading'))}; "
        f"first run queued {rel(min(r['queued'] for r in runs))}, first claimed {rel(first_claim)}"
    )
    print(
        f"      grading phase {span:.2f} (first claim {rel(first_claim)} -> last graded {rel(last_graded)}): "
        f"{len(runs)} runs, claimed->graded sum {graded_sum:.2f} (mean {graded_sum / len(runs):.3f}, "
        f"max {max(per_run):.2f}), grade_run tasks {task_time.get('grading.tasks.grade_run', 0.0):.2f} in all; "
        f"idle grading-process time {max(0.0, slots * span - graded_sum):.2f} of {slots * span:.2f}; "
        f"queue wait queued->claimed mean {sum(waits) / len(waits):.2f}"
    )
    print("      slowest competitions (all seeds): " + ", ".join(f"{c} {t:.2f}" for c, t in slowest))
    print(
        f"      checks: 'checking' {rel(at('checking'))} -> '{timeline['status']}' {rel(final)} "
        f"({final - at('checking'):.2f}; finish_submission task "
        f"{task_time.get('grading.tasks.finish_submission', 0.0):.2f}"
        f"; last graded -> final {final - last_graded:.2f})"
    )
    print(f"      client saw the result {rel(seen)} (polling delay {seen - final:.2f})")
    if refresh:
        print(
            f"      board refresh after the result: task {refresh[0][1]:.2f}, done {rel(refresh[0][0])} "
            f"({refresh[0][0] - final:.2f} after the final status)"
        )
    print(f"      CPU seconds until the result: web {cpu[0]:.2f}, workers {cpu[1]:.2f}")


def measure_split(split: str, worker_counts: list[int], *, setup: str = "separate") -> None:
    packs, bundle = split_bundle(split)
    competitions = len(json.loads((packs / "index.json").read_text())["competitions"])
    print(f"{split} bundle: {competitions} competitions x 3 seeds, {bundle.stat().st_size / 1024**2:.0f} MB compressed")
    print(f"  load average at the start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    timings, phases = {}, {}
    for count in [2] if setup == "default" else worker_counts:
        portal = Portal(workers=count, label=f"{split}_w{count}", packs=packs, setup=setup)
        try:
            cpu_before = portal.cpu_seconds()
            start = time.time()
            submission = upload(portal, bundle)
            uploaded = time.time()
            body = wait_final(portal, submission["id"])
            seen = time.time()
            cpu_after = portal.cpu_seconds()
            wall = seen - start
            timings[count] = wall
            runs = body["progress"]["total"]
            workers_peak = max(peak_mb(w.pid) for w in portal.workers)
            phases[count] = portal.grading_phase()
            what = "scripts/run's worker (concurrency 2)" if setup == "default" else f"{count} worker(s)"
            print(
                f"  {what}: {wall:.1f} s from upload to '{body['status']}' (upload and validation "
                f"{uploaded - start:.1f} s, grading phase {phases[count]:.1f} s), {runs} runs, "
                f"{runs / wall:.2f} runs/s; "
                f"peak RSS web {portal.web_peak():.0f} MB, busiest worker {workers_peak:.0f} MB; "
                f"runs graded per worker {portal.runs_per_worker()}"
            )
            if body["status"] == "published":
                wait_refresh(portal)
            breakdown(
                portal,
                start=start,
                uploaded=uploaded,
                seen=seen,
                slots=count,
                cpu=(cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]),
            )
        finally:
            portal.stop()
    if 1 in timings and 2 in timings:
        print(
            f"  {split}: two workers vs one: {timings[1] / timings[2]:.2f}x from upload to result, "
            f"{phases[1] / phases[2]:.2f}x in the grading phase"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", nargs="+", choices=["low", "split75"], default=["low", "split75"])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--skip-big-upload", action="store_true")
    parser.add_argument("--skip-ceiling", action="store_true")
    parser.add_argument("--big-gb", type=float, default=2.0)
    parser.add_argument(
        "--setup",
        choices=["separate", "default"],
        default="separate",
        help="separate: PostgreSQL, Redis and N worker processes; default: scripts/run's SQLite, filesystem "
        "broker and one worker with concurrency 2",
    )
    args = parser.parse_args()

    for split in args.splits:
        if not args.skip_ceiling:
            machine_ceiling(split, repeats=3 if split == "low" else 1)
        measure_split(split, args.workers, setup=args.setup)

    if not args.skip_big_upload:
        big = big_bundle(args.big_gb)
        portal = Portal(workers=1, label="big", packs=split_bundle("low")[0])
        try:
            start = time.perf_counter()
            upload(portal, big)
            print(
                f"{big.stat().st_size / 1024**3:.2f} GB upload (streamed, extracted and validated) in "
                f"{time.perf_counter() - start:.1f} s; web process peak RSS {portal.web_peak():.0f} MB"
            )
        finally:
            portal.stop()


if __name__ == "__main__":
    main()
