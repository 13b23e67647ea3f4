"""A team's own grading report for a simulated run group, as MLE-bench's ``mlebench grade`` writes it.

Bundles may carry ``runs/<run_group>/*grading_report*.json``; the portal re-grades and compares. This
grades every run of a group against the packs it was made for with the real report engine, and can
overwrite chosen fields (``claims``) to make a report that disagrees with the re-grade.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from competitions.demo.catalog import competition_facts, grader_choice
from competitions.demo.runs import DEFAULT_CREATED_AT
from grading.engine.medals import read_leaderboard
from grading.engine.registry import GraderRef
from grading.engine.report import build_run_group_report, grade_submission, report_filename


def pack_paths(*, pack_root: Path, competition_id: str) -> tuple[Path, Path]:
    """(answers, leaderboard) of a pack written by ``make_demo_pack`` in either layout."""
    folder = Path(pack_root) / competition_id
    manifest = folder / "pack.json"
    if manifest.exists():
        spec = json.loads(manifest.read_text())
        return folder / spec["answers"], folder / spec["leaderboard"]
    answers = folder / competition_facts(competition_id).answers_path
    return answers, folder / "leaderboard.csv"


def write_grading_report(
    *,
    run_group: Path,
    pack_root: Path,
    created_at: datetime = DEFAULT_CREATED_AT,
    claims: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Grade each run of ``run_group`` and write ``<run_group>/<stamp>_grading_report.json``.

    ``claims`` maps a run id to report fields to overwrite (for example ``{"score": 0.99}``), so tests
    can build a team report that the server's re-grade contradicts. Returns the report's path.
    """
    run_group = Path(run_group)
    metadata = json.loads((run_group / "metadata.json").read_text())
    stamp = created_at.replace(tzinfo=None)
    overrides = dict(claims or {})
    reports = []
    for run_id in sorted(metadata["runs"]):
        competition_id = run_id.rpartition("_")[0]
        answers, leaderboard = pack_paths(pack_root=pack_root, competition_id=competition_id)
        choice = grader_choice(competition_id)
        report = grade_submission(
            competition_id=competition_id,
            submission_path=run_group / run_id / "submission" / "submission.csv",
            answers_path=answers,
            grader=GraderRef(name=choice.name, params=choice.params),
            leaderboard_scores=read_leaderboard(leaderboard),
            display_path=f"runs/{run_group.name}/{run_id}/submission/submission.csv",
            created_at=stamp,
        )
        reports.append(dataclasses.replace(report, **overrides.pop(run_id, {})))
    if overrides:
        raise KeyError(f"claims for runs not in {run_group.name}: {', '.join(sorted(overrides))}")
    path = run_group / report_filename(now=created_at)
    path.write_text(build_run_group_report(reports).to_json(with_reason=False))
    return path
