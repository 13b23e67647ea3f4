"""A large submission column equal to the answers' is held once (csvio.read_numeric_blocks(like=)): every grader
of the 75 competitions scores the same with it, and none of them can change the answers through it.

The block reader takes files of 64 MiB and more; here the threshold is 1 byte and a block is 40 rows, so the
small demo packs' files (the answers themselves, the sample submission, a simulated agent's submission) take
the path that a 13-million-row icecube submission takes in production.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from competitions.demo import make_demo_pack
from competitions.demo.catalog import split_ids
from competitions.demo.runs import pack_answers, write_run_group
from grading.engine import csvio
from grading.engine.csvio import load_answers
from grading.engine.medals import read_leaderboard, thresholds_from_leaderboard
from grading.engine.registry import GraderRef
from grading.engine.report import grade_submission


@pytest.fixture(scope="module")
def packs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shared")
    make_demo_pack(out_dir=root / "packs", split="split75", size="small", seed=0, n_teams=12, workers=2)
    runs = write_run_group(
        out_dir=root / "runs", seeds=(0,), quality=0.7, answers=pack_answers(root / "packs"), size="small"
    )
    return root / "packs", runs


def _submissions(packs: Path, runs: Path, slug: str) -> dict[str, Path]:
    manifest = json.loads((packs / slug / "pack.json").read_text())
    found = {
        "answers copied": packs / slug / manifest["gold_submission"],
        "sample": packs / slug / manifest["sample_submission"],
    }
    for folder in runs.glob(f"{slug}_*"):
        if folder.name.rsplit("_", 1)[0] == slug and (folder / "submission" / "submission.csv").exists():
            found["simulated agent"] = folder / "submission" / "submission.csv"
    return found


def _report(slug: str, packs: Path, submission: Path, answers) -> str:
    """The report as JSON (a NaN score compares equal to itself there), without its time."""
    manifest = json.loads((packs / slug / "pack.json").read_text())
    report = grade_submission(
        competition_id=slug,
        submission_path=submission,
        answers_path=packs / slug / manifest["answers"],
        grader=GraderRef(**manifest["grader"]),
        thresholds=thresholds_from_leaderboard(read_leaderboard(packs / slug / manifest["leaderboard"])),
        answers=answers,
        created_at=None,
    )
    fields = report.to_dict(with_reason=True)
    fields.pop("created_at")
    return json.dumps(fields, sort_keys=True)


@pytest.mark.parametrize("slug", split_ids("split75"))
def test_every_grader_scores_the_same_with_columns_shared_with_the_answers(packs, slug, monkeypatch):
    pack_root, runs = packs
    manifest = json.loads((pack_root / slug / "pack.json").read_text())
    answers_path = pack_root / slug / manifest["answers"]
    for name, submission in _submissions(pack_root, runs, slug).items():
        plain = _report(slug, pack_root, submission, None)
        with monkeypatch.context() as patched:
            patched.setattr(csvio, "BLOCK_READ_MIN_BYTES", 1)
            patched.setattr(csvio, "BLOCK_ROWS", 40)
            answers = load_answers(answers_path)
            kept = answers.copy(deep=True) if isinstance(answers, pd.DataFrame) else None
            shared = _report(slug, pack_root, submission, answers)
            loaded_first = _report(slug, pack_root, submission, None)
        assert shared == plain == loaded_first, (slug, name)
        if kept is not None:
            pd.testing.assert_frame_equal(answers, kept, check_exact=True)
