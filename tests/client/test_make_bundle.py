"""make-bundle: an MLE-bench run group made in code becomes a bundle that grading.bundles accepts."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from grading.bundles import read_bundle

KNOWN = frozenset({"spaceship-titanic", "aerial-cactus-identification"})
GROUP = "2024-08-01T10-00-00-GMT_run-group_aide"
RUN_A = "spaceship-titanic_1b2f0c44-6f2e-4a44-9d43-0a1f1e3b9a01"
RUN_B = "spaceship-titanic_7c9d2e10-3a5b-4c6d-8e7f-9a0b1c2d3e4f"
RUN_C = "aerial-cactus-identification_e3d4c5b6-a7f8-4901-b2c3-d4e5f6a7b8c9"


def write(path: Path, data: bytes | str = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def make_run_group(folder: Path, name: str = GROUP) -> Path:
    """A run group as MLE-bench's run_agent.py leaves it (MECHANICS (h)), plus a team grading report."""
    group = folder / name
    metadata = {
        "run_group": name,
        "created_at": "2024-08-01T10:00:00",
        "runs": {r: {"success": True} for r in (RUN_A, RUN_B, RUN_C)},
    }
    write(group / "metadata.json", json.dumps(metadata))
    write(group / "2024-08-02T09-00-00-GMT_grading_report.json", json.dumps({"competition_reports": []}))
    for run in (RUN_A, RUN_B, RUN_C):
        write(group / run / "run.log", "agent started\n")
        write(group / run / "logs" / "aide" / "journal.json", "{}")
        write(group / run / "code" / "solution.py", "print('hi')\n")
    for run in (RUN_A, RUN_C):
        write(group / run / "submission" / "submission.csv", "id,label\n1,0\n")
    (group / RUN_B / "submission").mkdir()  # the run made no submission
    os.symlink("/home/data/train.csv", group / RUN_A / "code" / "train.csv")
    os.symlink("/home/data", group / RUN_A / "code" / "data")
    return group


def make_bundle(mleportal, runs: Path, out: Path, *extra: str) -> int:
    return mleportal.main(["make-bundle", str(runs), "--out", str(out), "--agent-name", "AIDE", *extra])


def test_a_run_group_becomes_a_bundle_that_the_portal_accepts(mleportal, tmp_path, capsys):
    group = make_run_group(tmp_path / "runs")
    out = tmp_path / "aide.tar.gz"
    code = make_bundle(
        mleportal,
        group,
        out,
        "--agent-version",
        "0.4",
        "--source-url",
        "https://example.org/aide",
        "--commit",
        "abc123",
        "--open-source",
        "--llm",
        "o1-preview",
        "--llm",
        "gpt-4o",
        "--split",
        "low",
        "--seeds",
        "3",
        "--runtime-hours",
        "24",
        "--benchmark-version",
        "v1",
        "--benchmark-commit",
        "783b15af",
        "--no-internet-access",
        "--gpu",
        "A10:24:1",
        "--vcpus",
        "36",
        "--ram-gb",
        "440",
        "--disclose",
        "test_set_feedback=false",
        "--disclose",
        "other_models=gpt-4o-mini,claude",
        "--disclose",
        "uses_known_leakage=no",
        "--notes",
        "made in a test",
        "--registration",
        "12",
    )
    out_text, err = capsys.readouterr()
    assert code == 0, err
    assert "3 runs of 2 competitions (1 without a submission), 1 grading report(s)" in out_text
    assert f"warning: skipped runs/{GROUP}/{RUN_A}/code/data (symbolic link to /home/data)" in err
    assert f"warning: skipped runs/{GROUP}/{RUN_A}/code/train.csv (symbolic link to /home/data/train.csv)" in err

    bundle = read_bundle(archive=out, target=tmp_path / "extracted", known_competition_ids=KNOWN)
    manifest = bundle.manifest
    assert manifest.agent.name == "AIDE" and manifest.agent.version == "0.4" and manifest.agent.open_source is True
    assert manifest.agent.source_url == "https://example.org/aide" and manifest.agent.commit == "abc123"
    assert manifest.llms == ("o1-preview", "gpt-4o")
    assert (manifest.benchmark.split, manifest.benchmark.version, manifest.benchmark.commit) == (
        "low",
        "v1",
        "783b15af",
    )
    assert manifest.seeds == 3 and manifest.runtime_hours == 24.0 and manifest.internet_access is False
    assert [(g.model, g.memory_gb, g.count) for g in manifest.hardware.gpus] == [("A10", 24.0, 1)]
    assert manifest.hardware.vcpus == 36 and manifest.hardware.ram_gb == 440.0
    assert manifest.disclosures.test_set_feedback is False and manifest.disclosures.uses_known_leakage is False
    assert manifest.disclosures.other_models == ("gpt-4o-mini", "claude")
    assert manifest.notes == "made in a test" and manifest.unknown_keys == ()
    assert manifest.registration == 12

    (run_group,) = bundle.layout.run_groups
    assert run_group.name == GROUP and run_group.metadata["runs"][RUN_A] == {"success": True}
    assert run_group.grading_report.name == "2024-08-02T09-00-00-GMT_grading_report.json"
    runs = {run.run_id: run for run in bundle.layout.runs}
    assert set(runs) == {RUN_A, RUN_B, RUN_C}
    assert runs[RUN_B].submission is None and runs[RUN_A].submission.read_text() == "id,label\n1,0\n"
    assert runs[RUN_A].code == ("code/solution.py",) and runs[RUN_A].logs == ("logs/aide/journal.json",)
    assert runs[RUN_A].run_log.read_text() == "agent started\n"
    assert [(s.run_id, s.seed) for s in bundle.seeds] == [(RUN_C, 0), (RUN_A, 0), (RUN_B, 1)]
    assert bundle.layout.ignored == ()
    with tarfile.open(out) as tar:
        assert tar.getnames()[0] == "manifest.json"
        assert all(member.isfile() for member in tar.getmembers())


def test_a_folder_of_run_groups_becomes_one_bundle_with_counted_seeds(mleportal, tmp_path, capsys):
    make_run_group(tmp_path / "runs", "2024-08-01_run-group_aide")
    make_run_group(tmp_path / "runs", "2024-08-02_run-group_aide")
    write(tmp_path / "runs" / "run_group_experiments.csv", "experiment_id,run_group\n")
    out = tmp_path / "both.tgz"
    assert make_bundle(mleportal, tmp_path / "runs", out) == 0
    assert "seeds 4 (counted: the most runs of one competition)" in capsys.readouterr().out
    bundle = read_bundle(archive=out, target=tmp_path / "extracted", known_competition_ids=KNOWN)
    assert [g.name for g in bundle.layout.run_groups] == [
        "2024-08-01_run-group_aide",
        "2024-08-02_run-group_aide",
    ]
    assert bundle.manifest.seeds == 4 and bundle.manifest.benchmark.split == "split75"
    assert max(s.seed for s in bundle.seeds) == 3  # spaceship-titanic: 2 runs in each of 2 groups


def test_it_refuses_a_folder_without_a_run_group(mleportal, tmp_path, capsys):
    write(tmp_path / "runs" / "notes" / "readme.txt")
    out = tmp_path / "b.tar.gz"
    assert make_bundle(mleportal, tmp_path / "runs", out) == 1
    assert "error: no run group in" in capsys.readouterr().err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["runs"]


def test_it_refuses_two_grading_reports_in_a_run_group(mleportal, tmp_path, capsys):
    group = make_run_group(tmp_path / "runs")
    write(group / "second_grading_report.json", "{}")
    assert make_bundle(mleportal, group, tmp_path / "b.tar.gz") == 1
    assert "holds 2 grading reports" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options, message",
    [
        (["--gpu", "A10:lots"], "--gpu 'A10:lots': expected MODEL:MEMORY_GB:COUNT"),
        (["--disclose", "test_set_feedback=maybe"], "test_set_feedback must be true or false"),
        (["--disclose", "novalue"], "expected KEY=VALUE"),
    ],
)
def test_it_refuses_bad_options(mleportal, tmp_path, capsys, options, message):
    group = make_run_group(tmp_path / "runs")
    assert make_bundle(mleportal, group, tmp_path / "b.tar.gz", *options) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "b.tar.gz").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_it_does_not_overwrite_a_bundle_unless_forced(mleportal, tmp_path, capsys):
    group = make_run_group(tmp_path / "runs")
    out = write(tmp_path / "b.tar.gz", b"old")
    assert make_bundle(mleportal, group, out) == 1 and out.read_bytes() == b"old"
    assert make_bundle(mleportal, group, out, "--force") == 0 and out.read_bytes() != b"old"
