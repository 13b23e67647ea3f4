"""Simulated run groups in MLE-bench's runs/<run_group>/ layout, and bundles of them."""

import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from competitions.demo import (
    Defect,
    generate_answers,
    grade,
    make_demo_pack,
    pack_answers,
    run_id_for,
    write_grading_report,
    write_pack,
    write_run_bundle,
    write_run_group,
)
from grading.engine.errors import InvalidSubmission

CHOSEN = ["spooky-author-identification", "nomad2018-predict-transparent-conductors"]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_it_writes_mlebench_run_group_layout(tmp_path):
    group = write_run_group(
        out_dir=tmp_path,
        competition_ids=CHOSEN,
        seeds=(0, 1, 2),
        quality=0.8,
        no_submission=[(CHOSEN[1], 2)],
    )
    assert group.name == "2026-11-30T10-00-00-GMT_run-group_demo"
    metadata = json.loads((group / "metadata.json").read_text())
    assert metadata["run_group"] == group.name and metadata["created_at"].startswith("2026-11-30T10:00:00")
    assert len(metadata["runs"]) == 6
    for run_id, run in metadata["runs"].items():
        competition_id, _, run_uuid = run_id.rpartition("_")
        assert competition_id in CHOSEN and len(run_uuid) == 36
        run_dir = group / run_id
        assert (run_dir / "run.log").read_text().strip() and (run_dir / "code" / "solution.py").is_file()
        assert run["success"] == (run_dir / "submission" / "submission.csv").is_file()
    assert [r["success"] for r in metadata["runs"].values()].count(False) == 1


def test_submissions_grade_against_the_pack_they_were_made_for(tmp_path):
    pack_root = tmp_path / "packs"
    for competition_id in CHOSEN:
        write_pack(competition_id=competition_id, out_dir=pack_root, seed=5, n_teams=5)
    group = write_run_group(
        out_dir=tmp_path / "runs",
        competition_ids=CHOSEN,
        seeds=(0, 1),
        quality={CHOSEN[0]: 1.0, CHOSEN[1]: 0.5},
        answers=pack_answers(pack_root),
        defects={(CHOSEN[1], 1): [Defect.MISSING_ROWS]},
    )
    load = pack_answers(pack_root)

    def score(run_id: str) -> float:
        competition_id = run_id.rpartition("_")[0]
        submission = pd.read_csv(group / run_id / "submission" / "submission.csv")
        return grade(competition_id=competition_id, submission=submission, answers=load(competition_id))

    # The honest agent at quality 1 is near the best log loss (0), never at it; against another pack's
    # answers the same files would score above 1.
    assert all(0.0 < score(r) < 0.15 for r in _runs_of(group, CHOSEN[0]))
    seed0, seed1 = _runs_of(group, CHOSEN[1])
    assert score(seed0) > 0
    with pytest.raises(InvalidSubmission):
        score(seed1)


def _runs_of(group: Path, competition_id: str) -> list[str]:
    """Run ids of one competition in seed order (metadata keeps insertion order)."""
    runs = json.loads((group / "metadata.json").read_text())["runs"]
    return [r for r in runs if r.rpartition("_")[0] == competition_id]


def test_run_groups_are_deterministic(tmp_path):
    created = datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = write_run_group(
        out_dir=tmp_path / "a", competition_ids=CHOSEN[:1], seeds=(0, 1), created_at=created, agent="aide"
    )
    again = write_run_group(
        out_dir=tmp_path / "b", competition_ids=CHOSEN[:1], seeds=(0, 1), created_at=created, agent="aide"
    )
    assert first.name == "2027-01-02T03-04-05-GMT_run-group_aide"
    assert tree(first) == tree(again)
    other = write_run_group(out_dir=tmp_path / "c", competition_ids=CHOSEN[:1], seeds=(3,))
    assert not (set(tree(other)) & set(tree(first))) - {"metadata.json"}


def test_a_bundle_holds_the_manifest_and_the_run_group(tmp_path):
    group = write_run_group(
        out_dir=tmp_path,
        competition_ids=CHOSEN[:1],
        seeds=(0,),
        answers=lambda cid: generate_answers(competition_id=cid, size=30, seed=0).answers,
    )
    bundle = write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz")
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("manifest.json"))
    assert manifest["schema"] == "bundle-v1" and manifest["benchmark"]["split"] == "low"
    assert f"runs/{group.name}/metadata.json" in names
    assert any(n.endswith("/submission/submission.csv") for n in names)


def test_a_team_report_grades_the_runs_and_can_claim_otherwise(tmp_path):
    pack_root = tmp_path / "packs"
    make_demo_pack(out_dir=pack_root, competition_ids=CHOSEN, n_teams=20, workers=1)
    group = write_run_group(
        out_dir=tmp_path / "runs",
        competition_ids=CHOSEN,
        seeds=(0, 1),
        quality=1.0,
        answers=pack_answers(pack_root),
        no_submission=[(CHOSEN[1], 1)],
    )
    boasted = run_id_for(competition_id=CHOSEN[1], seed=0)
    path = write_grading_report(run_group=group, pack_root=pack_root, claims={boasted: {"score": 0.0123}})
    assert path.parent == group and path.name.endswith("_grading_report.json")
    report = json.loads(path.read_text())
    assert report["total_runs"] == 4 and report["total_runs_with_submissions"] == 3
    by_path = {r["submission_path"].split("/")[2]: r for r in report["competition_reports"]}
    assert 0.0 < by_path[run_id_for(competition_id=CHOSEN[0], seed=1)]["score"] < 0.15  # honest: near 0, never 0
    assert by_path[run_id_for(competition_id=CHOSEN[0], seed=1)]["gold_medal"]
    assert by_path[boasted]["score"] == 0.0123
    assert not by_path[run_id_for(competition_id=CHOSEN[1], seed=1)]["submission_exists"]
    with pytest.raises(KeyError):
        write_grading_report(run_group=group, pack_root=pack_root, claims={"nope_1": {"score": 1.0}})
