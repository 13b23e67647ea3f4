"""unscanned_evidence: a run without a log, a scan cut short by its budget, a file the scan could not decode,
each holds the entry; an honest bundle (notebooks with images, binary checkpoints) raises none."""

import gzip

import numpy as np

from grading.checks import run_checks, unscanned_evidence
from grading.checks.context import CheckSettings
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, check_context, flags_of, run_files


def flags(context) -> dict:
    return flags_of(unscanned_evidence.check(context), "unscanned_evidence")


def test_an_honest_bundle_raises_nothing(tmp_path):
    assert unscanned_evidence.check(bundle(tmp_path)) == []


def test_runs_without_any_log_are_held_and_named(tmp_path):
    runs = [
        run_files(tmp_path, PIZZA, 0, run_log="started\n"),
        run_files(tmp_path, PIZZA, 1, logs={"agent.log": "step 1\n"}),
        run_files(tmp_path, PIZZA, 2, code={"main.py": "pass\n"}, submission="id\n"),
        run_files(tmp_path, SPOOKY, 0, run_log="", logs={"empty.log": ""}),
    ]
    flag = flags(check_context(runs=runs, tiers={"low": [PIZZA, SPOOKY]}))["no_logs"]
    assert flag.severity == "blocking" and flag.tiers == ["low"]
    assert flag.evidence == {"runs": [runs[2].run_path, runs[3].run_path], "runs_total": 2}
    assert runs[2].run_path in flag.message and "run.log" in flag.message


def test_a_hosted_runs_empty_run_log_is_its_captured_output_and_counts(tmp_path):
    runs = [run_files(tmp_path, PIZZA, 0, run_log="")]
    assert "no_logs" in flags(check_context(runs=runs))
    assert flags(check_context(runs=runs, hosted=True)) == {}


def test_runs_whose_files_are_gone_are_not_held_as_without_logs():
    from tests.grading.checks.builders import runs_without_files

    assert flags(check_context(runs=runs_without_files({PIZZA: 3}))) == {}


def test_a_scan_cut_short_by_its_budget_names_the_files_left_unread(tmp_path):
    runs = [run_files(tmp_path, PIZZA, seed, logs={"a.log": "x" * 999 + "\n"}) for seed in range(3)]
    flag = flags(check_context(runs=runs, settings=CheckSettings(scan_max_bytes=1500)))["scan_cut_short"]
    assert flag.severity == "blocking"
    assert flag.evidence["files"] == [f"{runs[1].run_path}/logs/a.log", f"{runs[2].run_path}/logs/a.log"]
    assert flag.evidence["bytes_scanned"] == 1500 and flag.evidence["budget"] == 1500
    assert "CHECK_SCAN_MAX_BYTES" in flag.message


def test_a_file_the_scan_cannot_decode_is_named_with_why(tmp_path):
    damaged = gzip.compress(b"step\n" * 1000)[:40]
    run = run_files(tmp_path, PIZZA, 0, run_log="ok\n", logs={"old.log.gz": damaged})
    flag = flags(check_context(runs=[run]))["unreadable"]
    assert flag.severity == "blocking"
    assert flag.evidence["files"][0]["file"] == f"{run.run_path}/logs/old.log.gz"
    assert "damaged" in flag.evidence["files"][0]["why"] and "old.log.gz" in flag.message


def test_files_beside_logs_and_code_are_scanned_but_not_the_scored_submission(tmp_path):
    run = run_files(tmp_path, PIZZA, 0, run_log="ok\n", submission="id,gold_medal\n1,1\n")
    (run.folder / "notes").mkdir()
    (run.folder / "notes" / "todo.txt").write_text("gold_medal: True\n")
    context = check_context(runs=[run])
    assert [label for label, _, _ in context.files()] == [f"{run.run_path}/run.log", f"{run.run_path}/notes/todo.txt"]
    assert context.scan.get("grader_fields").files == {f"{run.run_path}/notes/todo.txt"}


def test_notebooks_with_images_and_binary_checkpoints_hold_nothing(tmp_path):
    import base64
    import json

    rng = np.random.default_rng(3)
    image = base64.b64encode(bytes(rng.integers(0, 256, 50_000, dtype=np.uint8))).decode()
    cell = {
        "cell_type": "code",
        "source": ["plt.plot(losses)\n"],
        "outputs": [{"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}],
    }
    weights = rng.standard_normal(50_000).astype(np.float32).tobytes()
    context = bundle(
        tmp_path,
        logs={(PIZZA, 0): {"plots.ipynb": json.dumps({"cells": [cell]}), "oof.npy": b"\x93NUMPY" + weights}},
        code={(PIZZA, 0): {"model.pt": b"PK\x03\x04" + weights, "ckpt.bin": weights}},
    )
    assert [(f.code, f.key) for f in run_checks(context) if f.severity == "blocking"] == []
