"""duplicate_submissions: copies across the seeds of one entry, and of other teams' earlier entries (the index)."""

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


SAME = "id,requester_received_pizza\nt3_a,0.5\nt3_b,0.5\n"
TIERS = {"low": [PIZZA, SPOOKY], "all": [PIZZA, SPOOKY, "spaceship-titanic"]}
CODE = '''"""Train a model."""
import pandas as pd

# read the data
train = pd.read_csv("/home/data/train.csv")
model = fit(train,   epochs=3)
'''


def entry(tmp_path, bodies: dict, *, code=None, logs=None, other_entries=(), **settings):
    runs = [
        run_files(
            tmp_path, cid, seed, submission=body, code=(code or {}).get((cid, seed)), logs=(logs or {}).get((cid, seed))
        )
        for (cid, seed), body in bodies.items()
    ]
    return check_context(runs=runs, tiers=TIERS, other_entries=other_entries, settings=CheckSettings(**settings))


def other_team(submission_id=7, *, submissions=None, code=None, logs=None):
    return OtherEntry(
        submission_id=submission_id, team="Bob Works", submissions=submissions or {}, code=code or {}, logs=logs or {}
    )


def index_of(tmp_path, bodies: dict, *, code=None, logs=None) -> dict:
    runs = [
        run_files(
            tmp_path, cid, seed, submission=body, code=(code or {}).get((cid, seed)), logs=(logs or {}).get((cid, seed))
        )
        for (cid, seed), body in bodies.items()
    ]
    return duplicate_submissions.entry_index(check_context(runs=runs, tiers=TIERS))


def from_index(index: dict, submission_id=7) -> OtherEntry:
    return other_team(
        submission_id,
        submissions=index["submissions"],
        code={cid: frozenset(prints) for cid, prints in index["code"].items()},
        logs=index["logs"],
    )


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


# Across teams: the same submission once normalised (blocking), similar code and the same logs (warnings)

ROWS = "id,requester_received_pizza\n" + "".join(f"t3_{i},{(i * 7 % 13) / 13:.6f}\n" for i in range(40))
VALUES = [float(f"{(i * 7 % 13) / 13:.6f}") for i in range(40)]
REORDERED = "id,requester_received_pizza\n" + "".join(f"t3_{i},{VALUES[i]:.9e}\n" for i in reversed(range(40)))
SCRIPT = "\n".join(f"feature_{i} = frame['c{i}'].rolling({i + 2}).mean() * weight_{i}" for i in range(30))
LOG = "".join(f"step {i}: loss={1 / (i + 1):.4f} val_auc={0.5 + i / 100:.4f}\n" for i in range(30))


def test_another_teams_file_once_normalised_is_blocking_and_names_them_only_privately(tmp_path):
    theirs = from_index(index_of(tmp_path / "theirs", {(PIZZA, 4): ROWS}))
    context = entry(tmp_path / "ours", {(PIZZA, 0): REORDERED, (SPOOKY, 1): "id\n"}, other_entries=[theirs])
    (flag,) = duplicate_submissions.check(context)
    assert (flag.severity, flag.key, flag.tiers) == ("blocking", "other_team", ["low", "all"])
    assert flag.message.startswith("1 submission file(s) match an earlier submission of another team once normalised")
    assert f"e.g. {PIZZA}/seed-0" in flag.message
    public = repr((flag.message, flag.evidence))
    assert "Bob Works" not in public and "7" not in flag.message and "other_submission" not in public
    assert flag.evidence["files"][0]["file"] == f"runs/group/{PIZZA}_00000000/submission/submission.csv"
    assert flag.private["other_entries"] == [{"submission": 7, "team": "Bob Works"}]
    assert flag.private["matches"] == [
        {"run": f"{PIZZA}/seed-0", "other_submission": 7, "other_run": f"{PIZZA}/seed-4"}
    ]


def test_the_same_file_for_another_competition_or_a_constant_file_is_not_a_match(tmp_path):
    constant = "id,requester_received_pizza\n" + "".join(f"t3_{i},0.5\n" for i in range(40))
    theirs = from_index(index_of(tmp_path / "theirs", {(SPOOKY, 0): ROWS, (PIZZA, 1): constant}))
    assert theirs.submissions and all(run.startswith(SPOOKY) for run in theirs.submissions.values())
    context = entry(tmp_path / "ours", {(PIZZA, 0): ROWS, (PIZZA, 1): constant}, other_entries=[theirs])
    assert [f.key for f in duplicate_submissions.check(context)] == []


def test_one_flag_counts_every_match_of_every_other_entry(tmp_path):
    bodies = {(PIZZA, seed): ROWS.replace("t3_0,", f"t3_0{seed},") for seed in range(12)}
    theirs = [from_index(index_of(tmp_path / "a", bodies), 7), from_index(index_of(tmp_path / "b", bodies), 9)]
    flags = flags_of(
        duplicate_submissions.check(entry(tmp_path / "ours", bodies, other_entries=theirs)), "duplicate_submissions"
    )
    flag = flags["other_team"]
    assert flag.evidence["total"] == 12 and len(flag.evidence["files"]) == 10
    assert flag.private["total"] == 24 and [e["submission"] for e in flag.private["other_entries"]] == [7, 9]


def test_shared_code_alone_is_a_warning(tmp_path):
    theirs = from_index(index_of(tmp_path / "theirs", {(PIZZA, 0): ROWS}, code={(PIZZA, 0): {"s.py": SCRIPT}}))
    renamed = "# our own words\n" + SCRIPT.replace("frame", "df") + "\n\n"
    context = entry(
        tmp_path / "ours",
        {(PIZZA, 0): REORDERED.replace("t3_5,", "t3_55,")},
        code={(PIZZA, 0): {"m.py": SCRIPT + "\n# ok\n"}},
        other_entries=[theirs],
    )
    (flag,) = duplicate_submissions.check(context)
    assert (flag.severity, flag.key) == ("warning", "other_team_code")
    assert flag.evidence["competitions"] == [{"competition": PIZZA, "shared": 1.0}] and "Bob" not in flag.message
    assert flag.private["pairs"] == [{"competition": PIZZA, "shared": 1.0, "other_submission": 7}]
    other = entry(
        tmp_path / "renamed", {(PIZZA, 0): "id\n"}, code={(PIZZA, 0): {"m.py": renamed}}, other_entries=[theirs]
    )
    assert duplicate_submissions.check(other) == []  # identifiers renamed: another token stream


def test_code_below_the_similarity_setting_or_for_another_competition_is_not_flagged(tmp_path):
    theirs = from_index(index_of(tmp_path / "theirs", {(PIZZA, 0): None}, code={(PIZZA, 0): {"s.py": SCRIPT}}))
    half = (
        "\n".join(SCRIPT.splitlines()[:15])
        + "\n"
        + "\n".join(f"other_{i} = model.predict(x{i}) + {i}" for i in range(40))
    )
    context = entry(tmp_path / "ours", {(PIZZA, 0): None}, code={(PIZZA, 0): {"m.py": half}}, other_entries=[theirs])
    assert duplicate_submissions.check(context) == []
    (flag,) = duplicate_submissions.check(
        entry(
            tmp_path / "low",
            {(PIZZA, 0): None},
            code={(PIZZA, 0): {"m.py": half}},
            other_entries=[theirs],
            code_similarity=0.2,
        )
    )
    assert 0.2 <= flag.evidence["competitions"][0]["shared"] < 0.9
    spooky = entry(
        tmp_path / "spooky", {(SPOOKY, 0): None}, code={(SPOOKY, 0): {"m.py": SCRIPT}}, other_entries=[theirs]
    )
    assert duplicate_submissions.check(spooky) == []


def test_another_teams_log_is_a_warning_and_a_short_log_is_not_compared(tmp_path):
    theirs = from_index(
        index_of(tmp_path / "theirs", {(PIZZA, 0): None}, logs={(PIZZA, 0): {"a.log": LOG, "s.log": "done\n"}})
    )
    assert len(theirs.logs) == 1
    spaced = "\n".join("  " + line + "  " for line in LOG.splitlines()) + "\n\n"
    context = entry(
        tmp_path / "ours",
        {(PIZZA, 0): None},
        logs={(PIZZA, 0): {"x.log": spaced, "s.log": "done\n"}},
        other_entries=[theirs],
    )
    (flag,) = duplicate_submissions.check(context)
    assert (flag.severity, flag.key) == ("warning", "other_team_logs")
    assert flag.evidence == {"total": 1, "files": [f"runs/group/{PIZZA}_00000000/logs/x.log"]}
    assert flag.private["matches"][0]["other_run"] == f"{PIZZA}/seed-0"


# Across the seeds of one entry: logs and code


def test_seeds_with_the_same_logs_or_code_are_warnings(tmp_path):
    bodies = {(PIZZA, s): None for s in range(3)}
    logs = {(PIZZA, s): {"a.log": LOG + ("\n" * s)} for s in range(3)}
    code = {(PIZZA, 0): {"m.py": SCRIPT}, (PIZZA, 1): {"m.py": "# seed 1\n" + SCRIPT}, (PIZZA, 2): {"m.py": "x = 2\n"}}
    flags = flags_of(
        duplicate_submissions.check(entry(tmp_path, bodies, logs=logs, code=code)), "duplicate_submissions"
    )
    assert flags[f"logs/{PIZZA}"].evidence["seeds"] == [[0, 1, 2]]
    assert flags[f"code/{PIZZA}"].evidence["seeds"] == [[0, 1]]
    assert {f.severity for f in flags.values()} == {"warning"}


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


def test_the_entry_index_holds_normalised_fingerprints_winnowed_code_and_log_hashes(tmp_path):
    index = index_of(
        tmp_path,
        {(PIZZA, 0): ROWS, (PIZZA, 1): None, (SPOOKY, 0): b"", (SPOOKY, 1): "id,EAP\n1,0.5\n2,0.5\n"},
        code={(PIZZA, 0): {"a.py": SCRIPT}},
        logs={(PIZZA, 0): {"a.log": LOG}},
    )
    assert list(index["submissions"].values()) == [f"{PIZZA}/seed-0"]  # not the empty file, not the constant one
    assert list(index["code"]) == [PIZZA] and all(isinstance(v, int) for v in index["code"][PIZZA])
    assert list(index["logs"].values()) == [f"{PIZZA}/seed-0"]


def test_hashes_and_code_are_computed_once_per_context(tmp_path):
    context = entry(tmp_path, {(PIZZA, 0): SAME, (PIZZA, 1): SAME})
    assert len(duplicate_submissions.check(context)) == 1
    context.runs[1].submission.write_text("changed after the first check\n")
    assert len(duplicate_submissions.check(context)) == 1
    assert set(context.cache) >= {"submission_hashes", "seed_copies", "copy_keys", "content_fingerprints"}
