"""CheckContext and RunFiles: what every check reads, and the settings the checking step hands them."""

import os

from grading.checks.context import CheckSettings
from grading.services.finish import check_settings
from tests.grading.checks.builders import (
    PIZZA,
    REMOVE,
    SPOOKY,
    check_context,
    manifest_with,
    run_files,
    runs_without_files,
)


def test_a_graded_run_has_a_file_exactly_when_its_submission_is_there(tmp_path):
    with_file = run_files(tmp_path, PIZZA, 0, submission="id,y\n1,0\n", claimed={"score": 1}, regraded={"score": 2})
    without = run_files(tmp_path, PIZZA, 1)
    assert with_file.graded.has_file and not without.graded.has_file
    graded = with_file.graded
    assert (graded.claimed, graded.regraded, graded.seed) == ({"score": 1}, {"score": 2}, 0)
    assert with_file.graded.run_path == with_file.run_path


def test_the_declared_seeds_are_zero_without_a_manifest_or_a_seeds_key():
    assert check_context(manifest=None).seeds_declared == 0
    assert check_context(manifest=manifest_with({"seeds": REMOVE})).seeds_declared == 0
    assert check_context(manifest=manifest_with(seeds=5)).seeds_declared == 5


def test_a_competitions_tiers_follow_the_order_of_the_tier_members():
    context = check_context(tiers={"low": [PIZZA], "high": ["h"], "all": [PIZZA, "h"]})
    assert context.tiers_of(PIZZA) == ["low", "all"]
    assert context.tiers_of("outside-the-split") == []
    assert context.tiers_of_all(cid for cid in ("h", PIZZA)) == ["low", "high", "all"]
    assert context.tiers_of_all([]) == []


def test_files_lists_run_log_logs_and_code_with_labels_relative_to_the_bundle(tmp_path):
    run = run_files(
        tmp_path,
        PIZZA,
        0,
        run_log="x\n",
        logs={"b/deep.log": "y\n", "a.log": "z\n"},
        code={"main.py": "print(1)\n"},
        submission="id\n",
    )
    files = check_context(runs=[run]).files()
    assert [(label, kind) for label, _, kind in files] == [
        (f"{run.run_path}/run.log", "logs"),
        (f"{run.run_path}/logs/a.log", "logs"),
        (f"{run.run_path}/logs/b/deep.log", "logs"),
        (f"{run.run_path}/code/main.py", "code"),
    ]
    assert all(path.is_file() for _, path, _ in files)


def test_the_submission_is_neither_a_log_nor_code(tmp_path):
    run = run_files(tmp_path, PIZZA, 0, submission="id,gold_medal\n1,1\n")
    assert check_context(runs=[run]).files() == []


def test_a_run_without_a_folder_or_with_an_empty_one_has_no_files(tmp_path):
    gone = runs_without_files({PIZZA: 1})
    empty = [run_files(tmp_path, SPOOKY, 0)]
    assert check_context(runs=gone + empty).files() == []
    assert gone[0].log_files() == [] and gone[0].code_files() == []


def test_linked_files_are_not_followed(tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("gold_medal\n")
    run = run_files(tmp_path, PIZZA, 0, code={"a.py": "x = 1\n"})
    os.symlink(secret, run.folder / "code" / "link.py")
    os.symlink(tmp_path, run.folder / "code" / "loop")
    assert [path.name for path in run.code_files()] == ["a.py"]


def test_the_scan_is_made_once_per_context_and_afresh_for_a_changed_one(tmp_path):
    from dataclasses import replace

    context = check_context(runs=[run_files(tmp_path, PIZZA, 0, logs={"a.log": "gold_medal: True\n"})])
    assert context.scan is context.scan and context.scan.get("grader_fields").total == 1
    assert replace(context, runs=()).scan.get("grader_fields").total == 0


def test_the_scan_honours_the_settings_for_hits_and_context_lines(tmp_path):
    log = "".join(f"line {i}\n" for i in range(10)) + "gold_medal\n" * 3 + "after\n"
    run = run_files(tmp_path, PIZZA, 0, logs={"a.log": log})
    found = check_context(runs=[run], settings=CheckSettings(scan_max_hits=2, scan_context_lines=1)).scan.get(
        "grader_fields"
    )
    assert found.total == 3 and [hit.line for hit in found.hits] == [11, 12]
    assert found.hits[0].excerpt == ["10: line 9", "11: gold_medal", "12: gold_medal"]


def test_the_scan_byte_budget_of_the_settings_is_shared_by_all_files(tmp_path):
    runs = [run_files(tmp_path, PIZZA, seed, logs={"a.log": "x" * 999 + "\n"}) for seed in range(3)]
    scan = check_context(runs=runs, settings=CheckSettings(scan_max_bytes=1500)).scan
    assert scan.truncated and scan.bytes_scanned == 1500 and scan.files_scanned == 2


# The checking step's settings (Django settings CHECK_*, percentages there, shares here)


def test_the_default_django_settings_give_the_default_check_settings():
    assert check_settings() == CheckSettings()


def test_percent_settings_become_shares(settings):
    settings.CHECK_IMPLAUSIBLE_MARGIN_PERCENT = 50
    settings.CHECK_CODE_SIMILARITY_PERCENT = 75
    settings.CHECK_RUNTIME_TOLERANCE_PERCENT = 0
    settings.CHECK_SCAN_MAX_HITS = 9
    made = check_settings()
    assert (made.implausible_margin, made.code_similarity, made.runtime_tolerance, made.scan_max_hits) == (
        0.5,
        0.75,
        0.0,
        9,
    )


def test_answer_copy_settings_become_shares_and_a_confidence(settings):
    settings.CHECK_ANSWER_COPY_EXACT_PERCENT = 5
    settings.CHECK_ANSWER_COPY_ERROR_RATIO_PERCENT = 25
    settings.CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE = 990
    made = check_settings()
    assert (made.answer_copy_exact, made.answer_copy_error_ratio, made.answer_copy_confidence) == (0.05, 0.25, 0.99)
