"""Upload-to-result speed of the re-grading pipeline, with one and with two Celery worker processes.

    .venv/bin/python benchmarks/pipeline_speed.py [--splits low split75] [--workers 1 2] [--skip-big-upload]

Needs PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379), as scripts/test starts them. For each split
(default: Lite, 22 competitions, then split75, all 75) it uses the full-size synthetic packs of
benchmarks/grading_speed.py (written once under benchmarks/out/), makes a 3-seed bundle of a simulated agent
at the real answer sizes (22 × 3 or 75 × 3 runs), and for each worker count: starts a fresh database,
gunicorn (one process) and N worker processes (concurrency 1 each), uploads the bundle with
client/mleportal.py, and waits for the final status. It prints the wall time from the start of the upload
to the result, runs per second, and the peak RSS of the web process and of the busiest worker (its prefork
children included), and the grading phase alone: from the first run a worker claimed to the last run graded,
the part that more workers share (upload, unpacking and the final checks are done once). Then it streams a 2 GB
bundle to the web process and prints that process's peak RSS.
First it measures this machine's ceiling: how much more grading two processes do at once than one, without
Celery or a database, the most two workers can gain. With BENCH_KEEP_LOGS=DIR the web and worker logs of each
portal are copied there before it is removed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Portal:
    """A fresh database and data folder, gunicorn and N worker processes."""

    def __init__(self, *, workers: int, label: str, packs: Path):
        self.data = Path(tempfile.mkdtemp(prefix=f"portal-bench-{label}-"))
        db = f"portal_bench_{label}"
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
        subprocess.run(["redis-cli", "-n", "14", "flushdb"], check=True, capture_output=True)
        self.env = {
            **os.environ,
            "DATABASE_URL": f"postgresql://postgres@127.0.0.1:5432/{db}",
            "REDIS_URL": "redis://127.0.0.1:6379/14",
            "PORTAL_DATA_DIR": str(self.data),
            "DEBUG": "true",
            "SUBMISSION_DAILY_QUOTA": "100",
            "LOG_LEVEL": "WARNING",
        }
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
        self.workers = [
            self.spawn(
                [
                    str(BIN / "celery"),
                    "-A",
                    "portal",
                    "worker",
                    "-Q",
                    "default,grading",
                    "-c",
                    "1",
                    "-n",
                    f"bench{i}@%h",
                    "--without-gossip",
                    "--without-mingle",
                    "--loglevel",
                    "INFO",
                ]
            )
            for i in range(workers)
        ]
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

    def grading_phase(self) -> float:
        """Seconds from the first run claimed by a worker to the last run graded (the parallel part)."""
        db = self.env["DATABASE_URL"].rsplit("/", 1)[1]
        out = subprocess.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                db,
                "-At",
                "-c",
                "SELECT EXTRACT(EPOCH FROM max(graded_at) - min(claimed_at)) FROM grading_run",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return float(out or "nan")

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


def measure_split(split: str, worker_counts: list[int]) -> None:
    packs, bundle = split_bundle(split)
    competitions = len(json.loads((packs / "index.json").read_text())["competitions"])
    print(f"{split} bundle: {competitions} competitions x 3 seeds, {bundle.stat().st_size / 1024**2:.0f} MB compressed")
    timings, phases = {}, {}
    for count in worker_counts:
        portal = Portal(workers=count, label=f"{split}_w{count}", packs=packs)
        try:
            start = time.perf_counter()
            submission = upload(portal, bundle)
            uploaded = time.perf_counter() - start
            body = wait_final(portal, submission["id"])
            wall = time.perf_counter() - start
            timings[count] = wall
            runs = body["progress"]["total"]
            workers_peak = max(peak_mb(w.pid) for w in portal.workers)
            phases[count] = portal.grading_phase()
            print(
                f"  {count} worker(s): {wall:.1f} s from upload to '{body['status']}' (upload and validation "
                f"{uploaded:.1f} s, grading phase {phases[count]:.1f} s), {runs} runs, {runs / wall:.2f} runs/s; "
                f"peak RSS web {portal.web_peak():.0f} MB, busiest worker {workers_peak:.0f} MB; "
                f"runs graded per worker {portal.runs_per_worker()}"
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
    args = parser.parse_args()

    for split in args.splits:
        if not args.skip_ceiling:
            machine_ceiling(split, repeats=3 if split == "low" else 1)
        measure_split(split, args.workers)

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
