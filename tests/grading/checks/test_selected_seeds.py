"""selected_seeds: a run group's metadata.json lists runs the bundle does not hold (the best of more, kept)."""

import json

from grading.checks import selected_seeds
from tests.grading.checks.builders import PIZZA, SPOOKY, check_context, run_files


def _group(tmp_path, *, seeds=(0, 1, 2), listed=None, metadata=True):
    runs = [run_files(tmp_path, cid, seed, submission="id,x\n1,0\n") for cid in (PIZZA, SPOOKY) for seed in seeds]
    if metadata:
        names = listed if listed is not None else [run.folder.name for run in runs]
        (tmp_path / "runs" / "group" / "metadata.json").write_text(
            json.dumps({"run_group": "group", "runs": {name: {"success": True} for name in names}})
        )
    return check_context(runs=runs, tiers={"low": [PIZZA, SPOOKY]})


def test_every_listed_run_uploaded_raises_nothing(tmp_path):
    assert selected_seeds.check(_group(tmp_path)) == []


def test_no_metadata_raises_nothing(tmp_path):
    assert selected_seeds.check(_group(tmp_path, metadata=False)) == []


def test_runs_listed_but_left_out_block_and_name_them(tmp_path):
    held = [f"{cid}_{seed:08x}" for cid in (PIZZA, SPOOKY) for seed in (0, 1, 2)]
    left_out = [f"{PIZZA}_{seed:08x}" for seed in range(3, 10)]
    [flag] = selected_seeds.check(_group(tmp_path, listed=held + left_out))
    assert (flag.code, flag.severity, flag.key) == ("selected_seeds", "blocking", "runs/group")
    assert "lists 13 runs but the bundle holds 6" in flag.message
    assert "7 runs were made and not uploaded" in flag.message and "and 2 more" in flag.message
    assert flag.evidence["missing_runs"] == sorted(left_out)
    assert flag.evidence["missing_per_competition"] == {PIZZA: 7}
    assert flag.tiers == ["low"]


def test_unreadable_metadata_is_validation_s_to_say_not_a_crash(tmp_path):
    context = _group(tmp_path, metadata=False)
    (tmp_path / "runs" / "group" / "metadata.json").write_text("{not json")
    assert selected_seeds.check(context) == []
