"""Grading speed and memory for one full seed of a split, at the real test-set sizes.

    .venv/bin/python benchmarks/grading_speed.py [--split low|split75] [--quality 0.8] [--regenerate]

Writes (once, then reuses) synthetic full-size packs of the split's competitions (default: the 22 Low-tier
ones) and one simulated agent's submissions under benchmarks/out/ (git-ignored), then measures in fresh
interpreters:
- per competition: seconds to read the answers and the submission and grade (reading files included),
  and the process's peak RSS;
- one whole seed, the submissions graded one after the other in one process, as a grading worker would:
  total seconds and peak RSS.
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
jobs = json.loads(sys.argv[2])
# VmHWM restarts at exec; ru_maxrss would carry over the parent's peak.
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) / 1024
results = []
start = time.perf_counter()
for job in jobs:
    t0 = time.perf_counter()
    pack = json.loads(Path(job["pack"], "pack.json").read_text())
    thresholds = thresholds_from_leaderboard(read_leaderboard(Path(job["pack"], pack["leaderboard"])))
    report = grade_submission(
        competition_id=pack["competition_id"], submission_path=Path(job["submission"]),
        answers_path=Path(job["pack"], pack["answers"]), grader=GraderRef(**pack["grader"]), thresholds=thresholds,
    )
    results.append({"competition": pack["competition_id"], "seconds": time.perf_counter() - t0,
                    "score": report.score, "reason": report.reason})
print(json.dumps({"results": results, "total": time.perf_counter() - start, "peak_mb": rss()}))
"""


def prepare(*, quality: float, regenerate: bool, split: str = "low") -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from competitions.demo.catalog import split_ids
    from competitions.demo.packs import make_demo_pack
    from competitions.demo.runs import pack_answers, write_run_group

    packs, runs = packs_dir(split), runs_dir(split)
    if regenerate:
        shutil.rmtree(packs, ignore_errors=True)
        shutil.rmtree(runs, ignore_errors=True)
    if not (packs / "index.json").exists():
        print("writing full-size synthetic packs (once) ...", file=sys.stderr)
        make_demo_pack(out_dir=packs, split=split, size="full", seed=0, n_teams=100)
    if not runs.exists() or not any(runs.iterdir()):
        print("writing the simulated agent's submissions (once) ...", file=sys.stderr)
        write_run_group(
            out_dir=runs, competition_ids=split_ids(split), seeds=(0,), quality=quality, answers=pack_answers(packs)
        )
    group = next(runs.iterdir())
    jobs = []
    for run in sorted(p for p in group.iterdir() if p.is_dir()):
        competition = run.name.rsplit("_", 1)[0]
        jobs.append({"pack": str(packs / competition), "submission": str(run / "submission" / "submission.csv")})
    return jobs


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
    args = parser.parse_args()
    jobs = prepare(quality=args.quality, regenerate=args.regenerate, split=args.split)

    print(f"{'competition':50} {'rows':>9} {'seconds':>8} {'peak MB':>8}  score")
    for job in jobs:
        single = measure([job])
        row = single["results"][0]
        rows = json.loads(Path(job["pack"], "pack.json").read_text()).get("rows", "")
        score = row["score"] if row["score"] is not None else f"invalid: {row['reason']}"
        print(f"{row['competition']:50} {rows:>9} {row['seconds']:8.2f} {single['peak_mb']:8.0f}  {score}")
    seed = measure(jobs)
    print(
        f"\nOne full {args.split} seed ({len(jobs)} submissions, files read included), one process: "
        f"{seed['total']:.2f} s, peak {seed['peak_mb']:.0f} MB"
    )
    if args.split == "low":
        print("Target: at most 5.5 s (half the official grader's ~11 s) and under 1 GB.")


if __name__ == "__main__":
    main()
