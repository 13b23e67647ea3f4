"""duplicate_submissions: identical files across seeds or teams (hashes), near-identical code across teams."""

from shutil import copyfile

from grading.checks import duplicate_submissions
from grading.checks.context import OtherEntry
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, flags_of


def test_the_same_file_for_two_seeds_is_a_duplicate(tmp_path):
    context = bundle(tmp_path)
    runs = {(r.competition_id, r.seed): r for r in context.runs}
    copyfile(runs[(PIZZA, 0)].submission, runs[(PIZZA, 2)].submission)
    (flag,) = duplicate_submissions.check(context)
    assert flag.severity == "warning" and len(flag.evidence["files"]) == 2
    assert flag.evidence["files"][0]["sha256"] == flag.evidence["files"][1]["sha256"]


def test_another_teams_identical_files_and_code_are_found(tmp_path):
    theirs = bundle(tmp_path / "theirs", competitions=(SPOOKY,))
    index = duplicate_submissions.entry_index(theirs)
    other = OtherEntry(submission_id=7, team="bob's", submission_hashes=index["submission_hashes"], code=index["code"])
    ours = bundle(tmp_path / "ours", other_entries=[other])
    flags = flags_of(duplicate_submissions.check(ours), "duplicate_submissions")
    assert set(flags) == {"team/7", "code/7"}
    assert flags["team/7"].severity == "blocking" and flags["team/7"].evidence["total"] == 3
    assert flags["code/7"].evidence["pairs"][0]["similarity"] >= 0.9


def test_different_code_of_another_team_is_not_near_identical(tmp_path):
    other = OtherEntry(submission_id=8, team="bob's", submission_hashes={},
                       code={f"{PIZZA}/seed-0": "import torch\nmodel = torch.nn.Linear(3, 4)\n" * 20})
    assert duplicate_submissions.check(bundle(tmp_path, other_entries=[other])) == []
