"""Simulated agent runs laid out like MLE-bench's ``runs/<run_group>/`` folder, and bundles of them.

A run group holds ``metadata.json`` (``{run_group, created_at, runs: {run_id: {success}}}``) and one
folder per run, ``<competition_id>_<uuid>/`` with ``submission/submission.csv``, ``run.log`` and
``code/solution.py``. Run ids are derived from the seeds, so the same call writes the same tree.
"""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from competitions.demo.agent import Defect, write_submission
from competitions.demo.answers import Size, generate_answers
from competitions.demo.catalog import competition_facts, rng_for, split_ids
from competitions.demo.solutions import STYLES, run_log, solution_code
from grading.engine.csvio import load_answers

DEFAULT_CREATED_AT = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
AnswersSource = Callable[[str], pd.DataFrame]
RunKey = tuple[str, int]  # (competition_id, seed)


def run_group_name(*, created_at: datetime, agent: str = "demo") -> str:
    return f"{created_at:%Y-%m-%dT%H-%M-%S}-GMT_run-group_{agent}"


def write_run_group(
    *,
    out_dir: Path,
    competition_ids: Iterable[str] | None = None,
    seeds: Iterable[int] = (0, 1, 2),
    quality: float | Mapping[str, float] = 0.9,
    answers: AnswersSource | None = None,
    size: Size = "small",
    pack_seed: int = 0,
    created_at: datetime = DEFAULT_CREATED_AT,
    agent: str = "demo",
    no_submission: Iterable[RunKey] = (),
    defects: Mapping[RunKey, Iterable[Defect | str]] | None = None,
    style: str = "starter",
    nonce: str = "",
) -> Path:
    """Write ``<out_dir>/<run_group>/`` for every competition x seed and return the group folder.

    ``answers`` maps a competition id to its answers frame (for example :func:`pack_answers` over a pack
    folder); by default answers are generated with ``size`` and ``pack_seed``. ``quality`` is one value or
    one per competition. Runs in ``no_submission`` fail without a submission; ``defects`` break chosen runs.
    ``style`` picks the code and log the runs leave (``competitions.demo.solutions.STYLES``): teams written in
    different styles do not share code. ``nonce``: a registration's nonce, written as each run.log's first line
    (before the run writes its submission), as an agent run under a registration does.
    """
    if style not in STYLES:
        raise ValueError(f"unknown code style {style!r}: use one of {', '.join(STYLES)}")
    ids = list(competition_ids) if competition_ids is not None else split_ids("low")
    load = answers or (lambda cid: generate_answers(competition_id=cid, size=size, seed=pack_seed).answers)
    skipped, broken = set(no_submission), dict(defects or {})
    group = Path(out_dir) / run_group_name(created_at=created_at, agent=agent)
    group.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, bool]] = {}
    for cid in ids:
        frame = load(cid)
        q = quality[cid] if isinstance(quality, Mapping) else quality
        for seed in seeds:
            run_id = run_id_for(competition_id=cid, seed=seed)
            run_dir = group / run_id
            success = (cid, seed) not in skipped
            if success:
                write_submission(
                    competition_id=cid,
                    answers=frame,
                    quality=q,
                    seed=seed,
                    path=run_dir / "submission" / "submission.csv",
                    defects=broken.get((cid, seed), ()),
                )
            else:
                (run_dir / "submission").mkdir(parents=True, exist_ok=True)
            started = created_at + timedelta(minutes=7 * seed)
            log = run_log(style=style, competition_id=cid, seed=seed, quality=q, started=started, success=success)
            (run_dir / "run.log").write_text((f"registration nonce: {nonce}\n" if nonce else "") + log)
            (run_dir / "code").mkdir(parents=True, exist_ok=True)
            (run_dir / "code" / "solution.py").write_text(solution_code(style=style, competition_id=cid, seed=seed))
            runs[run_id] = {"success": success}
    metadata = {"run_group": group.name, "created_at": created_at.isoformat(), "runs": runs}
    (group / "metadata.json").write_text(json.dumps(metadata, indent=4) + "\n")
    return group


def pack_answers(pack_root: Path) -> AnswersSource:
    """Read answers from packs written by ``make_demo_pack`` (either layout) under ``pack_root``."""

    def load(competition_id: str) -> pd.DataFrame:
        folder = Path(pack_root) / competition_id
        manifest = folder / "pack.json"
        if manifest.exists():
            path = folder / json.loads(manifest.read_text())["answers"]
        else:
            path = folder / "prepared" / "private" / competition_facts(competition_id).answers_file
        answers = load_answers(path)
        # TF2-QA's .jsonl answers are question records: one row per record, as they were generated
        return answers if isinstance(answers, pd.DataFrame) else pd.DataFrame(answers)

    return load


def write_run_bundle(*, run_group: Path, out_path: Path, manifest: Mapping | None = None) -> Path:
    """Pack a run group as a bundle-v1 ``.tar.gz``: ``manifest.json`` + ``runs/<run_group>/...``."""
    body = dict(manifest) if manifest is not None else default_manifest()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out_path, "w:gz") as tar:
        data = (json.dumps(body, indent=2) + "\n").encode()
        info = tarfile.TarInfo("manifest.json")
        info.size, info.mtime = len(data), int(DEFAULT_CREATED_AT.timestamp())
        tar.addfile(info, io.BytesIO(data))
        for path in sorted(Path(run_group).rglob("*")):
            tar.add(path, arcname=f"runs/{Path(run_group).name}/{path.relative_to(run_group)}", recursive=False)
    return out_path


def default_manifest(*, split: str = "low", seeds: int = 3) -> dict:
    return {
        "schema": "bundle-v1",
        "agent": {
            "name": "demo-agent",
            "version": "1.0",
            "source_url": "https://example.org/demo-agent",
            "commit": "0" * 40,
            "open_source": True,
        },
        "llms": ["none (simulated)"],
        "benchmark": {
            "name": "mle-bench",
            "version": "v1",
            "commit": "783b15af77404fbaffe7255b0c4a934b46153389",
            "split": split,
        },
        "seeds": seeds,
        "runtime_hours": 24,
        "hardware": {"gpus": [{"model": "A10", "memory_gb": 24, "count": 1}], "vcpus": 36, "ram_gb": 440},
        "internet_access": False,
        "disclosures": {
            "test_set_feedback": False,
            "uses_known_leakage": False,
            "human_assistance": False,
            "solutions_in_prompt": False,
            "other_models": [],
        },
        "notes": "Synthetic run group written by competitions.demo; scores come from a simulated agent.",
    }


def run_id_for(*, competition_id: str, seed: int) -> str:
    """The run folder name ``<competition_id>_<uuid4>`` that ``write_run_group`` uses for a seed."""
    return f"{competition_id}_{_run_uuid(competition_id=competition_id, seed=seed)}"


def _run_uuid(*, competition_id: str, seed: int) -> uuid.UUID:
    rng = rng_for(seed=seed, competition_id=competition_id, purpose="run-id")
    return uuid.UUID(bytes=rng.bytes(16), version=4)
