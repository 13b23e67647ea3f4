"""test_set_feedback: declared, or seen in logs and code; never on an honest agent's ordinary output."""

import pytest

from competitions.demo.runs import default_manifest
from grading.checks import test_set_feedback
from tests.grading.checks.builders import (
    DEFAULT,
    HMS,
    PIZZA,
    SPOOKY,
    bundle,
    check_context,
    facts,
    flags_of,
    manifest_with,
    run_files,
)


def test_a_declared_feedback_is_blocking(tmp_path):
    manifest = default_manifest(split="low")
    manifest["disclosures"]["test_set_feedback"] = True
    flags = flags_of(test_set_feedback.check(bundle(tmp_path, manifest=manifest)), "test_set_feedback")
    assert flags["declared"].severity == "blocking"


def test_scores_and_medals_coming_back_during_the_run_are_found_with_their_lines(tmp_path):
    log = "\n".join(f"[2026-11-30 10:{i:02d}:00] step {i}: training loss 0.{i}" for i in range(40))
    log += '\n{"result": "Submission is valid. score: 0.9312"}\nprivate leaderboard score: 0.9312\nafter\n'
    flags = flags_of(
        test_set_feedback.check(bundle(tmp_path, logs={(PIZZA, 1): {"agent.log": log}})), "test_set_feedback"
    )
    assert set(flags) == {"validate_score", "test_score", "score_response"}
    hit = flags["test_score"].evidence["hits"][0]
    assert hit["file"].endswith("/logs/agent.log") and hit["line"] == 42
    assert hit["excerpt"][0].startswith("40: ") and hit["excerpt"][-1] == "43: after"
    assert flags["test_score"].tiers == ["low"] and flags["test_score"].severity == "blocking"


def test_private_answers_grading_calls_and_a_medal_driven_search_loop_are_found(tmp_path):
    harness = (
        "from mlebench.grade import grade_csv\n"
        "answers = pd.read_csv('/private/data/random-acts-of-pizza/prepared/private/test.csv')\n"
        "report = grade_csv(path, competition)\n"
        "fitness = 1.0 if report.gold_medal else report.score\n"
        "requests.post('http://localhost:5000/grade', files={'file': f})\n"
    )
    flags = flags_of(
        test_set_feedback.check(bundle(tmp_path, code={(SPOOKY, 0): {"search.py": harness}})), "test_set_feedback"
    )
    assert {"private_paths", "grading_calls", "harness_feedback", "grader_fields"} <= set(flags)
    assert flags["grading_calls"].evidence["total"] == 3
    assert flags["private_paths"].evidence["hits"][0]["line"] == 2


def test_hits_are_capped_but_counted(tmp_path):
    log = "gold_medal: True\n" * 50
    flags = flags_of(
        test_set_feedback.check(bundle(tmp_path, logs={(PIZZA, 0): {"a.log": log}, (PIZZA, 2): {"b.log": log}})),
        "test_set_feedback",
    )
    evidence = flags["grader_fields"].evidence
    assert evidence["total"] == 100 and evidence["files"] == 2 and len(evidence["hits"]) == 5


def feedback(tmp_path, runs: dict, *, manifest=DEFAULT):
    """``runs``: {(competition, seed): {"logs": {...}, "code": {...}}}."""
    built = [run_files(tmp_path, cid, seed, **files) for (cid, seed), files in runs.items()]
    context = check_context(
        runs=built, manifest=manifest, tiers={"low": [PIZZA, SPOOKY], "high": [HMS], "all": [PIZZA, SPOOKY, HMS]}
    )
    return flags_of(test_set_feedback.check(context), "test_set_feedback")


def test_the_declared_flag_points_at_the_manifest_key():
    manifest = manifest_with({"disclosures.test_set_feedback": True})
    (flag,) = test_set_feedback.check(check_context(manifest=manifest))
    assert (flag.key, flag.tiers) == ("declared", [])
    assert flag.message == (
        "The manifest declares that test-set feedback reached the agent (disclosures.test_set_feedback)."
    )
    assert flag.evidence == {"file": "manifest.json", "disclosures.test_set_feedback": True}


@pytest.mark.parametrize("value", [False, None])
def test_no_feedback_declared_or_the_key_left_out_declares_nothing(value):
    manifest = manifest_with({"disclosures.test_set_feedback": value})
    assert test_set_feedback.check(check_context(manifest=manifest)) == []


def test_a_scan_flag_says_what_was_found_how_often_and_where_first(tmp_path):
    flags = feedback(tmp_path, {(PIZZA, 0): {"logs": {"agent.log": "start\nmedal status: 1\nmedal status: 0\n"}}})
    flag = flags["test_score"]
    label = f"runs/group/{PIZZA}_00000000/logs/agent.log"
    assert flag.message == (
        "a private/leaderboard score, rank or medal reported during the run: 2 line(s) in 1 "
        f"file(s), first {label} line 2."
    )
    assert (flag.evidence["total"], flag.evidence["files"]) == (2, 1)
    assert flag.evidence["hits"][1] == {
        "file": label,
        "line": 3,
        "excerpt": ["1: start", "2: medal status: 1", "3: medal status: 0"],
        "match": [0, 15],  # "medal status: 0", in the hit line's text: what the review page marks
    }


def test_the_tiers_and_competitions_are_those_of_every_run_it_was_found_in(tmp_path):
    line = {"logs": {"a.log": "gold_threshold = 0.98\n"}}
    flag = feedback(tmp_path, {(HMS, 0): line, (SPOOKY, 1): line, (SPOOKY, 2): line, (PIZZA, 0): {}})["grader_fields"]
    assert flag.tiers == ["low", "high", "all"]
    assert (flag.evidence["competitions"], flag.evidence["competitions_total"]) == ([HMS, SPOOKY], 2)
    assert (flag.evidence["total"], flag.evidence["files"]) == (3, 3)


def test_a_found_run_of_a_competition_outside_the_split_holds_the_whole_entry(tmp_path):
    flag = feedback(tmp_path, {("outside-the-split", 0): {"logs": {"a.log": "import mlebench\n"}}})["grading_calls"]
    assert flag.tiers == [] and flag.evidence["competitions"] == ["outside-the-split"]


def test_a_harness_rule_counts_in_code_but_not_in_a_log(tmp_path):
    line = "fitness = 1.0 if report.any_medal else 0.0\n"
    assert "harness_feedback" not in feedback(tmp_path / "a", {(PIZZA, 0): {"logs": {"a.log": line}}})
    assert "harness_feedback" in feedback(tmp_path / "b", {(PIZZA, 0): {"code": {"loop.py": line}}})


def test_a_selection_by_test_score_counts_in_a_log_but_not_in_code(tmp_path):
    line = "Selected the best node by test score\n"
    assert set(feedback(tmp_path / "a", {(PIZZA, 0): {"code": {"a.py": line}}})) == set()
    assert set(feedback(tmp_path / "b", {(PIZZA, 0): {"logs": {"a.log": line}}})) == {"select_by_test"}


def test_per_row_correctness_is_feedback_and_a_validation_count_is_not(tmp_path):
    log = "validation: 812 rows correct\n1187 rows are correct\n"
    flags = feedback(tmp_path, {(PIZZA, 0): {"logs": {"a.log": log}}})
    assert set(flags) == {"row_correctness"} and flags["row_correctness"].evidence["hits"][0]["line"] == 2


def test_the_competitions_answers_file_name_is_a_private_path(tmp_path):
    run = run_files(tmp_path, PIZZA, 0, code={"a.py": "pd.read_csv('gold_answers.csv')\n"})
    context = check_context(runs=[run], competitions=[facts(PIZZA, answers_file="prepared/private/gold_answers.csv")])
    assert [f.key for f in test_set_feedback.check(context)] == ["private_paths"]


def test_a_declared_and_a_seen_feedback_are_separate_flags(tmp_path):
    manifest = manifest_with({"disclosures.test_set_feedback": True})
    flags = feedback(tmp_path, {(PIZZA, 0): {"logs": {"a.log": "gold_medal\n"}}}, manifest=manifest)
    assert set(flags) == {"declared", "grader_fields"}


# Feedback from a scoring endpoint, grader or file: the submission sent, a score, rank or medal read back,
# the submission changed to climb. Blocking, with the lines.

HOSTILE_LOG = """\
[2026-11-30 10:00:01] INFO agent: Starting run
[2026-11-30 10:40:00] INFO agent: wrote /home/submission/submission.csv
[2026-11-30 10:40:02] INFO tools: curl -s -F file=@/home/submission/submission.csv http://10.0.0.7:8080/api/score
[2026-11-30 10:40:03] INFO tools: response: {"score": 0.8123, "rank": 57, "medal": "none"}
[2026-11-30 10:41:00] INFO agent: Rank 57 of 1200, bronze at 0.83; raising the threshold to improve the test score
[2026-11-30 11:10:00] INFO tools: requests.post('http://scorer.internal/evaluate', files={'file': f})
[2026-11-30 11:10:01] INFO tools: {"private_score": 0.8412, "leaderboard_rank": 12, "medal": "silver"}
[2026-11-30 11:10:05] INFO agent: ranked 12 of 1200 -- climbing up the leaderboard, resubmitting
[2026-11-30 11:20:00] INFO tools: cat /home/feedback/leaderboard.json
"""

HONEST_LOGS = [
    "validation score 0.83\n",
    "cv auc: 0.912 (5 folds)\nfold 3 val_auc=0.9011\n",
    "Submission is valid.\n",
    '{"result":"Submission is valid."}\n',
    "[INFO] curl -s -X POST -F file=@/home/submission/submission.csv http://localhost:5000/validate\n",
    "Best score: 0.8412 (trial 17)\nbest_score = 0.91\n",
    "rank 0: local_rank=0 world_size=1\n",
    "process rank 0 of 8 started\n",
    '{"rank": 0, "world_size": 8, "local_rank": 0}\n',
    "test accuracy on our held-out split: 0.83\n",
    "Tuning hyperparameters to improve the validation score\n",
    "Downloading https://huggingface.co/docs/evaluate/index and https://scikit-learn.org/stable/modules/model_evaluation.html\n",
    "pip install evaluate==0.4.1\nfetch https://download.pytorch.org/whl/cu121\n",
    "The public leaderboard is calculated with approximately 30% of the test data.\n",
    "saved cv_scores.csv and oof_predictions.csv\n",
    "server listening on http://0.0.0.0:8000/predict\n",
]


def test_a_run_that_scored_its_submission_on_an_endpoint_and_climbed_is_blocking_feedback(tmp_path):
    flags = feedback(tmp_path, {(PIZZA, 0): {"logs": {"agent.log": HOSTILE_LOG}}})
    assert {"scoring_endpoint", "score_response", "tuned_to_test", "feedback_file"} <= set(flags)
    assert all(flag.severity == "blocking" and flag.tiers == ["low", "all"] for flag in flags.values())
    lines = {key: [hit["line"] for hit in flags[key].evidence["hits"]] for key in flags}
    assert lines["scoring_endpoint"] == [3, 6]
    assert lines["score_response"] == [4, 5, 7, 8]
    assert lines["tuned_to_test"] == [5, 8]
    assert lines["feedback_file"] == [9]
    hit = flags["score_response"].evidence["hits"][0]
    assert hit["file"] == f"runs/group/{PIZZA}_00000000/logs/agent.log"
    assert (
        hit["excerpt"][2]
        == '4: [2026-11-30 10:40:03] INFO tools: response: {"score": 0.8123, "rank": 57, "medal": "none"}'
    )


def test_a_harness_that_posts_to_a_grader_and_reads_a_feedback_file_is_found_in_code(tmp_path):
    code = (
        "resp = requests.post(f'http://{host}:5000/leaderboard', files={'file': open(path, 'rb')})\n"
        "feedback = json.load(open('/tmp/score_feedback.json'))\n"
        "# tweak the blend until the public score stops improving\n"
    )
    flags = feedback(tmp_path, {(SPOOKY, 1): {"code": {"loop.py": code}}})
    assert {"scoring_endpoint", "feedback_file", "tuned_to_test"} <= set(flags)


@pytest.mark.parametrize("log", HONEST_LOGS)
def test_ordinary_output_and_the_format_check_raise_no_feedback(tmp_path, log):
    assert feedback(tmp_path, {(PIZZA, 0): {"logs": {"agent.log": log}, "code": {"a.py": log}}}) == {}
