"""verify --data (issue 22): a reader's own MLE-bench data and the portal's engine re-grade a published entry.

The entry's evidence comes from a real graded Lite submission (tests/client/data_evidence.py); the reader's data
is MLE-bench's prepared layout. Hostile throughout: answers that are not the portal's, a submission or a report
changed inside the evidence with its hashes listed again (as an operator who tampers would), an engine that is
missing or another version, a path that leaves the bundle.
"""

import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import grading.engine
from tests.client.data_evidence import MISSING_ROWS, WITHOUT_SUBMISSION, evidence_zip, relist

CLIENT = Path(__file__).resolve().parents[2] / "client" / "mleportal.py"
LITE = 22
# The evidence is made once per session by the server's own grading, with the database (data_evidence.py): this
# marker has pytest-django set the test database up for it even when these tests run alone.
pytestmark = pytest.mark.django_db


def rows_by_check(rows) -> dict[str, tuple[str, str]]:
    return {what: (result, detail) for what, result, detail in rows}


@pytest.fixture
def evidence(lite_evidence, tmp_path) -> Path:
    """A copy of the Lite entry's evidence that a test may change."""
    return Path(shutil.copytree(lite_evidence, tmp_path / "evidence"))


@pytest.fixture
def data(mlebench_data, tmp_path) -> Path:
    """A copy of the reader's MLE-bench data that a test may change."""
    return Path(shutil.copytree(mlebench_data, tmp_path / "data"))


def test_from_a_clean_directory_with_only_the_client_and_the_wheel_every_report_agrees_with_the_server(
    engine_venv, lite_evidence, mlebench_data, tmp_path
):
    clean = tmp_path / "clean"
    clean.mkdir()
    shutil.copyfile(CLIENT, clean / "mleportal.py")
    archive = evidence_zip(lite_evidence, clean / "evidence.zip")

    done = subprocess.run(
        [str(engine_venv), "-I", "mleportal.py", "verify-data", str(archive), "--data", str(mlebench_data)],
        cwd=clean,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    graded = [line for line in lines if line.startswith("--data: ") and " 3 seed(s), every field" in line]
    assert len(graded) == LITE, done.stdout
    assert any(line.startswith("--data: answers ") and f"{LITE} competitions' answers" in line for line in lines)
    engine_line = next(line for line in lines if line.startswith("--data: engine"))
    assert f"mle-portal-engine {grading.engine.ENGINE_VERSION}" in engine_line and str(engine_venv.parent.parent) in (
        engine_line
    )
    assert f"{LITE + 2} ok, 0 differ, 0 could not be checked" in done.stdout


def test_every_report_agrees_including_a_run_without_a_file_and_an_invalid_file(
    mleportal, lite_evidence, mlebench_data
):
    rows = rows_by_check(mleportal.verify_data(str(lite_evidence), str(mlebench_data), False))

    assert {result for result, _ in rows.values()} == {"ok"}, rows
    seed0 = json.loads((lite_evidence / "reports" / "seed-2.json").read_text())["competition_reports"]
    missing = next(r for r in seed0 if r["competition_id"] == WITHOUT_SUBMISSION[0])
    assert missing["submission_path"] == "None" and missing["submission_exists"] is False
    seed1 = json.loads((lite_evidence / "reports" / "seed-1.json").read_text())["competition_reports"]
    invalid = next(r for r in seed1 if r["competition_id"] == MISSING_ROWS[0])
    assert invalid["submission_exists"] is True and invalid["valid_submission"] is False


def test_answers_that_are_not_the_portals_stop_before_anything_is_graded_and_name_the_competition(
    mleportal, lite_evidence, data, monkeypatch, capsys
):
    answers = data / "spooky-author-identification" / "prepared" / "private" / "test.csv"
    answers.write_bytes(answers.read_bytes().replace(b"\n", b"\r\n", 1))  # one byte more: another file
    graded = []
    monkeypatch.setattr(grading.engine, "grade_file", lambda *a, **k: graded.append(a) or {})
    monkeypatch.setattr(grading.engine, "load_answers", lambda *a, **k: graded.append(a) or {})

    rows = mleportal.verify_data(str(lite_evidence), str(data), False)

    found = rows_by_check(rows)
    result, detail = found["--data: answers of spooky-author-identification"]
    assert result == "differs" and str(answers) in detail
    assert found["--data: re-grade"] == (
        "could not check",
        "the answers of spooky-author-identification are not the portal's: nothing was graded",
    )
    assert graded == []
    assert not any(what.startswith("--data: aerial") for what in found)  # no competition was graded either
    code = mleportal.main(["verify-data", str(lite_evidence), "--data", str(data)])
    assert code == 1 and "spooky-author-identification" in capsys.readouterr().out


def rewrite_bundle(folder: Path, change) -> None:
    """The evidence's bundle written again with change(name, data) -> data applied to each regular member."""
    bundle = next((folder / "bundle").iterdir())
    members = []
    with tarfile.open(bundle) as source:
        for member in source.getmembers():
            handle = source.extractfile(member) if member.isfile() else None
            data = handle.read() if handle is not None else None
            members.append((member, data))
    with tarfile.open(bundle, "w:gz") as target:
        for member, data in members:
            if data is None:
                target.addfile(member)
                continue
            data = change(member.name, data)
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))


def seed_report(folder: Path, seed: int) -> dict:
    return json.loads((folder / "reports" / f"seed-{seed}.json").read_text())


def test_a_submission_swapped_in_the_bundle_differs_even_with_the_evidences_hashes_listed_again(
    mleportal, evidence, mlebench_data
):
    """An operator who swaps a better file in for a run, and lists the new bundle's SHA-256: the re-grade no longer
    gives the score the portal published."""
    target = next(
        r["submission_path"]
        for r in seed_report(evidence, 1)["competition_reports"]
        if r["competition_id"] == "nomad2018-predict-transparent-conductors"
    )
    rewrite_bundle(evidence, lambda name, data: data.replace(b".", b".9", 40) if name == target else data)
    relist(evidence)

    rows = rows_by_check(mleportal.verify_data(str(evidence), str(mlebench_data), False))

    result, detail = rows["--data: nomad2018-predict-transparent-conductors"]
    assert result == "differs" and detail.startswith("seed 1: score: the portal reports "), detail
    others = [r for what, (r, _) in rows.items() if what.startswith("--data: ") and "nomad2018" not in what]
    assert set(others) == {"ok"}
    assert not any(what.startswith("--data: file") for what in rows)  # the hashes alone would not have caught it


def test_a_bundle_changed_without_listing_it_again_is_caught_by_its_hash_as_well(mleportal, evidence, mlebench_data):
    rewrite_bundle(
        evidence, lambda name, data: data.replace(b"1", b"0", 3) if name.endswith("submission.csv") else data
    )

    rows = rows_by_check(mleportal.verify_data(str(evidence), str(mlebench_data), False))

    bundle_rows = [what for what in rows if what.startswith("--data: file bundle/")]
    assert len(bundle_rows) == 1 and rows[bundle_rows[0]][0] == "differs"


def test_a_published_report_changed_after_grading_differs_field_by_field(mleportal, evidence, mlebench_data):
    report = seed_report(evidence, 0)
    entry = next(r for r in report["competition_reports"] if r["competition_id"] == "random-acts-of-pizza")
    honest = entry["score"]
    entry["score"] = round(honest + 0.00001, 5)
    medal = entry["any_medal"]
    entry["any_medal"] = not medal
    (evidence / "reports" / "seed-0.json").write_text(json.dumps(report, indent=2))
    relist(evidence)

    rows = rows_by_check(mleportal.verify_data(str(evidence), str(mlebench_data), False))

    result, detail = rows["--data: random-acts-of-pizza"]
    assert result == "differs"
    assert f"seed 0: score: the portal reports {entry['score']}, re-graded {honest}" in detail
    shown = {True: "true", False: "false"}
    assert f"seed 0: any_medal: the portal reports {shown[not medal]}, re-graded {shown[medal]}" in detail


def test_a_report_whose_path_leaves_the_bundle_regrades_as_missing_and_differs(mleportal, evidence, mlebench_data):
    report = seed_report(evidence, 0)
    entry = report["competition_reports"][0]
    entry["submission_path"] = "../../../../etc/passwd"
    (evidence / "reports" / "seed-0.json").write_text(json.dumps(report, indent=2))
    relist(evidence)

    rows = rows_by_check(mleportal.verify_data(str(evidence), str(mlebench_data), False))

    result, detail = rows[f"--data: {entry['competition_id']}"]
    assert result == "differs" and detail.startswith("seed 0: score: the portal reports ")
    assert ", re-graded null;" in detail  # nothing there to grade: the path named no file of the bundle


def test_a_competition_not_prepared_here_could_not_be_checked_and_the_others_are_graded(mleportal, lite_evidence, data):
    shutil.rmtree(data / "leaf-classification")

    rows = rows_by_check(mleportal.verify_data(str(lite_evidence), str(data), False))

    result, detail = rows["--data: answers of leaf-classification"]
    assert result == "could not check" and "mlebench prepare -c leaf-classification" in detail
    graded = [r for what, (r, _) in rows.items() if what.startswith("--data: ") and "answers" not in what]
    assert graded.count("ok") == LITE  # the engine row and 21 competitions


def test_answers_found_by_their_hash_when_the_evidence_names_no_file(mleportal, evidence, data):
    competitions = json.loads((evidence / "competitions.json").read_text())
    for record in competitions.values():
        record["answers_file"] = None
    (evidence / "competitions.json").write_text(json.dumps(competitions))
    relist(evidence)
    answers = data / "tabular-playground-series-may-2022" / "prepared" / "private"
    original = next(answers.iterdir())
    original.rename(answers / "renamed-by-hand.csv")

    rows = rows_by_check(mleportal.verify_data(str(evidence), str(data), False))

    assert {result for result, _ in rows.values()} == {"ok"}, rows


def test_without_the_engine_it_could_not_check_and_says_what_to_pip_install(lite_evidence, mlebench_data, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    shutil.copyfile(CLIENT, tmp_path / "mleportal.py")

    done = subprocess.run(
        [
            str(bare / "bin" / "python"),
            "-I",
            "mleportal.py",
            "verify-data",
            str(lite_evidence),
            "--data",
            str(mlebench_data),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    url = json.loads((lite_evidence / "evidence.json").read_text())["engine"]["url"]
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install {url}" in done.stderr.splitlines()
    engine_line = next(line for line in done.stdout.splitlines() if line.startswith("--data: engine"))
    assert (
        "could not check" in engine_line
        and "ModuleNotFoundError" in engine_line
        and f"pip install {url}" in engine_line
    )


def test_another_engine_version_than_the_evidences_could_not_check(mleportal, evidence, mlebench_data, capsys):
    manifest = json.loads((evidence / "evidence.json").read_text())
    manifest["engine"]["version"] = "1999.1.1"
    (evidence / "evidence.json").write_text(json.dumps(manifest))

    rows = mleportal.verify_data(str(evidence), str(mlebench_data), False)

    assert rows == [
        (
            "--data: engine",
            "could not check",
            f"engine {grading.engine.ENGINE_VERSION} is installed, the evidence was made with 1999.1.1; "
            f"pip install {manifest['engine']['url']}",
        )
    ]
    assert f"pip install {manifest['engine']['url']}" in capsys.readouterr().err


@pytest.mark.parametrize("broken", ["no evidence.json", "other format", "no reports", "not a folder"])
def test_evidence_it_cannot_read_could_not_check_and_says_why(mleportal, evidence, mlebench_data, broken):
    manifest = json.loads((evidence / "evidence.json").read_text())
    if broken == "no evidence.json":
        (evidence / "evidence.json").unlink()
    elif broken == "other format":
        (evidence / "evidence.json").write_text(json.dumps({**manifest, "format": "mle-portal-evidence/9"}))
    elif broken == "no reports":
        files = [f for f in manifest["files"] if not f["path"].startswith("reports/")]
        (evidence / "evidence.json").write_text(json.dumps({**manifest, "files": files}))
    path = str(evidence / "competitions.json") if broken == "not a folder" else str(evidence)

    rows = mleportal.verify_data(path, str(mlebench_data), False)

    assert len(rows) == 1 and rows[0][:2] == ("--data", "could not check")


def test_official_without_the_mlebench_package_says_so(mleportal, lite_evidence, mlebench_data):
    assert importlib.util.find_spec("mlebench") is None  # not installed here, on purpose

    rows = mleportal.verify_data(str(lite_evidence), str(mlebench_data), True)

    what, result, detail = rows[-1]
    assert (what, result) == ("--official", "could not check")
    assert "the mlebench package is not importable here" in detail
    assert {r for w, r, _ in rows[:-1]} == {"ok"}  # the portal's own re-grade still ran


STAND_IN_MLEBENCH = '''
"""A stand-in for MLE-bench's grading API (mlebench.registry.registry, mlebench.grade.grade_csv), grading with the
portal's engine and the competition's leaderboard.csv in the data folder, as MLE-bench would."""
'''

STAND_IN_REGISTRY = """
from pathlib import Path

class Competition:
    def __init__(self, folder):
        self.id, self.folder = folder.name, folder

class Registry:
    def set_data_dir(self, data_dir):
        self.data_dir = Path(data_dir)
        return self

    def get_competition(self, competition_id):
        return Competition(self.data_dir / competition_id)

registry = Registry()
"""

STAND_IN_GRADE = """
import json, os
from grading.engine import GraderRef, grade_submission
from grading.engine.medals import read_leaderboard

GRADERS = json.loads(os.environ["STAND_IN_GRADERS"])
NUDGE = os.environ.get("STAND_IN_NUDGE", "")

class Report:
    def __init__(self, data):
        self.data = data
    def to_dict(self):
        return self.data

def grade_csv(path, competition):
    record = GRADERS[competition.id]
    answers = competition.folder / record["answers_file"]
    report = grade_submission(
        competition_id=competition.id, submission_path=path if path.is_file() else None, answers_path=answers,
        grader=GraderRef(record["grader"]["name"], record["grader"]["params"]),
        leaderboard_scores=read_leaderboard(competition.folder / "leaderboard.csv"),
    ).to_dict(with_reason=False)
    if competition.id == NUDGE and report["score"] is not None:
        report["score"] = report["score"] + 0.5
    return Report(report)
"""


@pytest.mark.parametrize("nudged", [None, "spaceship-titanic"])
def test_official_with_mlebench_says_per_competition_whether_its_grader_agrees(
    mleportal, lite_evidence, mlebench_data, tmp_path, monkeypatch, nudged
):
    package = tmp_path / "stand-in" / "mlebench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(STAND_IN_MLEBENCH)
    (package / "registry.py").write_text(STAND_IN_REGISTRY)
    (package / "grade.py").write_text(STAND_IN_GRADE)
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.setenv("STAND_IN_GRADERS", (lite_evidence / "competitions.json").read_text())
    monkeypatch.setenv("STAND_IN_NUDGE", nudged or "")
    for name in [m for m in sys.modules if m == "mlebench" or m.startswith("mlebench.")]:
        monkeypatch.delitem(sys.modules, name)

    rows = rows_by_check(mleportal.verify_data(str(lite_evidence), str(mlebench_data), True))

    official = {what: found for what, found in rows.items() if what.startswith("--official: ")}
    assert len(official) == LITE
    for what, (result, detail) in official.items():
        if nudged and what.endswith(nudged):
            assert result == "differs" and "score: the portal reports " in detail
        else:
            assert (result, detail) == ("ok", "3 seed(s): MLE-bench's grader agrees on score, validity and medals")


def test_the_command_exits_2_when_something_could_not_be_checked_and_prints_one_table(
    mleportal, lite_evidence, data, capsys
):
    shutil.rmtree(data / "leaf-classification")

    code = mleportal.main(["verify-data", str(lite_evidence), "--data", str(data)])

    out = capsys.readouterr().out
    assert code == 2
    assert out.splitlines()[0].split() == ["check", "result", "detail"]
    assert f"{LITE} ok, 0 differ, 1 could not be checked" in out


def test_the_client_still_imports_the_standard_library_alone_at_start():
    code = f"import sys; sys.path.insert(0, {str(CLIENT.parent)!r}); import mleportal; print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in json.loads(done.stdout.replace("'", '"'))}
    assert not loaded & {"grading", "numpy", "pandas", "django"}


def test_on_python_3_9_the_client_says_the_engine_needs_3_12(lite_evidence, mlebench_data, tmp_path):
    from tests.client.test_upload import oldest_python

    python39 = oldest_python()
    if python39 is None:
        pytest.skip("no Python 3.9 here (set PYTHON39 to its path to run this)")
    shutil.copyfile(CLIENT, tmp_path / "mleportal.py")

    done = subprocess.run(
        [python39, "-I", "mleportal.py", "verify-data", str(lite_evidence), "--data", str(mlebench_data)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 2, done.stdout + done.stderr
    engine_line = next(line for line in done.stdout.splitlines() if line.startswith("--data: engine"))
    assert "needs Python 3.12 or newer, this is 3.9" in engine_line


def test_a_bundle_that_is_not_an_archive_could_not_check_and_nothing_is_left_graded_half(
    mleportal, evidence, mlebench_data
):
    bundle = next((evidence / "bundle").iterdir())
    bundle.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])  # cut short, listed again
    relist(evidence)

    rows = mleportal.verify_data(str(evidence), str(mlebench_data), False)

    what, result, detail = rows[-1]
    assert (what, result) == ("--data: re-grade", "could not check")
    assert detail.startswith(f"the bundle {bundle.name} cannot be read: ")
    assert not any(w.startswith("--data: ") and r == "ok" and "seed(s)" in d for w, r, d in rows)
