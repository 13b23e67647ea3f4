"""Demo packs on disk, in the portal layout and MLE-bench's prepared-data layout."""

import json
from pathlib import Path

import pandas as pd
import pytest

from competitions.demo import expected_rows, make_demo_pack, write_pack
from competitions.packs import find_packs
from grading.engine.csvio import load_answers

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}
LOW = (DATA / "splits" / "low.txt").read_text().split()
SPLIT75 = (DATA / "splits" / "split75.txt").read_text().split()


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def portal_packs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("packs")
    make_demo_pack(out_dir=out, split="split75", size="small", seed=0, n_teams=12, workers=2)
    return out


@pytest.mark.parametrize("competition_id", SPLIT75)
def test_each_portal_pack_has_its_files(portal_packs, competition_id):
    folder = portal_packs / competition_id
    manifest = json.loads((folder / "pack.json").read_text())
    entry = COMPETITIONS[competition_id]
    graders = json.loads((DATA / "graders.json").read_text())
    assert manifest["competition_id"] == competition_id and manifest["benchmark"] == "mle-bench v1"
    assert manifest["grader"] == {
        "name": graders[competition_id]["grader"],
        "params": graders[competition_id].get("params") or {},
    }
    assert manifest["answers"] == "private/" + Path(entry["answers_file"]).name
    assert manifest["sample_submission"] == "public/" + Path(entry["sample_submission_file"]).name
    assert manifest["gold_submission"] == "private/" + Path(entry["gold_submission_file"]).name
    for key in ("answers", "gold_submission", "sample_submission", "description", "leaderboard"):
        assert (folder / manifest[key]).is_file(), key
    answers = load_answers(folder / manifest["answers"])
    assert len(answers) == manifest["rows"] == expected_rows(competition_id=competition_id, size="small")
    board = pd.read_csv(folder / "leaderboard.csv")
    assert list(board.columns) == ["rank", "score"] and len(board) == 12
    assert entry["name"] in (folder / "public" / "description.md").read_text()


def test_the_portal_importer_finds_every_pack(portal_packs):
    found = find_packs(portal_packs)
    assert sorted(p.competition_id for p in found) == sorted(SPLIT75)
    assert {p.layout for p in found} == {"portal"} and all(p.leaderboard for p in found)
    index = json.loads((portal_packs / "index.json").read_text())
    assert index["competitions"] == SPLIT75 and index["layout"] == "portal"


def test_the_mlebench_layout_puts_files_where_competitions_json_says(tmp_path):
    chosen = [
        "text-normalization-challenge-english-language",
        "detecting-insults-in-social-commentary",
        "denoising-dirty-documents",
    ]
    make_demo_pack(out_dir=tmp_path, competition_ids=chosen, layout="mlebench", n_teams=8, workers=2)
    for competition_id in chosen:
        entry, folder = COMPETITIONS[competition_id], tmp_path / competition_id
        for key in ("answers_file", "sample_submission_file", "gold_submission_file"):
            assert (folder / entry[key]).is_file(), entry[key]
        assert (folder / "prepared" / "public" / "description.md").is_file()
        assert (folder / "leaderboard.csv").is_file() and not (folder / "pack.json").exists()
    assert (tmp_path / chosen[0] / "prepared" / "private" / "sample_submission.csv").is_file()
    assert {p.layout for p in find_packs(tmp_path)} == {"mlebench"}


def test_packs_are_deterministic_by_seed(tmp_path):
    first = write_pack(competition_id="mlsp-2013-birds", out_dir=tmp_path / "a", seed=3, n_teams=10)
    again = write_pack(competition_id="mlsp-2013-birds", out_dir=tmp_path / "b", seed=3, n_teams=10)
    other = write_pack(competition_id="mlsp-2013-birds", out_dir=tmp_path / "c", seed=4, n_teams=10)
    assert tree(first) == tree(again)
    assert tree(first)["private/answers.csv"] != tree(other)["private/answers.csv"]
