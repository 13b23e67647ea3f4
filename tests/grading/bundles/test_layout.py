"""The bundle's layout: run groups, runs, metadata, reports, and what is ignored."""

from __future__ import annotations

import json

import pytest

from grading.bundles import BundleError, discover_layout, read_bundle

from .builders import (
    GROUP,
    KNOWN,
    UUID_A,
    UUID_B,
    UUID_C,
    bundle_files,
    leftovers,
    run_files,
    write_tar_gz,
    write_zip,
)


def write_tree(root, files: dict[str, bytes]):
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def refusal(tmp_path, files) -> BundleError:
    archive = write_tar_gz(tmp_path / "b.tgz", files)
    with pytest.raises(BundleError) as caught:
        read_bundle(archive=archive, target=tmp_path / "out" / "bundle", known_competition_ids=KNOWN)
    assert leftovers(tmp_path / "out") == [], "a refused bundle must leave nothing behind"
    return caught.value


def test_it_maps_run_groups_runs_metadata_and_reports(tmp_path):
    metadata = {
        "run_group": GROUP,
        "created_at": "2024-08-01T10:00:00",
        "runs": {f"spaceship-titanic_{UUID_A}": {"success": True}},
    }
    files = bundle_files(
        **{
            f"runs/{GROUP}/metadata.json": json.dumps(metadata).encode(),
            f"runs/{GROUP}/2024-08-02T10-00-00-GMT_grading_report.json": b"{}",
            **run_files("aerial-cactus-identification", UUID_C, submission=None),
        }
    )
    layout = discover_layout(root=write_tree(tmp_path, files), known_competition_ids=KNOWN)
    (group,) = layout.run_groups
    assert group.name == GROUP and group.metadata == metadata
    assert group.grading_report.name == "2024-08-02T10-00-00-GMT_grading_report.json"
    assert [run.run_id for run in layout.runs] == [
        f"aerial-cactus-identification_{UUID_C}",
        f"spaceship-titanic_{UUID_A}",
        f"spaceship-titanic_{UUID_B}",
    ]
    no_submission, first, _ = layout.runs
    assert no_submission.competition_id == "aerial-cactus-identification" and no_submission.submission is None
    assert first.submission == first.path / "submission" / "submission.csv"
    assert first.run_log.name == "run.log" and first.logs == ("logs/agent.log",) and first.code == ("code/solution.py",)
    assert first.metadata == {"success": True} and first.metadata_seed is None
    assert not layout.report_only and layout.ignored == ()


def test_the_competition_id_is_everything_before_the_last_underscore(tmp_path):
    files = bundle_files(**run_files("spaceship-titanic", "run_7"))
    layout = discover_layout(
        root=write_tree(tmp_path, files), known_competition_ids={"spaceship-titanic", "spaceship-titanic_run"}
    )
    assert {run.competition_id for run in layout.runs} == {"spaceship-titanic", "spaceship-titanic_run"}


def test_it_refuses_an_unknown_competition_id(tmp_path):
    files = bundle_files(**run_files("spaceship-titanik", UUID_C), **run_files("titanic", UUID_A))
    error = refusal(tmp_path, files)
    assert error.code == "unknown_competition"
    assert error.message == (
        "runs for competitions this portal does not know: spaceship-titanik, titanic "
        f"(in runs/{GROUP}/spaceship-titanik_{UUID_C}, runs/{GROUP}/titanic_{UUID_A})"
    )
    assert error.details == {"competition_ids": ["spaceship-titanik", "titanic"]}


def test_it_refuses_a_folder_that_is_not_a_run_directory(tmp_path):
    error = refusal(tmp_path, bundle_files(**{f"runs/{GROUP}/notes/a.txt": b"x"}))
    assert error.code == "bad_run_directory" and f"runs/{GROUP}/notes" in error.message


def test_it_accepts_a_report_only_bundle(tmp_path):
    files = {"manifest.json": bundle_files()["manifest.json"], f"runs/{GROUP}/x_grading_report.json": b"{}"}
    bundle = read_bundle(
        archive=write_zip(tmp_path / "b.zip", files),
        target=tmp_path / "out" / "bundle",
        known_competition_ids=KNOWN,
    )
    assert bundle.report_only and bundle.layout.runs == () and bundle.seeds == ()
    assert bundle.layout.run_groups[0].grading_report.name == "x_grading_report.json"


def test_it_refuses_two_grading_reports_in_one_run_group(tmp_path):
    error = refusal(
        tmp_path,
        bundle_files(**{f"runs/{GROUP}/a_grading_report.json": b"{}", f"runs/{GROUP}/b_grading_report.json": b"{}"}),
    )
    assert error.code == "multiple_grading_reports"
    assert "a_grading_report.json, b_grading_report.json" in error.message


def test_it_refuses_a_bundle_without_runs(tmp_path):
    error = refusal(tmp_path, {"manifest.json": bundle_files()["manifest.json"], "README.md": b"hi"})
    assert error.code == "no_runs" and "no runs/ folder" in error.message


def test_it_refuses_an_empty_run_group(tmp_path):
    error = refusal(tmp_path, bundle_files(**{"runs/empty/metadata.json": b"{}"}))
    assert error.code == "no_runs" and "runs/empty holds no run directories" in error.message


def test_it_refuses_a_metadata_json_with_a_bad_seed(tmp_path):
    metadata = {"runs": {f"spaceship-titanic_{UUID_A}": {"seed": "0"}}}
    error = refusal(tmp_path, bundle_files(**{f"runs/{GROUP}/metadata.json": json.dumps(metadata).encode()}))
    assert error.code == "metadata_invalid"
    assert error.message == (
        f"runs/{GROUP}/metadata.json: 'runs.spaceship-titanic_{UUID_A}.seed' must be a whole number from 0 to 999; "
        "got '0'"
    )


@pytest.mark.parametrize(
    "body, words",
    [
        (b'{"runs": {"r": {"seed": 1000000000000000000000000000000}}}', "'runs.r.seed' is an integer of 31 digits"),
        (b'{"runs": {"r": {"seed": 1000}}}', "'runs.r.seed' must be a whole number from 0 to 999; got 1000"),
        (b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "'a[0][0]"),
        (b'{"created_at": 1e400}', "'created_at' is a number too large to store"),
        (b'{"runs": ', "is not valid JSON"),
    ],
)
def test_it_refuses_a_hostile_metadata_json_naming_the_file_and_the_key(tmp_path, body, words):
    error = refusal(tmp_path, bundle_files(**{f"runs/{GROUP}/metadata.json": body}))
    assert error.code == "metadata_invalid"
    assert error.message.startswith(f"runs/{GROUP}/metadata.json") and words in error.message


def test_it_lists_ignored_files(tmp_path):
    run = f"runs/{GROUP}/spaceship-titanic_{UUID_A}"
    files = bundle_files(
        **{
            "README.md": b"x",
            "extra/a.txt": b"x",
            "runs/stray.txt": b"x",
            f"runs/{GROUP}/notes.txt": b"x",
            f"{run}/submission/other.csv": b"x",
        }
    )
    layout = discover_layout(root=write_tree(tmp_path, files), known_competition_ids=KNOWN)
    assert layout.ignored == (
        "README.md",
        "extra/a.txt",
        f"runs/{GROUP}/notes.txt",
        f"{run}/submission/other.csv",
        "runs/stray.txt",
    )


def test_it_accepts_one_wrapping_folder(tmp_path):
    files = {f"my-bundle/{name}": data for name, data in bundle_files().items()}
    bundle = read_bundle(
        archive=write_tar_gz(tmp_path / "b.tgz", files),
        target=tmp_path / "out" / "bundle",
        known_competition_ids=KNOWN,
    )
    assert bundle.layout.root == tmp_path / "out" / "bundle" / "my-bundle" and len(bundle.layout.runs) == 2
