"""The seed rule of SPEC section 2, one case per clause of RULE_TEXT."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass

import pytest

from grading.bundles import RULE_TEXT, BundleError, assign_seeds, read_bundle

from .builders import (
    GROUP,
    KNOWN,
    UUID_A,
    UUID_B,
    UUID_C,
    bundle_files,
    leftovers,
    manifest,
    run_files,
    write_zip,
)


@dataclass(frozen=True)
class R:
    competition_id: str
    run_group: str
    run_id: str
    metadata_seed: int | None = None


def seeds(runs, manifest_seeds=None) -> dict[tuple[str, str], tuple[int, str]]:
    return {(s.run_group, s.run_id): (s.seed, s.source) for s in assign_seeds(runs=runs, manifest_seeds=manifest_seeds)}


def test_the_rule_text_is_the_function_docstring():
    assert inspect.getdoc(assign_seeds) == RULE_TEXT
    assert "the i-th of them, counting from\n   0, is seed i" in RULE_TEXT


def test_runs_of_a_competition_are_counted_by_group_name_then_run_id_from_zero():
    runs = [R("c", "g2", "c_a"), R("c", "g1", "c_b"), R("c", "g1", "c_a"), R("d", "g2", "d_z")]
    assert seeds(runs) == {
        ("g1", "c_a"): (0, "order"),
        ("g1", "c_b"): (1, "order"),
        ("g2", "c_a"): (2, "order"),
        ("g2", "d_z"): (0, "order"),
    }


def test_explicit_seeds_from_metadata_and_manifest_are_kept():
    runs = [R("c", "g", "c_a", metadata_seed=2), R("c", "g", "c_b"), R("c", "g", "c_c")]
    assert seeds(runs, {"g/c_b": 0}) == {
        ("g", "c_a"): (2, "metadata"),
        ("g", "c_b"): (0, "manifest"),
        ("g", "c_c"): (1, "order"),
    }


def test_a_manifest_seed_may_be_keyed_by_run_id_alone():
    assert seeds([R("c", "g", "c_a"), R("c", "g", "c_b")], {"c_a": 1}) == {
        ("g", "c_a"): (1, "manifest"),
        ("g", "c_b"): (0, "order"),
    }


def test_counted_seeds_skip_numbers_explicit_seeds_hold():
    runs = [
        R("c", "g", "c_a"),
        R("c", "g", "c_b"),
        R("c", "g", "c_c", metadata_seed=0),
        R("c", "g", "c_d", metadata_seed=2),
    ]
    assert seeds(runs) == {
        ("g", "c_a"): (1, "order"),
        ("g", "c_b"): (3, "order"),
        ("g", "c_c"): (0, "metadata"),
        ("g", "c_d"): (2, "metadata"),
    }


def test_it_refuses_two_runs_of_a_competition_claiming_one_seed():
    with pytest.raises(BundleError) as caught:
        assign_seeds(runs=[R("c", "g", "c_a", metadata_seed=1), R("c", "h", "c_b")], manifest_seeds={"h/c_b": 1})
    assert caught.value.code == "seed_conflict"
    assert caught.value.message == "c: runs/g/c_a and runs/h/c_b both claim seed 1"


def test_it_refuses_metadata_and_manifest_that_disagree():
    with pytest.raises(BundleError) as caught:
        assign_seeds(runs=[R("c", "g", "c_a", metadata_seed=1)], manifest_seeds={"c_a": 2})
    assert caught.value.message == "runs/g/c_a: metadata.json says seed 1 but manifest.json says 2"


def test_explicit_seeds_come_from_a_bundle_s_metadata_and_manifest(tmp_path):
    a, b, c = (f"spaceship-titanic_{u}" for u in (UUID_A, UUID_B, UUID_C))
    files = bundle_files(
        manifest_data=manifest(run_seeds={f"{GROUP}/{c}": 0}),
        **run_files("spaceship-titanic", UUID_C, submission=None),
        **{f"runs/{GROUP}/metadata.json": json.dumps({"runs": {b: {"seed": 5}}}).encode()},
    )
    bundle = read_bundle(
        archive=write_zip(tmp_path / "b.zip", files), target=tmp_path / "out", known_competition_ids=KNOWN
    )
    assert [(s.run_id, s.seed, s.source) for s in bundle.seeds] == [
        (c, 0, "manifest"),
        (a, 1, "order"),
        (b, 5, "metadata"),
    ]


def test_a_seed_conflict_in_a_bundle_leaves_nothing_behind(tmp_path):
    a = f"spaceship-titanic_{UUID_A}"
    files = bundle_files(
        manifest_data=manifest(run_seeds={a: 1}),
        **{f"runs/{GROUP}/metadata.json": json.dumps({"runs": {a: {"seed": 0}}}).encode()},
    )
    with pytest.raises(BundleError) as caught:
        read_bundle(
            archive=write_zip(tmp_path / "b.zip", files),
            target=tmp_path / "out" / "b",
            known_competition_ids=KNOWN,
        )
    assert caught.value.code == "seed_conflict"
    assert leftovers(tmp_path / "out") == []
