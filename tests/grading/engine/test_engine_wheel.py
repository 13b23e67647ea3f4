"""The engine's wheel (packaging/engine/, grading/engine_wheel.py): what it holds, that it builds the same bytes
every time, that a changed engine needs a new version, and that installed alone in a clean virtualenv it grades
every Lite competition exactly as the portal does."""

import hashlib
import json
import subprocess
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from grading import engine_wheel as wheel_module
from grading.engine import ENGINE_VERSION, grade_file, thresholds_from_leaderboard
from grading.engine.medals import read_leaderboard
from grading.engine_wheel import (
    RELEASED,
    WheelBuildFailed,
    build_engine_wheel,
    engine_files,
    ensure_engine_wheel,
    sources_digest,
    wheel_name,
)
from tests.lite import LITE_SEEDS

REPO = Path(__file__).resolve().parents[3]
CREATED_AT = datetime(2026, 12, 1, 12, 0, 0)


def test_the_wheel_holds_the_engine_and_nothing_else(engine_wheel_file):
    with zipfile.ZipFile(engine_wheel_file.path) as archive:
        names = archive.namelist()
        metadata = archive.read(f"mle_portal_engine-{ENGINE_VERSION}.dist-info/METADATA").decode()
    code = {name for name in names if ".dist-info/" not in name}
    assert code == {name for name, _ in engine_files() if name.startswith("grading/")}
    assert {"grading/__init__.py", "grading/engine/__init__.py", "grading/engine/ranking.py"} <= code
    assert all(name.startswith("grading/engine/") or name == "grading/__init__.py" for name in code)
    assert f"Name: mle-portal-engine\nVersion: {ENGINE_VERSION}\n" in metadata
    assert engine_wheel_file.wheel == wheel_name() == f"mle_portal_engine-{ENGINE_VERSION}-py3-none-any.whl"


def test_every_file_of_the_engine_goes_into_the_wheel_data_files_included(engine_wheel_file):
    on_disk = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "grading" / "engine").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith(".")
    }
    with zipfile.ZipFile(engine_wheel_file.path) as archive:
        assert on_disk <= set(archive.namelist())


def test_two_builds_give_the_same_bytes(engine_wheel_file, tmp_path):
    again = build_engine_wheel(tmp_path)
    assert again.sha256 == engine_wheel_file.sha256
    assert hashlib.sha256(again.path.read_bytes()).hexdigest() == again.sha256


def test_its_dependencies_are_the_portals_own_pins(engine_wheel_file):
    with zipfile.ZipFile(engine_wheel_file.path) as archive:
        metadata = archive.read(f"mle_portal_engine-{ENGINE_VERSION}.dist-info/METADATA").decode()
    required = sorted(line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: "))
    locked = {line.split("==")[0]: line.strip() for line in (REPO / "requirements.lock").read_text().splitlines()}
    assert required == sorted(locked[name] for name in ("numpy", "pandas", "pyarrow", "scipy", "threadpoolctl"))


def test_a_changed_engine_needs_a_new_engine_version():
    """One version, one set of sources: the evidence names the version, and the wheel served under it must be the
    code that graded. After changing grading/engine/ (or packaging/engine/), raise ENGINE_VERSION in
    grading/engine/__init__.py and run scripts/build_engine_wheel --record."""
    released = json.loads(RELEASED.read_text())
    assert released == {"version": ENGINE_VERSION, "sources_sha256": sources_digest()}, (
        "the engine changed since packaging/engine/sources.json was recorded: raise ENGINE_VERSION in "
        "grading/engine/__init__.py, then run scripts/build_engine_wheel --record"
    )


def test_it_is_built_once_and_again_only_when_the_wheel_or_the_sources_change(tmp_path, monkeypatch):
    first = ensure_engine_wheel(tmp_path)
    stamp = first.path.stat().st_mtime_ns
    assert ensure_engine_wheel(tmp_path) == first and first.path.stat().st_mtime_ns == stamp

    first.path.write_bytes(b"PK tampered")  # a wheel changed on disk is never served: it is built again
    rebuilt = ensure_engine_wheel(tmp_path)
    assert rebuilt.sha256 == first.sha256 and hashlib.sha256(rebuilt.path.read_bytes()).hexdigest() == first.sha256

    monkeypatch.setattr(wheel_module, "sources_digest", lambda: "0" * 64)  # the engine's sources changed
    ensure_engine_wheel(tmp_path)
    record = json.loads((tmp_path / f"{first.wheel}.json").read_text())
    assert record["sources_sha256"] == "0" * 64 and record["sha256"] == first.sha256


def test_a_failed_build_says_why_and_leaves_nothing_behind(tmp_path, monkeypatch):
    broken = tmp_path / "config"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[project\nname = ")
    (broken / "README.md").write_text("x")
    monkeypatch.setattr(wheel_module, "CONFIG", broken)
    out = tmp_path / "out"

    with pytest.raises(WheelBuildFailed, match="setuptools did not build"):
        build_engine_wheel(out)
    assert list(out.iterdir()) == []


IN_THE_VENV = r"""
import json, sys
from datetime import datetime
try:
    import django
except ModuleNotFoundError:
    pass
else:
    sys.exit("django is importable in the engine's virtualenv")
import grading.engine as engine
results = []
for job in json.load(sys.stdin):
    results.append(engine.grade_file(job["submission"], job["answers"], competition_id=job["competition_id"],
                                     grader=job["grader"], thresholds=job["thresholds"],
                                     created_at=datetime.fromisoformat(job["created_at"])))
print(json.dumps({"version": engine.ENGINE_VERSION, "file": engine.__file__, "reports": results}))
"""


def lite_jobs(lite_packs: Path, lite_run_group: Path) -> list[dict]:
    """Every Lite competition's seed-0 demo submission with its answers, grader and leaderboard's thresholds."""
    from competitions.demo.runs import run_id_for

    jobs = []
    for spec_path in sorted(lite_packs.glob("*/pack.json")):
        spec = json.loads(spec_path.read_text())
        scores = read_leaderboard(spec_path.parent / spec["leaderboard"])
        limits = thresholds_from_leaderboard(scores)
        for seed in LITE_SEEDS[:1]:
            run = lite_run_group / run_id_for(competition_id=spec["competition_id"], seed=seed)
            jobs.append(
                {
                    "competition_id": spec["competition_id"],
                    "submission": str(run / "submission" / "submission.csv"),
                    "answers": str(spec_path.parent / spec["answers"]),
                    "grader": spec["grader"],
                    "thresholds": {
                        "gold": limits.gold,
                        "silver": limits.silver,
                        "bronze": limits.bronze,
                        "median": limits.median,
                        "is_lower_better": limits.is_lower_better,
                    },
                    "created_at": CREATED_AT.isoformat(),
                }
            )
    return jobs


def test_installed_alone_in_a_clean_virtualenv_it_grades_every_lite_competition_as_the_portal_does(
    engine_venv, lite_packs, lite_run_group, tmp_path
):
    jobs = lite_jobs(lite_packs, lite_run_group)
    assert len(jobs) == 22

    done = subprocess.run(
        [str(engine_venv), "-I", "-c", IN_THE_VENV],  # -I: no PYTHONPATH, no user site, not this checkout
        input=json.dumps(jobs),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout)
    assert there["version"] == ENGINE_VERSION and there["file"].startswith(str(engine_venv.parent.parent))
    here = [
        grade_file(
            job["submission"],
            job["answers"],
            competition_id=job["competition_id"],
            grader=job["grader"],
            thresholds=job["thresholds"],
            created_at=CREATED_AT,
        )
        for job in jobs
    ]
    assert json.dumps(there["reports"], allow_nan=True) == json.dumps(here, allow_nan=True)
    assert sum(report["valid_submission"] for report in here) >= 20  # real scores, not 22 identical failures
