"""runtime_over_budget, nonstandard_resources, benchmark_version: the manifest and the logs' time stamps."""

from competitions.demo.runs import default_manifest
from grading.checks import benchmark_version, nonstandard_resources, runtime_over_budget
from tests.grading.checks.builders import PIZZA, bundle, flags_of, timestamps


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
