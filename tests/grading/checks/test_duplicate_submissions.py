"""duplicate_submissions: identical files across seeds or teams (hashes), near-identical code across teams."""

import hashlib
from shutil import copyfile

from grading.checks import duplicate_submissions
from grading.checks.context import CheckSettings, OtherEntry
from grading.checks.duplicate_submissions import normalised_code
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, check_context, flags_of, run_files


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
    other = OtherEntry(
        submission_id=8,
        team="bob's",
        submission_hashes={},
        code={f"{PIZZA}/seed-0": "import torch\nmodel = torch.nn.Linear(3, 4)\n" * 20},
    )
    assert duplicate_submissions.check(bundle(tmp_path, other_entries=[other])) == []


SAME = "id,requester_received_pizza\nt3_a,0.5\nt3_b,0.5\n"
TIERS = {"low": [PIZZA, SPOOKY], "all": [PIZZA, SPOOKY, "spaceship-titanic"]}
CODE = '''"""Train a model."""
import pandas as pd

# read the data
train = pd.read_csv("/home/data/train.csv")
model = fit(train,   epochs=3)
'''


def entry(tmp_path, bodies: dict, *, code=None, other_entries=(), **settings):
    runs = [
        run_files(tmp_path, cid, seed, submission=body, code=(code or {}).get((cid, seed)))
        for (cid, seed), body in bodies.items()
    ]
    return check_context(runs=runs, tiers=TIERS, other_entries=other_entries, settings=CheckSettings(**settings))


def other_team(submission_id=7, *, hashes=None, code=None):
    return OtherEntry(submission_id=submission_id, team="Bob Works", submission_hashes=hashes or {}, code=code or {})


# Across the seeds of one entry


def test_different_files_for_every_seed_are_no_duplicates(tmp_path):
    assert duplicate_submissions.check(entry(tmp_path, {(PIZZA, s): SAME + f"t3_{s},0.{s}\n" for s in range(3)})) == []


def test_three_seeds_with_one_file_are_one_flag_listing_each_file(tmp_path):
    context = entry(tmp_path, {(PIZZA, 0): SAME, (PIZZA, 1): SAME, (PIZZA, 2): SAME, (SPOOKY, 0): "id\n"})
    (flag,) = duplicate_submissions.check(context)
    digest = hashlib.sha256(SAME.encode()).hexdigest()
    assert (flag.code, flag.severity, flag.key, flag.tiers) == (
        "duplicate_submissions",
        "warning",
        f"{PIZZA}/{digest[:12]}",
        ["low", "all"],
    )
    assert flag.message == (
        f"{PIZZA}: 3 seeds submitted the same file (sha256 {digest[:12]}…), so they are not independent runs."
    )
    first = {"file": f"runs/group/{PIZZA}_00000000/submission/submission.csv", "sha256": digest, "seed": 0}
    copies = [
        {
            "file": f"runs/group/{PIZZA}_{seed:08x}/submission/submission.csv",
            "sha256": digest,
            "seed": seed,
            "copy_of_seed": 0,
            "how": "identical",
        }
        for seed in (1, 2)
    ]
    assert flag.evidence == {"files": [first, *copies]}


def test_the_same_file_in_two_competitions_is_no_duplicate(tmp_path):
    assert duplicate_submissions.check(entry(tmp_path, {(PIZZA, 0): SAME, (SPOOKY, 0): SAME})) == []


def test_two_pairs_of_duplicates_in_one_competition_are_two_flags(tmp_path):
    other = SAME + "t3_c,1\n"
    context = entry(tmp_path, {(PIZZA, 0): SAME, (PIZZA, 1): SAME, (PIZZA, 2): other, (PIZZA, 3): other})
    assert sorted(len(f.evidence["files"]) for f in duplicate_submissions.check(context)) == [2, 2]


def test_runs_without_a_submission_are_not_duplicates_of_each_other(tmp_path):
    assert duplicate_submissions.check(entry(tmp_path, {(PIZZA, 0): None, (PIZZA, 1): None})) == []


# Across teams: identical files


def test_another_teams_identical_file_names_both_runs_and_the_other_entry(tmp_path):
    digest = hashlib.sha256(SAME.encode()).hexdigest()
    context = entry(
        tmp_path,
        {(PIZZA, 0): SAME, (SPOOKY, 1): "id\n"},
        other_entries=[other_team(hashes={digest: f"{PIZZA}/seed-4"})],
    )
    (flag,) = duplicate_submissions.check(context)
    assert (flag.severity, flag.key, flag.tiers) == ("blocking", "team/7", ["low", "all"])
    assert flag.message == (
        f"1 submission file(s) are identical to those of submission 7 of team Bob Works, e.g. {PIZZA}/seed-0."
    )
    assert flag.evidence == {
        "other_submission": 7,
        "other_team": "Bob Works",
        "total": 1,
        "files": [
            {
                "file": f"runs/group/{PIZZA}_00000000/submission/submission.csv",
                "sha256": digest,
                "other": f"{PIZZA}/seed-4",
            }
        ],
    }


def test_at_most_ten_identical_files_are_shown_but_all_are_counted(tmp_path):
    bodies = {(PIZZA, seed): SAME + f"t3_{seed},1\n" for seed in range(12)}
    hashes = {hashlib.sha256(body.encode()).hexdigest(): f"{PIZZA}/seed-{seed}" for (_, seed), body in bodies.items()}
    flags = flags_of(
        duplicate_submissions.check(entry(tmp_path, bodies, other_entries=[other_team(hashes=hashes)])),
        "duplicate_submissions",
    )
    assert flags["team/7"].evidence["total"] == 12 and len(flags["team/7"].evidence["files"]) == 10


def test_each_other_entry_with_a_shared_file_is_its_own_flag(tmp_path):
    digest = hashlib.sha256(SAME.encode()).hexdigest()
    others = [
        other_team(7, hashes={digest: "x"}),
        other_team(8, hashes={"0" * 64: "y"}),
        other_team(9, hashes={digest: "z"}),
    ]
    flags = duplicate_submissions.check(entry(tmp_path, {(PIZZA, 0): SAME}, other_entries=others))
    assert [f.key for f in flags] == ["team/7", "team/9"]


# Across teams: near-identical code


def test_the_same_code_with_other_comments_and_spacing_is_near_identical(tmp_path):
    without_comment = CODE.replace("# read the data\n", "")
    theirs = normalised_code(run_files(tmp_path / "theirs", PIZZA, 0, code={"m.py": without_comment}), limit=50_000)
    context = entry(
        tmp_path / "ours",
        {(PIZZA, 0): SAME},
        code={(PIZZA, 0): {"main.py": CODE}},
        other_entries=[other_team(hashes={}, code={f"{PIZZA}/seed-2": theirs})],
    )
    (flag,) = duplicate_submissions.check(context)
    assert (flag.severity, flag.key, flag.tiers) == ("warning", "code/7", ["low", "all"])
    assert flag.evidence["pairs"] == [
        {"run": f"runs/group/{PIZZA}_00000000/code", "other": f"{PIZZA}/seed-2", "similarity": 1.0}
    ]
    assert flag.evidence["threshold"] == 0.9 and "difflib ratio ≥ 0.9" in flag.message


def test_the_similarity_setting_decides_what_is_near_identical(tmp_path):
    ours = "\n".join(f"x{i} = compute({i})" for i in range(20))
    theirs = "\n".join(f"x{i} = compute({i})" for i in range(17)) + "\ny = other()\nz = more()\nw = last()"
    context = dict(
        bodies={(PIZZA, 0): SAME},
        code={(PIZZA, 0): {"a.py": ours}},
        other_entries=[other_team(code={f"{PIZZA}/seed-0": theirs})],
    )
    assert duplicate_submissions.check(entry(tmp_path / "a", **context, code_similarity=0.99)) == []
    (flag,) = duplicate_submissions.check(entry(tmp_path / "b", **context, code_similarity=0.8))
    assert 0.8 <= flag.evidence["pairs"][0]["similarity"] < 0.99


def test_the_same_code_for_another_competition_is_not_compared(tmp_path):
    context = entry(
        tmp_path,
        {(PIZZA, 0): SAME},
        code={(PIZZA, 0): {"a.py": CODE}},
        other_entries=[other_team(code={f"{SPOOKY}/seed-0": normalised_code_of(tmp_path, CODE)})],
    )
    assert duplicate_submissions.check(context) == []


def test_runs_without_code_are_not_compared(tmp_path):
    context = entry(tmp_path, {(PIZZA, 0): SAME}, other_entries=[other_team(code={f"{PIZZA}/seed-0": ""})])
    assert duplicate_submissions.check(context) == []


# The code each entry keeps for others to compare against


def test_normalised_code_drops_comments_docstrings_blank_lines_and_repeated_spaces(tmp_path):
    run = run_files(tmp_path, PIZZA, 0, code={"main.py": CODE, "notes.txt": "not code", "data.csv": "a,b\n"})
    assert normalised_code(run, limit=50_000) == (
        'import pandas as pd\ntrain = pd.read_csv("/home/data/train.csv")\nmodel = fit(train, epochs=3)'
    )


def test_normalised_code_reads_every_code_suffix_in_path_order_up_to_the_limit(tmp_path):
    run = run_files(tmp_path, PIZZA, 0, code={"a.sh": "echo a\n", "b.R": "x <- 1\n", "c.py": "y = 2\n"})
    assert normalised_code(run, limit=50_000) == "echo a\nx <- 1\ny = 2"
    assert normalised_code(run, limit=8) == "echo a\nx"


def test_the_entry_index_maps_each_file_hash_to_its_run_and_keeps_only_runs_with_code(tmp_path):
    context = entry(tmp_path, {(PIZZA, 0): SAME, (PIZZA, 1): None}, code={(PIZZA, 0): {"a.py": "x = 1\n"}})
    index = duplicate_submissions.entry_index(context)
    assert index == {
        "submission_hashes": {hashlib.sha256(SAME.encode()).hexdigest(): f"{PIZZA}/seed-0"},
        "code": {f"{PIZZA}/seed-0": "x = 1"},
    }


def test_hashes_and_code_are_computed_once_per_context(tmp_path):
    context = entry(tmp_path, {(PIZZA, 0): SAME, (PIZZA, 1): SAME})
    assert len(duplicate_submissions.check(context)) == 1
    context.runs[1].submission.write_text("changed after the first check\n")
    assert len(duplicate_submissions.check(context)) == 1
    assert set(context.cache) == {"submission_hashes", "seed_copies", "copy_keys", "content_fingerprints"}


def normalised_code_of(tmp_path, code: str) -> str:
    return normalised_code(run_files(tmp_path / "theirs", SPOOKY, 0, code={"a.py": code}), limit=50_000)
