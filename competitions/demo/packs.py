"""Write synthetic competition packs, in the portal's layout or MLE-bench's prepared-data layout.

See ``competitions/demo/README.md`` for both layouts.
"""

from __future__ import annotations

import json
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Literal, TypedDict

from competitions.demo.answers import DemoAnswers, Size, expected_rows, generate_answers
from competitions.demo.catalog import BENCHMARK, CompetitionFacts, grader_choice, split_ids
from competitions.demo.csvio import write_csv, write_jsonl
from competitions.demo.leaderboard import DEFAULT_GRADE_ROWS, DEFAULT_TEAMS, simulate_leaderboard
from grading.engine.hashing import file_sha256

Layout = Literal["portal", "mlebench"]
PACK_SCHEMA = "demo-pack/1"


class _PackJob(TypedDict):
    """write_pack's keyword arguments for one competition."""

    competition_id: str
    out_dir: Path
    size: Size
    seed: int
    layout: Layout
    n_teams: int
    grade_rows: int


def make_demo_pack(
    *,
    out_dir: Path,
    split: str = "low",
    size: Size = "small",
    seed: int = 0,
    layout: Layout = "portal",
    competition_ids: list[str] | None = None,
    n_teams: int = DEFAULT_TEAMS,
    grade_rows: int = DEFAULT_GRADE_ROWS,
    workers: int | None = None,
) -> list[Path]:
    """Write one pack per competition of ``split`` (or of ``competition_ids``) under ``out_dir``.

    Returns the pack folders in split order. ``workers`` processes write packs in parallel (default: the
    CPU count, at most 8); the output does not depend on it.
    """
    out_dir = Path(out_dir)
    ids = competition_ids if competition_ids is not None else split_ids(split)
    jobs = [
        _PackJob(
            competition_id=cid,
            out_dir=out_dir,
            size=size,
            seed=seed,
            layout=layout,
            n_teams=n_teams,
            grade_rows=grade_rows,
        )
        for cid in ids
    ]
    workers = min(workers or min(os.cpu_count() or 1, 8), len(jobs)) or 1
    if workers == 1:
        paths = [write_pack(**job) for job in jobs]
    else:
        # Biggest packs first, so the long ones do not end up alone at the tail.
        order = sorted(range(len(jobs)), key=lambda i: -expected_rows(competition_id=ids[i], size=size))
        with (
            ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool,
            warnings.catch_warnings(),
        ):
            warnings.filterwarnings("ignore", message=r".*multi-threaded, use of fork\(\)", category=DeprecationWarning)
            futures = {i: pool.submit(write_pack, **jobs[i]) for i in order}
            paths = [futures[i].result() for i in range(len(jobs))]
    index = {
        "schema": "demo-packs/1",
        "benchmark": BENCHMARK,
        "split": split if competition_ids is None or list(competition_ids) == split_ids(split) else None,
        "size": size,
        "seed": seed,
        "layout": layout,
        "competitions": ids,
    }
    (out_dir / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return paths


def _pool_context() -> BaseContext:
    """fork where the platform has it: callers need no ``if __name__ == "__main__"`` guard and workers start
    at once. The only threads the parent holds here are idle BLAS workers (OpenBLAS re-initialises them
    after fork), so Python's multi-threaded-fork warning is silenced for this pool only."""
    return get_context("fork" if "fork" in get_all_start_methods() else None)


def write_pack(
    *,
    competition_id: str,
    out_dir: Path,
    size: Size = "small",
    seed: int = 0,
    layout: Layout = "portal",
    n_teams: int = DEFAULT_TEAMS,
    grade_rows: int = DEFAULT_GRADE_ROWS,
) -> Path:
    """Write one competition's pack and return its folder ``<out_dir>/<competition_id>``."""
    if layout not in ("portal", "mlebench"):
        raise ValueError(f"layout must be 'portal' or 'mlebench', not {layout!r}")
    data = generate_answers(competition_id=competition_id, size=size, seed=seed)
    facts, quoting = data.facts, data.spec.csv_quoting
    root = Path(out_dir) / competition_id
    files = pack_files(facts=facts, layout=layout)
    if files["answers"].endswith(".jsonl"):  # TF2-QA: one JSON record per answers row
        write_jsonl(data.answers, root / files["answers"])
    else:
        write_csv(data.answers, root / files["answers"], quoting=quoting)
    if data.gold_submission is not None:
        write_csv(data.gold_submission, root / files["gold_submission"], quoting=quoting)
    write_csv(data.sample_submission, root / files["sample_submission"], quoting=quoting)
    (root / files["description"]).parent.mkdir(parents=True, exist_ok=True)
    (root / files["description"]).write_text(describe(data))
    board = simulate_leaderboard(
        competition_id=competition_id, answers=data.answers, n_teams=n_teams, seed=seed, grade_rows=grade_rows
    )
    board.to_csv(root / files["leaderboard"], index=False, lineterminator="\n")
    if layout == "portal":
        manifest = pack_manifest(data, files, answers_sha256=file_sha256(root / files["answers"]))
        (root / "pack.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return root


def pack_files(*, facts: CompetitionFacts, layout: Layout) -> dict[str, str]:
    """Paths inside a pack folder, relative to it."""
    if layout == "portal":
        private, public = "private", "public"
        sample_dir = public
    else:
        private, public = "prepared/private", "prepared/public"
        sample_dir = private if facts.sample_submission_is_private else public
    return {
        "answers": f"{private}/{facts.answers_file}",
        "gold_submission": (
            f"{private}/{Path(facts.gold_submission_path).name}"
            if facts.has_separate_gold
            else f"{private}/{facts.answers_file}"
        ),
        "sample_submission": f"{sample_dir}/{facts.sample_submission_file}",
        "description": f"{public}/description.md",
        "leaderboard": "leaderboard.csv",
    }


def pack_manifest(data: DemoAnswers, files: dict[str, str], *, answers_sha256: str) -> dict:
    """pack.json; ``answers_sha256`` ties the simulated leaderboard to the answers it was simulated for."""
    facts = data.facts
    choice = grader_choice(facts.id)
    return {
        "schema": PACK_SCHEMA,
        "competition_id": facts.id,
        "name": facts.name,
        "benchmark": BENCHMARK,
        "tier": facts.tier,
        "synthetic": True,
        "size": data.size,
        "seed": data.seed,
        "rows": len(data.answers),
        "grader": {"name": choice.name, "params": choice.params},
        "higher_is_better": facts.higher_is_better,
        "id_column": facts.id_column,
        "submission_columns": list(data.sample_submission.columns),
        **files,
        "leaderboard_answers_sha256": answers_sha256,
    }


def describe(data: DemoAnswers) -> str:
    facts, spec = data.facts, data.spec
    columns = list(data.sample_submission.columns)
    shown = ", ".join(f"`{c}`" for c in columns[:8]) + (f" and {len(columns) - 8} more" if len(columns) > 8 else "")
    direction = "higher is better" if facts.higher_is_better else "lower is better"
    return (
        f"# {facts.name} (synthetic demo)\n\n"
        f"A synthetic stand-in for the MLE-bench competition `{facts.id}`: the files have the real formats, "
        "but every value is generated, so nothing here is Kaggle data.\n\n"
        f"## Evaluation\n\n{facts.metric} ({direction}).\n\n"
        f"## Submission format\n\n"
        f"A CSV with {len(data.answers):,} rows and the columns {shown}, "
        f"like `{facts.sample_submission_file}`. "
        f"Rows are identified by `{facts.id_column}`: {spec.id_format}.\n"
    )
