"""`mleportal verify` against the real portal: a live server on PostgreSQL, the one-file client run as a
subprocess from a clean folder that holds only the client and the engine (the framework-free code the numbers
depend on, copied out of the checkout as its wheel holds it), nothing of Django."""

import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from competitions.services import competitions_load
from grading.models import Submission
from grading.services.submissions import submission_folder
from leaderboard import evidence, services
from leaderboard.models import BoardRow, Entry
from tests.leaderboard.builders import entry, split_members

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "client" / "mleportal.py"
# What the engine wheel holds of the checkout (packaging/engine/): a copy of it stands for the installed wheel here,
# which tests/grading/engine/test_engine_wheel.py and tests/client/test_verify_data.py install for real.
ENGINE_FILES = ("grading/__init__.py", "grading/engine")


@pytest.fixture
def team(alice):
    competitions_load()
    return alice.teams.get()


@pytest.fixture
def clean(tmp_path) -> Path:
    """A folder with the client alone, and beside it an 'installed' engine: no Django, no portal."""
    folder = tmp_path / "clean"
    folder.mkdir()
    shutil.copy(CLIENT, folder / "mleportal.py")
    engine = tmp_path / "engine"
    for name in ENGINE_FILES:
        source, target = REPO / name, engine / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    return folder


def verify(clean: Path, *args: str, engine: bool = True, python: str = sys.executable) -> subprocess.CompletedProcess:
    """The client in the clean folder, without site-packages' .pth files (so not the portal's editable install):
    with `engine`, the copied engine and numpy on its path; without, the standard library alone."""
    paths = [str(clean.parent / "engine"), sysconfig.get_paths()["purelib"]] if engine else []
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(paths), "HOME": str(clean)}
    return subprocess.run(
        [python, "-S", "mleportal.py", "verify", *args],
        cwd=clean,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def rows(output: str) -> dict[str, tuple[str, str]]:
    """The table's rows: check -> (result, detail)."""
    found = {}
    for line in output.splitlines()[1:]:
        for result in ("could not check", "differs", "ok"):
            marker = f"  {result}"
            if marker in line:
                what, _, rest = line.partition(marker)
                found[what.strip()] = (result, rest.strip())
                break
    return found


def board(team, bobs_team) -> Entry:
    """Three comparable Low entries with a bundle each, and one non-comparable; alice's is the one verified."""
    low = split_members("low")
    mine = entry(team, agent="Mine", medals={0: low[:3], 1: low[:2], 2: low[:4]})
    entry(bobs_team, agent="Better", medals={0: low[:5], 1: low[:6], 2: low[:5]})
    entry(bobs_team, agent="Worse", medals={0: low[:1], 1: [], 2: low[:1]})
    entry(bobs_team, agent="Elsewhere", comparable=False, medals={0: low[:9]})
    folder = submission_folder(mine)
    folder.mkdir(parents=True)
    (folder / "bundle.archive").write_bytes(b"\x1f\x8b" + os.urandom(3 * 1024 * 1024))
    Submission.objects.filter(pk=mine.pk).update(bundle_name=f"submissions/{mine.pk}/bundle.archive")
    services.board_refresh(submission_ids=[mine.pk])
    return Entry.objects.get(submission=mine)


@pytest.fixture
def bobs_team(bob):
    return bob.teams.get()


def test_a_published_entry_verifies_from_a_clean_directory(live_server, team, bobs_team, clean):
    mine = board(team, bobs_team)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/")
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(done.stdout)
    assert {result for result, _ in found.values()} == {"ok"}
    assert found["engine"][1].endswith(str(clean.parent / "engine" / "grading" / "engine"))  # not the checkout's
    assert f"file bundle/entry-{mine.pk}-bundle.tar.gz" in found and "file reports/seed-2.json" in found
    for variant in ("all competitions", "without the known-leaky ones"):
        assert f"low, {variant}: figures" in found and f"all, {variant}: figures" not in found
    assert found["low tab, all competitions: rank"][1].startswith("#2, 95% interval #")
    assert "of 3 ranked entries" in found["low tab, all competitions: rank"][1]
    assert done.stdout.splitlines()[-1].startswith(f"entry {mine.pk} at {live_server.url}: ")
    # By id with --portal, the same.
    again = verify(clean, str(mine.pk), "--portal", live_server.url)
    assert again.returncode == 0 and rows(again.stdout) == found


@pytest.mark.parametrize("which", ["non-comparable", "self-reported"])
def test_an_entry_without_a_rank_or_a_re_grade_verifies_too(live_server, team, bobs_team, clean, which):
    board(team, bobs_team)
    if which == "non-comparable":
        chosen = Entry.objects.get(agent="Elsewhere")
    else:
        low = split_members("low")
        imported = entry(team, agent="Imported", report_only=True, origin=Submission.Origin.IMPORT, medals={0: low[:2]})
        chosen = Entry.objects.get(submission=imported)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{chosen.pk}/")
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(done.stdout)
    assert not [what for what in found if what.endswith(": rank")] or which == "self-reported"
    assert found["low, all competitions: figures"][0] == "ok" and not [w for w in found if w.startswith("file bundle")]


def _tier_mean(entry: Entry) -> None:
    tiers = entry.tiers
    tiers["low"]["all"]["complete"]["any_medal"]["mean"] += 1e-9
    Entry.objects.filter(pk=entry.pk).update(tiers=tiers)


def _padded_gold_sem(entry: Entry) -> None:
    tiers = entry.tiers
    tiers["low"]["excluding_leaky"]["padded"]["gold"]["sem"] = 0.0
    Entry.objects.filter(pk=entry.pk).update(tiers=tiers)


def _per_seed(entry: Entry) -> None:
    row = BoardRow.objects.get(entry=entry, tier="low", excluding_leaky=False)
    BoardRow.objects.filter(pk=row.pk).update(per_seed=[row.per_seed[0], row.per_seed[1], 50.0])


def _rank(entry: Entry) -> None:
    BoardRow.objects.filter(entry=entry, tier="low", excluding_leaky=True).update(rank=1, rank_low=1)


@pytest.mark.parametrize(
    ("change", "row", "detail"),
    [
        (_tier_mean, "low, all competitions: figures", "complete.any_medal.mean: recomputed 13.6363636"),
        (_padded_gold_sem, "low, without the known-leaky ones: figures", "padded.gold.sem: recomputed"),
        (_per_seed, "low tab, all competitions: row", "per_seed[2]: recomputed 18.1818"),
        (_rank, "low tab, without the known-leaky ones: rank", "rank: recomputed 2, the portal serves 1"),
    ],
)
def test_a_number_changed_in_the_database_is_caught(live_server, team, bobs_team, clean, change, row, detail):
    mine = board(team, bobs_team)
    change(mine)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/")
    assert done.returncode == 1, done.stdout + done.stderr
    found = rows(done.stdout)
    assert found[row][0] == "differs" and detail in found[row][1], found[row]
    assert all(result == "ok" for what, (result, _) in found.items() if what.startswith("file "))


def test_a_per_seed_figure_changed_and_ranked_again_is_caught_by_the_ranking_too(live_server, team, bobs_team, clean):
    mine = board(team, bobs_team)
    _per_seed(mine)
    services.ranks_refresh()  # an operator who covers the change: the ranks now follow the changed figures
    found = rows(verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/").stdout)
    assert found["low tab, all competitions: ranked figures"][0] == "differs"
    assert found["low tab, all competitions: row"][0] == "differs"


def test_a_tampered_evidence_file_is_caught_by_its_sha256(live_server, team, bobs_team, clean, monkeypatch):
    mine = board(team, bobs_team)
    made = evidence.evidence_chunks

    def tampered(found):
        original = zipfile.ZipFile(io.BytesIO(b"".join(made(found))))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name in original.namelist():
                data = original.read(name)
                if name == "reports/seed-1.json":  # a medal lost on the way: the manifest is left as it was
                    data = data.replace(b'"gold_medal": true', b'"gold_medal": false', 1)
                archive.writestr(name, data)
        yield out.getvalue()

    monkeypatch.setattr(evidence, "evidence_chunks", tampered)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/")
    assert done.returncode == 1, done.stdout + done.stderr
    found = rows(done.stdout)
    result, detail = found["file reports/seed-1.json"]
    assert result == "differs" and detail.startswith("SHA-256 ") and "evidence.json says" in detail
    assert found["file reports/seed-0.json"][0] == "ok"
    assert found["low, all competitions: figures"][0] == "differs"  # and the figures it gives are not the portal's


@pytest.mark.parametrize("status", ["in_review", "rejected", "changes_requested", "grading"])
def test_an_entry_not_published_cannot_be_checked(live_server, team, bobs_team, clean, status):
    mine = board(team, bobs_team)
    Submission.objects.filter(pk=mine.submission_id).update(status=status)  # its entry is still there, until refreshed
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/")
    assert done.returncode == 2, done.stdout + done.stderr
    why = f"no published entry {mine.pk} at {live_server.url}: only published entries have evidence"
    assert rows(done.stdout) == {"entry": ("could not check", why)}


def test_an_entry_that_does_not_exist_cannot_be_checked(live_server, team, clean):
    done = verify(clean, "999999", "--portal", live_server.url)
    assert done.returncode == 2 and "no published entry 999999" in done.stdout


def test_bad_addresses_are_said_plainly(clean):
    assert verify(clean, "12").returncode == 2
    assert "which portal? Pass --portal URL" in verify(clean, "12").stderr
    done = verify(clean, "https://example.org/competitions/12/")
    assert done.returncode == 2 and "neither an entry's id nor its address" in done.stderr
    done = verify(clean, "https://example.org/leaderboard/entries/1/", "--official")
    assert done.returncode == 2 and "pass --data DIR with it" in done.stderr


def test_without_the_engine_it_cannot_check_the_numbers_and_says_how_to_get_it(live_server, team, bobs_team, clean):
    mine = board(team, bobs_team)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/", engine=False)
    assert done.returncode == 2, done.stdout + done.stderr
    found = rows(done.stdout)
    assert found["engine"][0] == "could not check" and "cannot import the portal's engine" in found["engine"][1]
    assert all(result == "ok" for what, (result, _) in found.items() if what.startswith("file "))  # stdlib alone


@pytest.mark.skipif(not os.environ.get("PYTHON39"), reason="PYTHON39 names no Python 3.9 (scripts/test sets it)")
def test_verify_runs_on_python_39_up_to_the_engine(live_server, team, bobs_team, clean):
    mine = board(team, bobs_team)
    address = f"{live_server.url}/leaderboard/entries/{mine.pk}/"
    done = verify(clean, address, engine=False, python=os.environ["PYTHON39"])
    assert done.returncode == 2, done.stdout + done.stderr
    found = rows(done.stdout)
    assert found["engine"][0] == "could not check" and found[f"file bundle/entry-{mine.pk}-bundle.tar.gz"][0] == "ok"
    json.dumps(found)  # the table parsed


def test_an_entry_graded_by_the_pipeline_verifies(live_server, lite_entry, clean):
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{lite_entry.pk}/")
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(done.stdout)
    assert {result for result, _ in found.values()} == {"ok"}
    assert found["low, all competitions: figures"][1] == "complete and padded, every measure (3 seeds, 22 competitions)"


def test_a_split75_entry_of_three_seeds_verifies_in_under_a_second(live_server, team, bobs_team, clean):
    """Among 100 other split75 entries of three seeds (every tab ranks 101), with a 20 MB bundle: the whole
    command, from the interpreter's start to its exit, with the download, the hashes, the aggregates of the four
    tiers and the bootstrap of eight tabs."""
    import random
    import resource
    import time

    draw = random.Random(7)
    every = split_members("split75")
    for i in range(100):
        medals = {seed: draw.sample(every, draw.randint(0, 30)) for seed in range(3)}
        entry(bobs_team, agent=f"other {i}", split="split75", medals=medals, refresh=False)
    mine = entry(team, split="split75", medals={seed: draw.sample(every, 20) for seed in range(3)}, refresh=False)
    folder = submission_folder(mine)
    folder.mkdir(parents=True)
    (folder / "bundle.archive").write_bytes(b"\x1f\x8b" + os.urandom(20 * 1024 * 1024))
    Submission.objects.filter(pk=mine.pk).update(bundle_name=f"submissions/{mine.pk}/bundle.archive")
    services.board_rebuild()
    address = f"{live_server.url}/leaderboard/entries/{Entry.objects.get(submission=mine).pk}/"
    verify(clean, address)  # the first run compiles the client and the engine (Python's .pyc files)
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = verify(clean, address)
    after, took = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([what for what in rows(done.stdout) if what.endswith(": rank")]) == 8
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"verify of a split75 entry of three seeds, 101 entries a tab, 20 MB bundle: {took:.2f} s, {cpu:.2f} s CPU")
    # The command's own work, which a busy machine (the suite's other processes, this test's live server streaming
    # the zip in this process) does not inflate the way it inflates the time on the clock.
    assert cpu < 1.0


def test_a_board_that_keeps_changing_while_downloading_is_said_not_mistaken(
    live_server, team, bobs_team, clean, monkeypatch
):
    mine = board(team, bobs_team)
    served = evidence.entry_figures
    asked = []

    def one_version_later(*, entry_id):
        asked.append(entry_id)
        return {**served(entry_id=entry_id), "board_version": served(entry_id=entry_id)["board_version"] + 1}

    monkeypatch.setattr(evidence, "entry_figures", one_version_later)
    done = verify(clean, f"{live_server.url}/leaderboard/entries/{mine.pk}/")
    assert done.returncode == 2, done.stdout + done.stderr
    found = rows(done.stdout)
    assert found["board version"][0] == "could not check" and "run verify again" in found["board version"][1]
    assert len(asked) == 3  # downloaded three times before saying so
    assert found["low tab, all competitions: rank"][0] == "ok"
