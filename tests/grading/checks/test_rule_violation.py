"""rule_violation: hand-written answers, undeclared model APIs, forbidden resources."""

from competitions.demo.runs import default_manifest
from grading.checks import rule_violation
from tests.grading.checks.builders import PIZZA, bundle, flags_of

CALLS_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\nkey = os.environ['ANTHROPIC_API_KEY']\n"


def test_an_undeclared_model_api_is_flagged_with_its_lines(tmp_path):
    flags = flags_of(rule_violation.check(bundle(tmp_path, code={(PIZZA, 0): {"helper.py": CALLS_CLAUDE}})),
                     "rule_violation")
    assert set(flags) == {"model_api_anthropic"}
    assert [hit["line"] for hit in flags["model_api_anthropic"].evidence["hits"]] == [1, 3]


def test_a_declared_model_api_is_not(tmp_path):
    manifest = default_manifest(split="low")
    manifest["llms"] = ["claude-3-5-sonnet"]
    assert rule_violation.check(bundle(tmp_path, manifest=manifest, code={(PIZZA, 0): {"helper.py": CALLS_CLAUDE}})) == []


def test_hand_written_predictions_and_kaggle_downloads_are_flagged(tmp_path):
    log = "I manually labelled the predictions for the hard test images\nkaggle competitions download -c pizza\n"
    flags = flags_of(rule_violation.check(bundle(tmp_path, logs={(PIZZA, 1): {"agent.log": log}})), "rule_violation")
    assert set(flags) == {"hand_written", "forbidden_resources"}
