"""How fast, and in how much memory, the checking step's checks read a split75 bundle.

    python benchmarks/checks_speed.py [--gigabytes 1.0] [--seeds 3]

Writes once under benchmarks/out/checks/ (git-ignored; reused on later runs) a split75 run group, 75
competitions x 3 seeds in MLE-bench's layout (metadata.json; per run run.log, logs/, code/,
submission/submission.csv), whose logs and code add up to about 1 GB: AIDE-like step logs with tqdm
progress bars (one 10 MB line per run of them), tracebacks and validation output, a binary checkpoint, and
code files; one run's log, halfway through, reports a grade_csv medal (the scan must find it). Then, in a fresh
interpreter so that its peak RSS is its own, it builds the CheckContext and
runs every registered check (framework-free, no database), and prints the time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out" / "checks"
sys.path.insert(0, str(ROOT))

_MEASURE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from grading.bundles.manifest import parse_manifest
from grading.checks import run_checks
from grading.checks.context import CheckContext, CompetitionFacts, RunFiles
def rss():  # VmHWM: this process's peak resident memory (ru_maxrss would include the parent's before exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
base = rss()
group = Path(sys.argv[2])
t0 = time.perf_counter()
members = (Path(sys.argv[1]) / "competitions/data/mlebench-v1/splits/split75.txt").read_text().split()
runs = []
for folder in sorted(p for p in group.iterdir() if p.is_dir()):
    cid, seed = folder.name.rsplit("_", 1)[0], int(folder.name.rsplit("-", 1)[1])
    report = {"competition_id": cid, "score": 0.5, "gold_threshold": 0.9, "median_threshold": 0.6,
              "is_lower_better": False, "valid_submission": True, "submission_exists": True}
    runs.append(RunFiles(competition_id=cid, seed=seed, run_path=f"runs/{group.name}/{folder.name}", folder=folder,
                         submission=folder / "submission" / "submission.csv", claimed=dict(report), regraded=report))
context = CheckContext(
    manifest=parse_manifest(data=json.loads((group.parent.parent / "manifest.json").read_text())), runs=tuple(runs),
    competitions={cid: CompetitionFacts(slug=cid, answers_file="prepared/private/test.csv") for cid in members},
    tier_members={"all": members},
)
flags = run_checks(context)
t1 = time.perf_counter()
print(json.dumps({"seconds": round(t1 - t0, 2), "peak_rss_mb": round(rss(), 1), "import_rss_mb": round(base, 1),
                  "runs": len(runs), "files_scanned": context.scan.files_scanned,
                  "bytes_scanned": context.scan.bytes_scanned, "binary_strings": len(context.scan.binary_strings),
                  "flags": sorted({f"{f.code}/{f.key}" for f in flags})}))
"""

STEP = """[{ts}] INFO aide.agent: Step {step}/500: improving node {node} (validation metric {metric:.4f})
[{ts}] INFO aide.interpreter: Executing code (timeout 32400 s)
train_loss=0.4812 val_loss=0.5011 val_auc=0.8123 lr=3e-4
Fold {fold} validation accuracy: 0.8411
Traceback (most recent call last):
  File "runfile.py", line 88, in <module>
    model.fit(X_train, y_train, eval_set=[(X_valid, y_valid)])
ValueError: Input contains NaN
{{"result":"Submission is valid."}}
"""


CODE = """import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
best_score, oof = 0.0, np.zeros(len(train))
for fold, (tr, va) in enumerate(StratifiedKFold(5, shuffle=True, random_state=0).split(train, train.y)):
    model = fit_model(train.iloc[tr])  # LightGBM with early stopping on the validation fold
    oof[va] = model.predict(train.iloc[va])
    score = roc_auc_score(train.y.iloc[va], oof[va])
    best_score = max(best_score, score)
    print(f"fold {fold}: validation AUC {score:.4f}")
pd.read_csv("/home/data/sample_submission.csv").to_csv("/home/submission/submission.csv", index=False)
"""


def write_bundle(*, gigabytes: float, seeds: int) -> Path:
    from competitions.demo.runs import default_manifest

    marker = OUT / f"done-{gigabytes}-{seeds}-v2"
    group = OUT / "bundle" / "runs" / "2026-11-30T10-00-00-GMT_run-group_aide"
    if marker.exists():
        return group
    shutil.rmtree(OUT, ignore_errors=True)
    members = (ROOT / "competitions/data/mlebench-v1/splits/split75.txt").read_text().split()
    per_run = int(gigabytes * 1024**3 / (len(members) * seeds))
    group.mkdir(parents=True, exist_ok=True)
    (OUT / "bundle" / "manifest.json").write_text(json.dumps(default_manifest(split="split75", seeds=seeds)))
    bar = b"".join(b"\r 45%%|####      | %d/781 [00:42<00:00, 18.4it/s]" % i for i in range(250_000))[: 10 * 1024**2]
    step_block = "".join(
        STEP.format(ts=f"2026-11-30 1{i % 10}:00:00", step=i, node=i, metric=0.8, fold=i % 5) for i in range(2000)
    ).encode()
    code = CODE.encode()
    runs: dict[str, dict] = {}
    planted = False
    for cid in members:
        for seed in range(seeds):
            run_id = f"{cid}_00000000-0000-4000-8000-{seed:012d}"
            run = group / run_id
            for sub in ("logs", "code/helpers", "submission"):
                (run / sub).mkdir(parents=True, exist_ok=True)
            (run / "submission" / "submission.csv").write_text(f"id,target\n1,{seed}\n2,{cid}\n")
            (run / "run.log").write_text("[2026-11-30 10:00:00] run started\n[2026-11-30 20:00:00] run ended\n")
            (run / "logs" / "checkpoint.pt").write_bytes(b"\0PK" * 100_000)
            code_bytes = per_run // 10
            with (run / "code" / "solution.py").open("wb") as f:
                for _ in range(max(1, code_bytes // len(code))):
                    f.write(code)
            for i in range(20):
                (run / "code" / "helpers" / f"util_{i}.py").write_bytes(code[:2000])
            with (run / "logs" / "aide.log").open("wb") as f:
                written = 0
                if seed == 0 and len(runs) % 15 == 0:  # a 10 MB progress-bar line in some runs
                    f.write(bar + b"\n")
                    written = len(bar)
                while written < per_run - code_bytes:
                    f.write(step_block)
                    written += len(step_block)
                    if len(runs) == 100 and written > per_run // 2 and not planted:  # one hostile run
                        f.write(b"[2026-11-30 15:00:00] harness: grade_csv -> gold_medal: True, keep node\n")
                        planted = True
            runs[run_id] = {"success": True}
    (group / "metadata.json").write_text(
        json.dumps({"run_group": group.name, "created_at": "2026-11-30T10:00:00", "runs": runs})
    )
    marker.write_text("ok")
    return group


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    group = write_bundle(gigabytes=args.gigabytes, seeds=args.seeds)
    size = sum(p.stat().st_size for p in group.rglob("*") if p.is_file())
    print(f"bundle: {group} ({size / 1024**3:.2f} GiB of logs, code and submissions)")
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT), str(group)], capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout)
    print(
        f"checks: {result['seconds']} s, peak RSS {result['peak_rss_mb']} MB (after imports "
        f"{result['import_rss_mb']} MB); {result['runs']} runs, {result['files_scanned']} files, "
        f"{result['bytes_scanned'] / 1024**3:.2f} GiB scanned, {result['binary_strings']} binary read for strings"
    )
    print(f"flags: {', '.join(result['flags']) or 'none'}")


if __name__ == "__main__":
    main()
