"""How long `verify --data` takes to re-grade a Lite entry of three seeds (66 submissions), on two cores and on one.

    .venv/bin/python benchmarks/verify_data_speed.py [--size small|full] [--repeats 3] [--cores 2 1]

Writes once, under benchmarks/out/verify-data-<size>/ (git-ignored), what a reader has: the 22 Lite competitions
in MLE-bench's prepared layout (<data>/<id>/prepared/private/...), and an entry's evidence folder: a simulated
agent's three-seed bundle, its per-seed reports graded by the engine in this process (each competition's grader
from the registry, thresholds from its leaderboard), competitions.json with the answers' SHA-256. Then it runs the
client's command as a process of its own, `python -I client/mleportal.py verify-data EVIDENCE --data DATA` with
this checkout's engine on PYTHONPATH, pinned with taskset to the first N cores, and prints the best wall time of
--repeats runs: from the process's start to its exit, so imports, hashing the answers, reading the bundle and
grading every submission are all in it. Every row must come out ok, or the figure is not printed.

--size small is the demo's size (hundreds of rows per competition, what the tests use); --size full the real
test-set sizes (denoising-dirty-documents' 5.85 M rows, the text-normalization challenges' million), several GB
written the first time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))
SEEDS = (0, 1, 2)


def prepare(size: str) -> tuple[Path, Path]:
    """(the evidence folder, the MLE-bench data folder), written once per size."""
    from competitions.demo.catalog import split_ids
    from competitions.demo.packs import make_demo_pack
    from competitions.demo.runs import pack_answers, run_id_for, write_run_bundle, write_run_group
    from grading.engine import ENGINE_VERSION, grade_file, thresholds_from_leaderboard
    from grading.engine.medals import read_leaderboard

    base = OUT / f"verify-data-{size}"
    data, evidence = base / "data", base / "evidence"
    if (evidence / "evidence.json").is_file():
        return evidence, data
    shutil.rmtree(base, ignore_errors=True)
    print(f"writing the Lite competitions at {size} size and a three-seed entry (once) ...", file=sys.stderr)
    make_demo_pack(out_dir=data, split="low", size=size, seed=0, n_teams=100, layout="mlebench")  # type: ignore[arg-type]
    group = write_run_group(out_dir=base / "runs", seeds=SEEDS, quality=0.9, answers=pack_answers(data))
    bundle = write_run_bundle(run_group=group, out_path=evidence / "bundle" / "entry-1-bundle.tar.gz")
    registry = ROOT / "competitions" / "data" / "mlebench-v1"
    graders = json.loads((registry / "graders.json").read_text())
    # Where MLE-bench's prepared data keeps each answers file (the registry's, as the portal records it).
    answers_files = {c["id"]: c["answers_file"] for c in json.loads((registry / "competitions.json").read_text())}
    competitions: dict[str, dict[str, Any]] = {}
    reports: dict[int, list[dict[str, Any]]] = {seed: [] for seed in SEEDS}
    for competition_id in split_ids("low"):
        answers = data / competition_id / answers_files[competition_id]
        limits = thresholds_from_leaderboard(read_leaderboard(data / competition_id / "leaderboard.csv"))
        thresholds = {
            "gold": limits.gold,
            "silver": limits.silver,
            "bronze": limits.bronze,
            "median": limits.median,
            "is_lower_better": limits.is_lower_better,
        }
        grader = {"name": graders[competition_id]["grader"], "params": graders[competition_id]["params"]}
        for seed in SEEDS:
            member = (
                f"runs/{group.name}/{run_id_for(competition_id=competition_id, seed=seed)}/submission/submission.csv"
            )
            report = grade_file(
                base / member,
                answers,
                competition_id=competition_id,
                grader=grader,
                thresholds=thresholds,
                display_path=member,
            )
            report.pop("reason")
            reports[seed].append(report)
        competitions[competition_id] = {
            "grader": grader,
            "answers_sha256": hashlib.sha256(answers.read_bytes()).hexdigest(),
            "answers_file": answers_files[competition_id],
            "thresholds": thresholds,
        }
    documents: dict[str, Any] = {
        f"reports/seed-{seed}.json": {"competition_reports": entries} for seed, entries in reports.items()
    }
    documents["competitions.json"] = competitions
    for name, value in documents.items():
        (evidence / name).parent.mkdir(parents=True, exist_ok=True)
        (evidence / name).write_text(json.dumps(value, indent=2, allow_nan=True))
    files = [
        {"path": path.relative_to(evidence).as_posix(), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for path in sorted(evidence.rglob("*"))
        if path.is_file()
    ]
    engine = {"version": ENGINE_VERSION, "url": "http://portal.invalid/downloads/engine/"}
    header = {"format": "mle-portal-evidence/1", "entry_id": 1, "engine": engine, "files": files}
    (evidence / "evidence.json").write_text(json.dumps(header, indent=2))
    assert bundle.is_file()
    return evidence, data


def run_once(evidence: Path, data: Path, cores: int) -> tuple[float, float, str, int]:
    """One verify-data process pinned to the first `cores` cores: (wall seconds, CPU seconds (user + system),
    its output, its exit code)."""
    command = [sys.executable, str(ROOT / "client" / "mleportal.py"), "verify-data", str(evidence), "--data", str(data)]
    pinned = ["taskset", "-c", ",".join(str(core) for core in range(cores)), *command]
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)}  # this checkout's engine, as the wheel installs it
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(pinned, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 1])
    args = parser.parse_args()
    evidence, data = prepare(args.size)
    for cores in args.cores:
        if cores > (os.cpu_count() or 1):
            print(f"{cores} cores: this machine has {os.cpu_count()}", file=sys.stderr)
            continue
        times, cpus = [], []
        for _ in range(args.repeats):
            seconds, cpu, output, code = run_once(evidence, data, cores)
            if code != 0 or "0 differ, 0 could not be checked" not in output:
                sys.exit(f"verify-data did not agree everywhere (exit {code}):\n{output}")
            times.append(seconds)
            cpus.append(cpu)
        # Other work on the machine stretches the wall time, not the CPU time: both are printed, with the load.
        print(
            f"verify --data, Lite entry of 3 seeds (66 submissions, {args.size} size), {cores} core(s): "
            f"best {min(times):.2f} s wall of {len(times)} (all: {', '.join(f'{t:.2f}' for t in times)}), "
            f"CPU {min(cpus):.2f}-{max(cpus):.2f} s, load average {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
