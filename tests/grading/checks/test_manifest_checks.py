"""runtime_over_budget, nonstandard_resources, benchmark_version: the manifest and the logs' time stamps."""

import pytest

from competitions.demo.runs import default_manifest
from grading.checks import benchmark_version, nonstandard_resources, runtime_over_budget
from tests.grading.checks.builders import (
    BOARD_COMMIT,
    PIZZA,
    REMOVE,
    bundle,
    check_context,
    flags_of,
    manifest_with,
    run_files,
    runs_without_files,
    timestamps,
)


def test_a_run_logging_longer_than_declared_is_over_budget(tmp_path):
    manifest = {**default_manifest(split="low"), "runtime_hours": 12}
    context = bundle(tmp_path, manifest=manifest, run_logs={(PIZZA, 1): timestamps(30)})
    flags = flags_of(runtime_over_budget.check(context), "runtime_over_budget")
    assert set(flags) == {"logs"}
    assert flags["logs"].evidence["runs"][0]["hours"] == 30 and flags["logs"].evidence["budget_hours"] == 12


def test_a_declared_runtime_above_the_standard_is_over_budget(tmp_path):
    context = bundle(tmp_path, manifest={**default_manifest(split="low"), "runtime_hours": 48})
    assert set(flags_of(runtime_over_budget.check(context), "runtime_over_budget")) == {"manifest"}


def test_hardware_beyond_the_reference_is_nonstandard(tmp_path):
    manifest = default_manifest(split="low")
    manifest["hardware"] = {"gpus": [{"model": "H100", "memory_gb": 80, "count": 8}], "vcpus": 96, "ram_gb": 2000}
    (flag,) = nonstandard_resources.check(bundle(tmp_path, manifest=manifest))
    assert flag.severity == "warning" and len(flag.evidence["beyond"]) == 4
    assert flag.evidence["reference"]["vcpus"] == 36


def test_another_benchmark_commit_is_flagged_and_a_prefix_of_the_boards_is_not(tmp_path):
    manifest = default_manifest(split="low")
    manifest["benchmark"]["commit"] = "deadbeef"
    (flag,) = benchmark_version.check(bundle(tmp_path, manifest=manifest))
    assert flag.code == "benchmark_version" and flag.evidence["declared"]["commit"] == "deadbeef"
    manifest["benchmark"]["commit"] = "783b15af"
    assert benchmark_version.check(bundle(tmp_path / "b", manifest=manifest)) == []


# benchmark_version


def versions(changes, **board):
    from grading.checks.context import BoardVersion

    board = BoardVersion(**{"version": "v1", "commit": BOARD_COMMIT, **board})
    return benchmark_version.check(check_context(manifest=manifest_with(changes), board=board))


def test_the_boards_version_and_commit_raise_nothing():
    assert versions({}) == []


@pytest.mark.parametrize("version", ["1", "V1", "v1"])
def test_a_version_differing_only_in_its_v_or_case_is_the_same(version):
    assert versions({"benchmark.version": version}) == []


def test_another_version_is_a_warning_that_names_both():
    (flag,) = versions({"benchmark.version": "v2"})
    assert (flag.code, flag.severity, flag.key, flag.tiers) == ("benchmark_version", "warning", "manifest", [])
    assert flag.message == "The run used another benchmark than the board's: version v2 (board: v1)."
    assert flag.evidence == {
        "file": "manifest.json",
        "declared": {"name": "mle-bench", "version": "v2", "commit": BOARD_COMMIT},
        "board": {"name": "mle-bench", "version": "v1", "commit": BOARD_COMMIT},
    }


def test_another_commit_is_shown_as_twelve_characters_of_each():
    (flag,) = versions({"benchmark.commit": "0123456789ABCDEF0123"})
    assert "commit 0123456789ab (board: 783b15af7740)" in flag.message


def test_another_version_and_commit_are_one_flag_naming_both():
    (flag,) = versions({"benchmark.version": "v0.9", "benchmark.commit": "deadbeef"})
    assert flag.message.endswith("version v0.9 (board: v1); commit deadbeef (board: 783b15af7740).")


def test_a_full_commit_of_which_the_boards_short_one_is_a_prefix_is_the_same():
    assert versions({"benchmark.commit": BOARD_COMMIT.upper()}, commit=BOARD_COMMIT[:8]) == []


def test_neither_version_nor_commit_declared_is_an_info_note():
    (flag,) = versions({"benchmark.version": REMOVE, "benchmark.commit": REMOVE})
    assert (flag.severity, flag.key) == ("info", "undeclared")
    assert flag.evidence["declared"] == {"name": "mle-bench", "version": None, "commit": None}


def test_only_the_version_declared_and_matching_is_enough():
    assert versions({"benchmark.commit": REMOVE}) == []


def test_a_board_that_records_no_version_or_commit_compares_nothing():
    assert versions({"benchmark.version": "v7", "benchmark.commit": "deadbeef"}, version="", commit="") == []


# nonstandard_resources

REFERENCE_HARDWARE = {"gpus": [{"model": "A10", "memory_gb": 24, "count": 1}], "vcpus": 36, "ram_gb": 440}


def resources(changes):
    return nonstandard_resources.check(check_context(manifest=manifest_with(changes)))


def test_exactly_the_reference_setup_is_standard():
    assert resources({"runtime_hours": 24, "hardware": REFERENCE_HARDWARE}) == []


def test_less_than_the_reference_setup_is_standard():
    assert (
        resources(
            {
                "runtime_hours": 6,
                "hardware": {"gpus": [{"model": "T4", "memory_gb": 16, "count": 1}], "vcpus": 8, "ram_gb": 64},
            }
        )
        == []
    )


@pytest.mark.parametrize(
    ("changes", "beyond"),
    [
        ({"runtime_hours": 24.5}, "runtime 24.5 h > 24 h"),
        ({"hardware.vcpus": 37}, "37 vCPUs > 36"),
        ({"hardware.ram_gb": 440.5}, "440.5 GB RAM > 440 GB"),
        ({"hardware.gpus": [{"model": "A10", "memory_gb": 24, "count": 2}]}, "2 GPUs > 1"),
        ({"hardware.gpus": [{"model": "A10", "memory_gb": 24}, {"model": "A10", "memory_gb": 24}]}, "2 GPUs > 1"),
        ({"hardware.gpus": [{"model": "A10", "memory_gb": 48}]}, "A10 with 48 GB > 24 GB"),
        ({"hardware.gpus": [{"model": "H100"}]}, "GPU H100 is not the reference A10"),
    ],
)
def test_each_resource_just_beyond_the_reference_is_named(changes, beyond):
    (flag,) = resources(changes)
    assert (flag.code, flag.severity, flag.key) == ("nonstandard_resources", "warning", "manifest")
    assert flag.evidence["beyond"] == [beyond] and flag.message == f"Beyond the reference setup: {beyond}."
    assert flag.evidence["file"] == "manifest.json"


def test_the_evidence_shows_the_declared_setup_beside_the_reference():
    (flag,) = resources({"hardware.vcpus": 64})
    assert flag.evidence["declared"] == {"runtime_hours": 24.0, "vcpus": 64, "ram_gb": 440.0, "gpus": "1 × A10 24 GB"}
    assert flag.evidence["reference"] == {"runtime_hours": 24.0, "vcpus": 36, "ram_gb": 440.0, "gpus": "1 × A10 24 GB"}


def test_a_variant_of_the_a10_without_its_memory_is_the_reference():
    assert resources({"hardware.gpus": [{"model": "NVIDIA A10G"}]}) == []


def test_an_a100_of_undeclared_memory_is_not_the_reference():
    (flag,) = resources({"hardware.gpus": [{"model": "A100", "count": 1}]})
    assert flag.evidence["beyond"] == ["GPU A100 is not the reference A10"]


@pytest.mark.parametrize("model", ["A10", "a10", "NVIDIA A10", "nvidia-a10", "A10 24GB", "NVIDIA A10-24Q", "A10G"])
def test_the_a10_named_as_a_whole_token_is_the_reference(model):
    assert resources({"hardware.gpus": [{"model": model}]}) == []


@pytest.mark.parametrize("model", ["NVIDIA A100", "A100-SXM4-80GB", "RTX A1000", "A10X", "TA10"])
def test_a_model_that_only_contains_a10_is_not_the_reference(model):
    (flag,) = resources({"hardware.gpus": [{"model": model}]})
    assert flag.evidence["beyond"] == [f"GPU {model} is not the reference A10"]


def test_an_undeclared_resource_is_an_info_note_naming_it():
    (flag,) = resources({"hardware.vcpus": REMOVE})
    assert (flag.severity, flag.key, flag.evidence["undeclared"]) == ("info", "undeclared", ["vcpus"])
    assert flag.message.startswith("The manifest does not declare vcpus:")


def test_no_hardware_at_all_names_every_part_of_it():
    (flag,) = resources({"hardware": REMOVE, "runtime_hours": REMOVE})
    assert flag.evidence["undeclared"] == ["runtime_hours", "vcpus", "ram_gb", "gpus"]


def test_a_resource_beyond_the_reference_is_said_instead_of_the_undeclared_ones():
    (flag,) = resources({"hardware.vcpus": 64, "hardware.ram_gb": REMOVE})
    assert flag.severity == "warning" and "undeclared" not in flag.evidence


# runtime_over_budget


def over_budget(tmp_path, log: str, *, changes=None, manifest=True, **settings):
    from grading.checks.context import CheckSettings

    run = run_files(tmp_path, PIZZA, 0, run_log=log)
    context = check_context(
        runs=[run],
        manifest=manifest_with(changes) if manifest else None,
        tiers={"low": [PIZZA], "all": [PIZZA, "x"], "high": ["x"]},
        settings=CheckSettings(**settings),
    )
    return flags_of(runtime_over_budget.check(context), "runtime_over_budget")


def span(first: str, last: str) -> str:
    return f"[{first}] INFO start\nEpoch 1 loss=0.3\n[{last}] INFO done\n"


def test_a_run_within_its_declared_runtime_is_not_over_budget(tmp_path):
    assert over_budget(tmp_path, span("2026-11-30 10:00:00", "2026-12-01 06:00:00")) == {}


def test_with_no_tolerance_a_run_of_exactly_the_budget_passes_and_one_second_more_does_not(tmp_path):
    assert over_budget(tmp_path / "a", span("2026-11-30 10:00:00", "2026-12-01 10:00:00"), runtime_tolerance=0) == {}
    flags = over_budget(tmp_path / "b", span("2026-11-30 10:00:00", "2026-12-01 10:00:01"), runtime_tolerance=0)
    assert flags["logs"].evidence["limit_hours"] == 24 and flags["logs"].evidence["runs"][0]["hours"] == 24.0


def test_the_tolerance_lets_a_run_exceed_the_declared_runtime_by_its_share(tmp_path):
    changes = {"runtime_hours": 10}
    within = span("2026-11-30 00:00:00", "2026-11-30 14:54:00")
    beyond = span("2026-11-30 00:00:00", "2026-11-30 15:06:00")
    assert over_budget(tmp_path / "a", within, changes=changes, runtime_tolerance=0.5) == {}
    flag = over_budget(tmp_path / "b", beyond, changes=changes, runtime_tolerance=0.5)["logs"]
    assert flag.evidence["limit_hours"] == 15 and flag.evidence["budget_hours"] == 10
    assert "more than the 10 h declared (tolerance 50%), longest 15.1 h" in flag.message


def test_the_over_budget_flag_names_the_log_its_first_and_last_stamps_and_its_tiers(tmp_path):
    flag = over_budget(tmp_path, span("2026-11-30T10:00:00", "2026-12-02T10:00:00"))["logs"]
    (found,) = flag.evidence["runs"]
    assert found["run"].endswith(f"/{PIZZA}_00000000/run.log") and found["competition"] == PIZZA
    assert (found["first"], found["last"], found["hours"]) == ("2026-11-30T10:00:00", "2026-12-02T10:00:00", 48.0)
    assert (flag.severity, flag.tiers, flag.evidence["total"]) == ("warning", ["low", "all"], 1)
    assert found["run"] in flag.message


def test_without_a_manifest_the_standard_24_hours_are_the_budget(tmp_path):
    flag = over_budget(tmp_path, span("2026-11-30 00:00:00", "2026-12-01 03:00:00"), manifest=False)["logs"]
    assert flag.evidence["budget_hours"] == 24 and "the 24 h standard" in flag.message


def test_an_undeclared_runtime_falls_back_to_the_standard(tmp_path):
    flags = over_budget(tmp_path, span("2026-11-30 00:00:00", "2026-12-01 03:00:00"), changes={"runtime_hours": REMOVE})
    assert set(flags) == {"logs"} and "standard" in flags["logs"].message


def test_the_longest_runs_come_first_and_at_most_ten_are_shown(tmp_path):
    from grading.checks.context import CheckSettings

    runs = [
        run_files(tmp_path, PIZZA, seed, run_log=span("2026-11-01 00:00:00", f"2026-11-{3 + seed:02d} 00:00:00"))
        for seed in range(12)
    ]
    (flag,) = runtime_over_budget.check(check_context(runs=runs, settings=CheckSettings()))
    assert flag.evidence["total"] == 12 and len(flag.evidence["runs"]) == 10
    assert [r["hours"] for r in flag.evidence["runs"][:2]] == [13 * 24.0, 12 * 24.0]
    assert "12 run(s) log more" in flag.message


def test_a_log_without_time_stamps_or_with_one_is_not_measured(tmp_path):
    assert over_budget(tmp_path / "a", "no stamps here\n") == {}
    assert over_budget(tmp_path / "b", "[2026-11-30 10:00:00] only one\n") == {}


def test_impossible_dates_are_not_time_stamps(tmp_path):
    log = (
        "[2026-11-30 10:00:00] start\n[2026-13-45 99:00:00] garbage\n[2026-11-30 11:00:00] end\n[2099-02-30 10:00:00]\n"
    )
    assert over_budget(tmp_path, log, runtime_tolerance=0, changes={"runtime_hours": 1}) == {}


def test_only_the_head_and_tail_of_a_long_log_are_read(tmp_path):
    filler = "loss=0.1 " * 20 + "\n"  # 181 bytes; 2000 of them are well past 64 KiB
    log = "[2026-11-30 10:00:00] start\n" + filler * 2000 + "[2027-06-01 00:00:00] in the middle\n" + filler * 2000
    assert over_budget(tmp_path, log) == {}
    assert set(over_budget(tmp_path / "short", "[2026-11-30 10:00:00] start\n[2027-06-01 00:00:00] end\n")) == {"logs"}


def test_a_declared_runtime_of_exactly_the_standard_is_not_over_budget():
    assert runtime_over_budget.check(check_context(manifest=manifest_with({"runtime_hours": 24}))) == []


def test_a_declared_runtime_above_the_standard_names_both():
    (flag,) = runtime_over_budget.check(check_context(manifest=manifest_with({"runtime_hours": 24.5})))
    assert flag.key == "manifest" and flag.message == (
        "The manifest declares 24.5 h per run, above the board's standard of 24 h."
    )
    assert flag.evidence == {"file": "manifest.json", "runtime_hours": 24.5, "reference_hours": 24.0}


def test_runs_whose_folder_is_gone_are_not_measured():
    assert runtime_over_budget.check(check_context(runs=runs_without_files({PIZZA: 2}))) == []


def test_a_declared_runtime_of_zero_hours_is_called_declared(tmp_path):
    flag = over_budget(tmp_path, span("2026-11-30 10:00:00", "2026-11-30 11:00:00"), changes={"runtime_hours": 0})
    assert "the 0 h declared" in flag["logs"].message
