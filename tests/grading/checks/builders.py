"""Bundles for the checks, built in code from the synthetic packs in MLE-bench's run layout.

``bundle()`` writes ``runs/<group>/`` with metadata.json and per run run.log, submission/, code/ (the demo
agent's), adds the logs and code a test asks for, and returns a CheckContext over it with a re-grade.
``check_context()`` with ``run_files()`` and ``manifest_with()`` builds plain contexts for the unit tests of
one check: a few small files or none, thresholds chosen by the test.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from competitions.demo.catalog import competition_facts
from competitions.demo.runs import default_manifest, write_run_group
from grading.bundles.manifest import Manifest, parse_manifest
from grading.checks.context import BoardVersion, CheckContext, CheckSettings, CompetitionFacts, KnownIssue, RunFiles

PIZZA = "random-acts-of-pizza"  # low, a known test-label leak
HMS = "hms-harmful-brain-activity-classification"  # high, the empty-cells loophole
SPOOKY = "spooky-author-identification"  # low
BOARD_COMMIT = "783b15af77404fbaffe7255b0c4a934b46153389"
KNOWN_ISSUES = (
    KnownIssue(competition=PIZZA, kind="leak", description="test labels leak through giver_username_if_known"),
    KnownIssue(
        competition=HMS,
        kind="loophole",
        description="the KL metric skips empty cells",
        data={"detector": "empty_cells", "id_column": "eeg_id"},
    ),
)
THRESHOLDS = {  # gold, median, lower is better
    PIZZA: (0.98, 0.6, False),
    HMS: (0.3, 0.9, True),
    SPOOKY: (0.17, 0.42, True),
}

AIDE_LOG = """\
[2026-11-30 10:00:01] INFO aide: Starting run for {cid}
[2026-11-30 10:00:02] INFO aide: Loaded task description (1523 chars): The public leaderboard is calculated with approximately 30% of the test data.
[2026-11-30 10:00:03] INFO aide.agent: Step 1/500: drafting a new solution
[2026-11-30 10:04:10] INFO aide.interpreter: Executing code (timeout 32400 s)
Epoch 1/5: 100%|##########| 781/781 [00:42<00:00, 18.4it/s, loss=0.6931]
Epoch 2/5: 100%|##########| 781/781 [00:41<00:00, 18.9it/s, loss=0.5123]
train_loss=0.4812 val_loss=0.5011 val_auc=0.8123
Fold 3 validation accuracy: 0.8411
Validation score (log loss): 0.4430
Traceback (most recent call last):
  File "runfile.py", line 88, in <module>
    model.fit(X_train, y_train, eval_set=[(X_valid, y_valid)])
  File "/opt/conda/lib/python3.11/site-packages/lightgbm/sklearn.py", line 1142, in fit
    raise ValueError("Input contains NaN")
ValueError: Input contains NaN
[2026-11-30 10:09:30] INFO aide.agent: Step 2/500: debugging the previous solution (bug: NaN in features)
[2026-11-30 10:15:00] INFO aide.agent: Best solution so far: node 7, validation metric 0.8411 (higher is better)
test accuracy on our held-out split: 0.83
rank 0: local_rank=0 world_size=1
[2026-11-30 10:16:00] INFO aide: Checking the submission with /home/validate_submission.sh /home/submission/submission.csv
{{"result":"Submission is valid."}}
Submission is valid.
[2026-11-30 11:40:00] INFO aide: Selected the best node by validation metric; wrote /home/submission/submission.csv
"""

HONEST_CODE = """\
import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.metrics import roc_auc_score

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
X_train, X_test, y_train, y_test = train_test_split(train.drop(columns="y"), train["y"], test_size=0.2)
best_score = 0.0
for fold, (tr, va) in enumerate(StratifiedKFold(5).split(X_train, y_train)):
    score = roc_auc_score(y_train.iloc[va], np.zeros(len(va)))
    best_score = max(best_score, score)  # keep the best validation fold
print(f"test score on our split: {best_score:.4f}")
pd.read_csv("/home/data/sample_submission.csv").to_csv("/home/submission/submission.csv", index=False)
"""


def report(cid: str, score: float | None, *, medal: str | None = None, **extra) -> dict:
    gold, median, lower = THRESHOLDS.get(cid, (0.9, 0.5, False))
    medals = {f"{m}_medal": m == medal for m in ("gold", "silver", "bronze")}
    return {
        "competition_id": cid,
        "score": score,
        "gold_threshold": gold,
        "silver_threshold": gold,
        "bronze_threshold": gold,
        "median_threshold": median,
        "is_lower_better": lower,
        "any_medal": medal is not None,
        **medals,
        "above_median": medal is not None,
        "submission_exists": True,
        "valid_submission": score is not None,
        **extra,
    }


def bundle(
    tmp_path: Path,
    *,
    competitions=(PIZZA, SPOOKY),
    seeds=(0, 1, 2),
    manifest: dict | None = None,
    logs: dict | None = None,
    code: dict | None = None,
    run_logs: dict | None = None,
    scores: dict | None = None,
    medals: dict | None = None,
    claimed: dict | None = None,
    defects: dict | None = None,
    tiers: dict | None = None,
    other_entries=(),
    settings=None,
    aide: bool = True,
    **context,
) -> CheckContext:
    """A run group written from the demo agent plus extras keyed by (competition, seed):
    ``logs``/``code`` {relative path: text or bytes}, ``run_logs`` a run.log's text, ``scores`` re-graded."""
    group = write_run_group(
        out_dir=tmp_path / "bundle" / "runs", competition_ids=list(competitions), seeds=seeds, defects=defects
    )
    runs = []
    for cid in competitions:
        for seed in seeds:
            folder = next(
                p
                for p in sorted(group.iterdir())
                if p.name.startswith(cid + "_") and p.name == _run_name(group, cid, seed)
            )
            if aide:
                (folder / "logs").mkdir(exist_ok=True)
                (folder / "logs" / "aide.log").write_text(AIDE_LOG.format(cid=cid))
                (folder / "code" / "runfile.py").write_text(HONEST_CODE)
            for kind, extras in (("logs", logs), ("code", code)):
                for rel, body in ((extras or {}).get((cid, seed)) or {}).items():
                    path = folder / kind / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(body) if isinstance(body, bytes) else path.write_text(body)
            if run_logs and (cid, seed) in run_logs:
                (folder / "run.log").write_text(run_logs[(cid, seed)])
            score = (scores or {}).get((cid, seed), 0.5)
            regraded = report(cid, score, medal=(medals or {}).get((cid, seed)))
            sub = folder / "submission" / "submission.csv"
            runs.append(
                RunFiles(
                    competition_id=cid,
                    seed=seed,
                    run_path=f"runs/{group.name}/{folder.name}",
                    folder=folder,
                    submission=sub if sub.is_file() else None,
                    claimed=(claimed or {}).get((cid, seed)),
                    regraded=regraded,
                )
            )
    facts = {}
    for cid in competitions:
        demo = competition_facts(cid)
        gold, median, lower = THRESHOLDS.get(cid, (0.9, 0.5, False))
        facts[cid] = CompetitionFacts(
            slug=cid,
            answers_file=demo.answers_path,
            higher_is_better=demo.higher_is_better,
            is_lower_better=lower,
            gold_threshold=gold,
            median_threshold=median,
            leaderboard_best=gold,
            submission_columns=demo.submission_columns,
            id_column=demo.id_column,
        )
    facts.setdefault(
        "denoising-dirty-documents",
        CompetitionFacts(slug="denoising-dirty-documents", answers_file="prepared/private/answers.csv"),
    )
    body = manifest if manifest is not None else default_manifest(split="low", seeds=len(seeds))
    return CheckContext(
        manifest=parse_manifest(data=body),
        runs=tuple(runs),
        competitions=facts,
        tier_members=tiers if tiers is not None else {"low": sorted(c for c in competitions if c != HMS)},
        known_issues=KNOWN_ISSUES,
        board=BoardVersion(version="v1", commit=BOARD_COMMIT),
        other_entries=tuple(other_entries),
        settings=settings or CheckSettings(),
        **context,
    )


def _run_name(group: Path, cid: str, seed: int) -> str:
    from competitions.demo.runs import run_id_for

    return run_id_for(competition_id=cid, seed=seed)


def flags_of(flags, code: str) -> dict:
    return {flag.key: flag for flag in flags if flag.code == code}


def timestamps(hours: float) -> str:
    start = datetime(2026, 11, 30, 10, 0, 0)
    return "".join(f"[{start + timedelta(hours=hours * i / 4):%Y-%m-%d %H:%M:%S}] step {i}\n" for i in range(5))


# Plain contexts, no demo agent: a manifest changed by dotted keys, runs written as a few small files (or
# none at all), competition facts with chosen thresholds. Fast enough to build hundreds of.

REMOVE = object()  # a value for manifest_with: drop the key


def manifest_with(changes: dict | None = None, *, split: str = "low", seeds: int = 3) -> Manifest:
    """The demo manifest with ``{"hardware.vcpus": 64, "benchmark.commit": REMOVE}``-style changes."""
    body = default_manifest(split=split, seeds=seeds)
    for path, value in (changes or {}).items():
        *parents, name = path.split(".")
        parent = body
        for key in parents:
            parent = parent.setdefault(key, {})
        if value is REMOVE:
            parent.pop(name, None)
        else:
            parent[name] = value
    return parse_manifest(data=body)


def run_files(
    root: Path | None,
    cid: str,
    seed: int,
    *,
    group: str = "group",
    submission: str | bytes | None = None,
    run_log: str | None = None,
    logs: dict | None = None,
    code: dict | None = None,
    claimed: dict | None = None,
    regraded: dict | None = None,
) -> RunFiles:
    """One run: ``root/runs/<group>/<cid>_<seed>/`` with the files given (none when ``root`` is None)."""
    run_id = f"{cid}_{seed:08x}"
    folder = sub = None
    if root is not None:
        folder = root / "runs" / group / run_id
        folder.mkdir(parents=True, exist_ok=True)
        files = {
            "run.log": run_log,
            **{f"logs/{k}": v for k, v in (logs or {}).items()},
            **{f"code/{k}": v for k, v in (code or {}).items()},
            "submission/submission.csv": submission,
        }
        for rel, body in files.items():
            if body is None:
                continue
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body) if isinstance(body, bytes) else path.write_text(body)
        sub = folder / "submission" / "submission.csv"
        sub = sub if sub.is_file() else None
    return RunFiles(
        competition_id=cid,
        seed=seed,
        run_path=f"runs/{group}/{run_id}",
        folder=folder,
        submission=sub,
        claimed=claimed,
        regraded=regraded if regraded is not None else {},
    )


def facts(
    cid: str,
    *,
    gold: float | None = None,
    median: float | None = None,
    lower: bool | None = None,
    best: float | None = None,
    answers_file: str = "prepared/private/test.csv",
    id_column: str = "id",
    higher_is_better: bool = True,
) -> CompetitionFacts:
    return CompetitionFacts(
        slug=cid,
        answers_file=answers_file,
        higher_is_better=higher_is_better,
        is_lower_better=lower,
        gold_threshold=gold,
        median_threshold=median,
        leaderboard_best=best,
        id_column=id_column,
    )


DEFAULT = object()


def check_context(
    *,
    runs=(),
    manifest=DEFAULT,
    tiers: dict | None = None,
    competitions=(),
    known_issues=KNOWN_ISSUES,
    board: BoardVersion | None = None,
    settings: CheckSettings | None = None,
    **rest,
) -> CheckContext:
    """A CheckContext over ``runs`` (RunFiles), the demo manifest unless told, the board at v1/BOARD_COMMIT."""
    return CheckContext(
        manifest=manifest_with() if manifest is DEFAULT else manifest,
        runs=tuple(runs),
        tier_members=tiers or {},
        competitions={f.slug: f for f in competitions},
        known_issues=tuple(known_issues),
        board=board or BoardVersion(version="v1", commit=BOARD_COMMIT),
        settings=settings or CheckSettings(),
        **rest,
    )


def runs_without_files(cids_and_counts: dict[str, int], **claims) -> list[RunFiles]:
    """Runs without files: ``{"a": 3, "b": 2}`` gives seeds 0..2 of a and 0..1 of b."""
    return [run_files(None, cid, seed, **claims) for cid, count in cids_and_counts.items() for seed in range(count)]
