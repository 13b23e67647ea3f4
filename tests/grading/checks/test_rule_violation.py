"""rule_violation: hand-written answers, undeclared model APIs, forbidden resources."""

import pytest

from competitions.demo.runs import default_manifest
from grading.checks import rule_violation
from tests.grading.checks.builders import (
    DEFAULT,
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    flags_of,
    manifest_with,
    run_files,
)

CALLS_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\nkey = os.environ['ANTHROPIC_API_KEY']\n"


def test_an_undeclared_model_api_is_flagged_with_its_lines(tmp_path):
    flags = flags_of(
        rule_violation.check(bundle(tmp_path, code={(PIZZA, 0): {"helper.py": CALLS_CLAUDE}})), "rule_violation"
    )
    assert set(flags) == {"model_api_anthropic"}
    assert [hit["line"] for hit in flags["model_api_anthropic"].evidence["hits"]] == [1, 3]


def test_a_declared_model_api_is_not(tmp_path):
    manifest = default_manifest(split="low")
    manifest["llms"] = ["claude-3-5-sonnet"]
    assert (
        rule_violation.check(bundle(tmp_path, manifest=manifest, code={(PIZZA, 0): {"helper.py": CALLS_CLAUDE}})) == []
    )


def test_hand_written_predictions_and_kaggle_downloads_are_flagged(tmp_path):
    log = "I manually labelled the predictions for the hard test images\nkaggle competitions download -c pizza\n"
    flags = flags_of(rule_violation.check(bundle(tmp_path, logs={(PIZZA, 1): {"agent.log": log}})), "rule_violation")
    assert set(flags) == {"hand_written", "forbidden_resources"}


def violations(tmp_path, *, manifest=DEFAULT, logs=None, code=None, cid=PIZZA):
    run = run_files(tmp_path, cid, 0, logs=logs, code=code)
    context = check_context(runs=[run], manifest=manifest, tiers={"low": [PIZZA, SPOOKY], "all": [PIZZA, SPOOKY]})
    return flags_of(rule_violation.check(context), "rule_violation")


def test_a_model_api_flag_names_the_provider_the_file_and_the_line(tmp_path):
    flag = violations(tmp_path, code={"agent/llm.py": "x = 1\nfrom openai import OpenAI\n"})["model_api_openai"]
    label = f"runs/group/{PIZZA}_00000000/code/agent/llm.py"
    assert (flag.severity, flag.tiers) == ("blocking", ["low", "all"])
    assert flag.message == (
        "calls of openai's model API, which the manifest does not declare (llms, "
        f"disclosures.other_models): 1 line(s) in 1 file(s), first {label} line 2."
    )
    excerpt = ["1: x = 1", "2: from openai import OpenAI"]
    (hit,) = flag.evidence["hits"]
    assert {k: v for k, v in hit.items() if k != "match"} == {"file": label, "line": 2, "excerpt": excerpt}
    start, end = hit["match"]  # where the review page marks it, in the hit line's text
    assert "openai" in "from openai import OpenAI"[start:end].lower()
    assert (flag.evidence["competitions"], flag.evidence["competitions_total"]) == ([PIZZA], 1)


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"llms": ["gpt-4o-2024-08-06"]}, "import openai"),
        ({"llms": ["o1-preview"]}, "OPENAI_API_KEY"),
        ({"llms": ["gemini-1.5-pro"]}, "import google.generativeai"),
        ({"disclosures.other_models": ["mistral-large-latest"]}, "from mistralai import Mistral"),
        ({"llms": ["DeepSeek-R1"]}, "https://api.deepseek.com"),
    ],
)
def test_a_provider_declared_in_the_llms_or_other_models_may_be_called(tmp_path, changes, line):
    assert violations(tmp_path, manifest=manifest_with(changes), code={"a.py": line}) == {}


def test_declaring_one_provider_does_not_declare_another(tmp_path):
    flags = violations(
        tmp_path,
        manifest=manifest_with({"llms": ["claude-3-opus"]}),
        code={"a.py": "import anthropic\nimport cohere\n"},
    )
    assert set(flags) == {"model_api_cohere"}


def test_without_a_manifest_every_model_api_is_undeclared(tmp_path):
    assert set(violations(tmp_path, manifest=None, logs={"a.log": "POST https://api.anthropic.com/v1/messages\n"})) == {
        "model_api_anthropic"
    }


def test_a_vision_model_whose_name_contains_o1_does_not_declare_openai(tmp_path):
    manifest = manifest_with({"disclosures.other_models": ["yolo11n"]})
    assert set(violations(tmp_path, manifest=manifest, code={"a.py": "import openai\n"})) == {"model_api_openai"}


@pytest.mark.parametrize("name", ["gpt4o", "openai/gpt-4o-mini", "o3-mini", "ChatGPT-4o-latest"])
def test_a_provider_word_at_the_start_of_a_token_declares_it(tmp_path, name):
    manifest = manifest_with({"llms": [name]})
    assert violations(tmp_path, manifest=manifest, code={"a.py": "import openai\n"}) == {}


@pytest.mark.parametrize("name", ["o11-net", "gptneo-local", "autogpt"])
def test_a_provider_word_inside_a_longer_word_declares_nothing(tmp_path, name):
    manifest = manifest_with({"disclosures.other_models": [name]})
    assert set(violations(tmp_path, manifest=manifest, code={"a.py": "import openai\n"})) == {"model_api_openai"}


def test_hand_written_answers_and_kaggle_access_name_what_they_are(tmp_path):
    flags = violations(
        tmp_path,
        logs={"agent.log": "ok\nhardcoded the test labels for ids 1-40\n"},
        code={"fetch.sh": "kaggle competitions download -c random-acts-of-pizza\n"},
    )
    assert flags["hand_written"].message.startswith("hand-written predictions or labels: 1 line(s) in 1 file(s), ")
    assert flags["hand_written"].evidence["hits"][0]["line"] == 2
    assert flags["forbidden_resources"].message.startswith("Kaggle's API, data or leaderboard reached during the run:")
    assert flags["forbidden_resources"].evidence["hits"][0]["file"].endswith("/code/fetch.sh")


def test_honest_code_that_uses_kaggle_data_locally_and_labels_breaks_no_rule(tmp_path):
    code = "labels = train['label']\npreds = model.predict(X)\n# data from kaggle, mounted at /home/data\n"
    assert violations(tmp_path, code={"main.py": code}) == {}
