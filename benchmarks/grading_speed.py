"""Grading speed and memory for one full seed of a split, at the real test-set sizes.

    .venv/bin/python benchmarks/grading_speed.py [--split low|split75] [--quality 0.8] [--regenerate]
        [--competitions ID ...] [--repeat N]

Writes (once, then reuses) synthetic full-size packs of the split's competitions (default: the 22 Low-tier
ones) and one simulated agent's submissions under benchmarks/out/ (git-ignored), then measures in fresh
interpreters:
- per competition: seconds to read the answers and the submission and grade (reading files included),
  and the process's peak RSS;
- one whole seed, the submissions graded one after the other in one process, as a grading worker would:
  total seconds and peak RSS.
``--competitions`` writes and grades only the named competitions of the split (no whole-seed line), and
``--repeat N`` keeps the best of N fresh interpreters per competition, for a machine shared with other work;
the CPU seconds (the process's, best of N) vary less than the wall-clock ones there. ``--seed-only`` measures
only the whole seed. The whole seed gives freed memory back after each submission
(grading.engine.heap.release_memory), as a grading worker does between runs.
The reference: MLE-bench's official grader needs about 11 s and peaks at 1.7 GB for a Lite seed here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SPLIT_NAMES = {"low": "lite", "split75": "split75"}


def packs_dir(split: str) -> Path:
    return OUT / f"{SPLIT_NAMES[split]}-full-packs"


def runs_dir(split: str) -> Path:
    return OUT / f"{SPLIT_NAMES[split]}-full-runs"


_GRADE = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from grading.engine.medals import read_leaderboard, thresholds_from_leaderboard
from grading.engine.registry import GraderRef
from grading.engine.report import grade_submission
import grading.engine.graders  # imports the graders (and SciPy) before the clock starts, as in a worker
from grading.engine.heap import release_memory
jobs = json.loads(sys.argv[2])
# VmHWM restarts at exec; ru_maxrss would carry over the parent's peak.
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) / 1024
results = []
start, cpu_start = time.perf_counter(), time.process_time()
for job in jobs:
    t0, c0 = time.perf_counter(), time.process_time()
    pack = json.loads(Path(job["pack"], "pack.json").read_text())
    thresholds = thresholds_from_leaderboard(read_leaderboard(Path(job["pack"], pack["leaderboard"])))
    report = grade_submission(
        competition_id=pack["competition_id"], submission_path=Path(job["submission"]),
        answers_path=Path(job["pack"], pack["answers"]), grader=GraderRef(**pack["grader"]), thresholds=thresholds,
    )
    results.append({"competition": pack["competition_id"], "seconds": time.perf_counter() - t0,
                    "cpu": time.process_time() - c0, "score": report.score, "reason": report.reason})
    del report
    release_memory()  # as a grading worker does after each run (grading/tasks.py)
print(json.dumps({"results": results, "total": time.perf_counter() - start, "cpu": time.process_time() - cpu_start,
                  "peak_mb": rss()}))
"""


def prepare(
    *, quality: float, regenerate: bool, split: str = "low", competitions: list[str] | None = None
) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from competitions.demo.catalog import split_ids
    from competitions.demo.packs import make_demo_pack
    from competitions.demo.runs import pack_answers, write_run_group

    packs, runs = packs_dir(split), runs_dir(split)
    if regenerate:
        shutil.rmtree(packs, ignore_errors=True)
        shutil.rmtree(runs, ignore_errors=True)
    wanted = split_ids(split) if competitions is None else competitions
    unknown = sorted(set(wanted) - set(split_ids(split)))
    if unknown:
        raise SystemExit(f"not in {split}: {', '.join(unknown)}")
    # Packs and runs are written per competition, so a partial set (--competitions) is completed later.
    missing = [c for c in wanted if not (packs / c / "pack.json").exists()]
    if missing:
        print(f"writing {len(missing)} full-size synthetic packs (once) ...", file=sys.stderr)
        make_demo_pack(out_dir=packs, split=split, competition_ids=missing, size="full", seed=0, n_teams=100)
    group = runs / "demo-run-group"
    missing = [c for c in wanted if not _run_folder(group, c)]
    if missing:
        print(f"writing the simulated agent's submissions for {len(missing)} competitions (once) ...", file=sys.stderr)
        written = write_run_group(
            out_dir=runs / "partial", competition_ids=missing, seeds=(0,), quality=quality, answers=pack_answers(packs)
        )
        group.mkdir(parents=True, exist_ok=True)
        for run in written.iterdir():
            if run.is_dir():
                run.rename(group / run.name)
        shutil.rmtree(runs / "partial")
    jobs = []
    for competition in wanted:
        found = _run_folder(group, competition)
        assert found is not None
        jobs.append({"pack": str(packs / competition), "submission": str(found / "submission" / "submission.csv")})
    return jobs


def _run_folder(group: Path, competition: str) -> Path | None:
    runs = (p for p in group.glob(f"{competition}_*") if p.is_dir() and p.name.rsplit("_", 1)[0] == competition)
    return next(runs, None)


def measure(jobs: list[dict]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _GRADE, str(ROOT), json.dumps(jobs)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLIT_NAMES), default="low")
    parser.add_argument("--quality", type=float, default=0.8)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--competitions", nargs="+", metavar="ID", help="only these competitions of the split")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per competition")
    parser.add_argument("--seed-only", action="store_true", help="only the whole seed in one process")
    args = parser.parse_args()
    jobs = prepare(quality=args.quality, regenerate=args.regenerate, split=args.split, competitions=args.competitions)

    print(f"{'competition':50} {'rows':>9} {'seconds':>8} {'CPU s':>8} {'peak MB':>8}  score")
    for job in [] if args.seed_only else jobs:
        runs = [measure([job]) for _ in range(args.repeat)]
        single = min(runs, key=lambda m: m["results"][0]["seconds"])
        row = single["results"][0]
        rows = json.loads(Path(job["pack"], "pack.json").read_text()).get("rows", "")
        score = row["score"] if row["score"] is not None else f"invalid: {row['reason']}"
        cpu = min(m["results"][0]["cpu"] for m in runs)
        print(f"{row['competition']:50} {rows:>9} {row['seconds']:8.2f} {cpu:8.2f} {single['peak_mb']:8.0f}  {score}")
    if args.competitions:
        return
    seed = measure(jobs)
    print(
        f"\nOne full {args.split} seed ({len(jobs)} submissions, files read included), one process: "
        f"{seed['total']:.2f} s ({seed['cpu']:.2f} CPU s), peak {seed['peak_mb']:.0f} MB"
    )
    if args.split == "low":
        print("Target: at most 5.5 s (half the official grader's ~11 s) and under 1 GB.")


if __name__ == "__main__":
    main()
