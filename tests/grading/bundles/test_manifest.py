"""manifest.json: required keys, types of known keys, unknown keys kept."""

from __future__ import annotations

import json

import pytest

from grading.bundles import BundleError, parse_manifest, read_bundle
from grading.bundles.manifest import Gpu

from .builders import KNOWN, bundle_files, leftovers, manifest, write_tar_gz


def refusal(data) -> BundleError:
    with pytest.raises(BundleError) as caught:
        parse_manifest(data=data)
    return caught.value


def test_it_reads_the_spec_example():
    parsed = parse_manifest(data=json.dumps(manifest()).encode())
    assert parsed.schema == "bundle-v1"
    assert parsed.agent.name == "AIDE" and parsed.agent.open_source is True and parsed.agent.commit == "abc123"
    assert parsed.llms == ("o1-preview",)
    assert parsed.benchmark.split == "split75" and parsed.benchmark.commit == "783b15af"
    assert parsed.seeds == 3 and parsed.runtime_hours == 24.0
    assert parsed.hardware.gpus == (Gpu(model="A10", memory_gb=24.0, count=1),)
    assert parsed.hardware.vcpus == 36 and parsed.hardware.ram_gb == 440.0
    assert parsed.internet_access is True
    assert parsed.disclosures.test_set_feedback is False and parsed.disclosures.other_models == ()
    assert parsed.notes == "free text" and parsed.unknown_keys == ()
    assert parsed.raw == manifest()


def test_only_schema_agent_name_and_split_are_required():
    parsed = parse_manifest(data={"schema": "bundle-v1", "agent": {"name": "A"}, "benchmark": {"split": "low"}})
    assert parsed.seeds is None and parsed.hardware.gpus == () and parsed.disclosures.test_set_feedback is None


def test_it_keeps_unknown_keys():
    data = manifest(framework="langgraph", agent={"name": "AIDE", "temperature": 0.2})
    data["hardware"]["gpus"][0]["vendor"] = "nvidia"
    parsed = parse_manifest(data=data)
    assert parsed.unknown_keys == ("framework", "agent.temperature", "hardware.gpus[0].vendor")
    assert parsed.raw["framework"] == "langgraph" and parsed.raw["agent"]["temperature"] == 0.2


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"benchmark": {"split": "lite"}},
            "manifest.json: 'benchmark.split' must be one of low, medium, high, split75; got 'lite'",
        ),
        (
            {"benchmark": {"name": "mle-bench"}},
            "manifest.json: 'benchmark.split' is required: one of low, medium, high, split75",
        ),
        (
            {"agent": {"version": "1"}},
            "manifest.json: 'agent.name' is required: the agent's name as it should appear on the leaderboard",
        ),
        ({"agent": "AIDE"}, "manifest.json: 'agent' must be an object; got 'AIDE'"),
        ({"schema": "bundle-v2"}, "manifest.json: 'schema' must be 'bundle-v1'; got 'bundle-v2'"),
        ({"seeds": "3"}, "manifest.json: 'seeds' must be a whole number from 1 to 100; got '3'"),
        ({"seeds": 0}, "manifest.json: 'seeds' must be a whole number from 1 to 100; got 0"),
        ({"seeds": True}, "manifest.json: 'seeds' must be a whole number from 1 to 100; got true"),
        ({"llms": "o1"}, "manifest.json: 'llms' must be a list of strings; got 'o1'"),
        ({"runtime_hours": -1}, "manifest.json: 'runtime_hours' must be a number from 0 to 1000; got -1"),
        ({"internet_access": "yes"}, "manifest.json: 'internet_access' must be true or false; got 'yes'"),
        (
            {"hardware": {"gpus": [{"model": "A10", "count": 0}]}},
            "manifest.json: 'hardware.gpus[0].count' must be a whole number from 1 to 10000; got 0",
        ),
        (
            {"hardware": {"gpus": [{"count": 1}]}},
            "manifest.json: 'hardware.gpus[0].model' is required: the GPU's name, e.g. 'A10'",
        ),
        (
            {"disclosures": {"test_set_feedback": "no"}},
            "manifest.json: 'disclosures.test_set_feedback' must be true or false; got 'no'",
        ),
        ({"run_seeds": {"g/c_1": -1}}, "manifest.json: 'run_seeds.g/c_1' must be a whole number from 0 to 999; got -1"),
        # Values a hostile user sends: each must be a 400 naming the key, never stored.
        (
            {"agent": {"name": "A", "source_url": "javascript:alert(1)"}},
            "manifest.json: 'agent.source_url' must be an http:// or https:// address, e.g. "
            "https://github.com/you/agent; got 'javascript:alert(1)'",
        ),
        (
            {"agent": {"name": "A", "source_url": "https:///no-host"}},
            "manifest.json: 'agent.source_url' must be an http:// or https:// address, e.g. "
            "https://github.com/you/agent; got 'https:///no-host'",
        ),
        ({"runtime_hours": 1e308}, "manifest.json: 'runtime_hours' must be a number from 0 to 1000; got 1e+308"),
        ({"seeds": 10**17}, "manifest.json: 'seeds' must be a whole number from 1 to 100; got 100000000000000000"),
        (
            {"hardware": {"vcpus": 10**9}},
            "manifest.json: 'hardware.vcpus' must be a whole number from 1 to 100000; got 1000000000",
        ),
        (
            {"agent": {"name": "A" * 201}},
            "manifest.json: 'agent.name' must be at most 200 characters; it has 201",
        ),
    ],
)
def test_it_refuses_a_wrong_manifest_key(change, message):
    error = refusal(manifest(**change))
    assert error.code == "manifest_invalid"
    assert error.message == message
    assert error.details["key"] == message.split("'")[1]


def test_it_refuses_a_wrong_manifest_key_in_a_bundle_and_leaves_nothing(tmp_path):
    archive = write_tar_gz(tmp_path / "b.tgz", bundle_files(manifest_data=manifest(benchmark={"split": "lite"})))
    with pytest.raises(BundleError) as caught:
        read_bundle(archive=archive, target=tmp_path / "out" / "bundle", known_competition_ids=KNOWN)
    assert caught.value.code == "manifest_invalid" and "'benchmark.split'" in caught.value.message
    assert leftovers(tmp_path / "out") == []


def test_it_refuses_a_missing_manifest(tmp_path):
    files = bundle_files()
    del files["manifest.json"]
    archive = write_tar_gz(tmp_path / "b.tgz", files)
    with pytest.raises(BundleError) as caught:
        read_bundle(archive=archive, target=tmp_path / "out" / "bundle", known_competition_ids=KNOWN)
    assert caught.value.code == "manifest_missing"
    assert (
        caught.value.message == "manifest.json is missing at the top of the bundle (found: runs); put it next to runs/"
    )
    assert leftovers(tmp_path / "out") == []


@pytest.mark.parametrize(
    "data, words",
    [
        (
            b'{"schema": "bundle-v1",',
            "not valid JSON: Expecting property name enclosed in double quotes at line 1",
        ),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'["bundle-v1"]', "must hold a JSON object, got a list"),
        (b'{"seeds": NaN}', "manifest.json: 'seeds' is NaN, which is not a JSON number"),
        (b'{"seeds": ' + b"7" * 4000 + b"}", "manifest.json: 'seeds' is an integer of 4000 digits"),
        (b'{"seeds": ' + b"7" * 5000 + b"}", "manifest.json: 'seeds' is an integer of 5000 digits"),
        (b'{"runtime_hours": 1e400}', "manifest.json: 'runtime_hours' is a number too large to store"),
        (b'{"notes": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "'notes[0][0][0]"),
        (b'{"x": {"y": ' + b'{"z": ' * 40 + b"1" + b"}" * 42, "more than 32 levels deep"),
    ],
)
def test_it_refuses_a_manifest_that_is_not_a_json_object(data, words):
    error = refusal(data)
    assert error.code == "manifest_not_json" and words in error.message
