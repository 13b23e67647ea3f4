"""test_set_feedback: declared, or seen in logs and code; never on an honest agent's ordinary output."""

from competitions.demo.runs import default_manifest
from grading.checks import test_set_feedback
from tests.grading.checks.builders import PIZZA, SPOOKY, bundle, flags_of


def test_a_declared_feedback_is_blocking(tmp_path):
    manifest = default_manifest(split="low")
    manifest["disclosures"]["test_set_feedback"] = True
    flags = flags_of(test_set_feedback.check(bundle(tmp_path, manifest=manifest)), "test_set_feedback")
    assert flags["declared"].severity == "blocking"


def test_scores_and_medals_coming_back_during_the_run_are_found_with_their_lines(tmp_path):
    log = "\n".join(f"[2026-11-30 10:{i:02d}:00] step {i}: training loss 0.{i}" for i in range(40))
    log += '\n{"result": "Submission is valid. score: 0.9312"}\nprivate leaderboard score: 0.9312\nafter\n'
    flags = flags_of(test_set_feedback.check(bundle(tmp_path, logs={(PIZZA, 1): {"agent.log": log}})),
                     "test_set_feedback")
    assert set(flags) == {"validate_score", "test_score"}
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
    flags = flags_of(test_set_feedback.check(bundle(tmp_path, code={(SPOOKY, 0): {"search.py": harness}})),
                     "test_set_feedback")
    assert {"private_paths", "grading_calls", "harness_feedback", "grader_fields"} <= set(flags)
    assert flags["grading_calls"].evidence["total"] == 3
    assert flags["private_paths"].evidence["hits"][0]["line"] == 2


def test_hits_are_capped_but_counted(tmp_path):
    log = "gold_medal: True\n" * 50
    flags = flags_of(test_set_feedback.check(bundle(tmp_path, logs={(PIZZA, 0): {"a.log": log}, (PIZZA, 2): {"b.log": log}})),
                     "test_set_feedback")
    evidence = flags["grader_fields"].evidence
    assert evidence["total"] == 100 and evidence["files"] == 2 and len(evidence["hits"]) == 5
