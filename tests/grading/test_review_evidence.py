"""A flag's evidence as a maintainer reads it: one number per line, the match marked, long lines cut around it."""

from grading.checks.base import FlagData
from grading.evidence import SHOWN_CHARS, evidence_blocks
from grading.services.finish import flag_fingerprint


def _hit(evidence: dict) -> dict:
    (block,) = [b for b in evidence_blocks(evidence) if b["kind"] == "hits"]
    return block["hits"][0]


SCANNED = {
    "total": 1,
    "files": 1,
    "hits": [
        {
            "file": "runs/g/spooky_0/logs/agent.log",
            "line": 9,
            "excerpt": ["7: epoch 1", "8: epoch 2", "9: got gold_medal: True", "10: done", "11: bye"],
            "match": [4, 14],
        }
    ],
}


def test_each_line_has_its_own_number_once_and_the_hit_line_is_the_one_named():
    hit = _hit(SCANNED)
    assert [(line["number"], line.get("text")) for line in hit["lines"]] == [
        (7, "epoch 1"),
        (8, "epoch 2"),
        (9, "got gold_medal: True"),
        (10, "done"),
        (11, "bye"),
    ]
    assert hit["line"] == 9 and hit["hit_line"]["number"] == 9 and hit["context_range"] == "7–11"
    assert (hit["hit_line"]["before"], hit["hit_line"]["match"], hit["hit_line"]["after"]) == (
        "got ",
        "gold_medal",
        ": True",
    )


def test_a_long_line_is_cut_around_the_match_and_the_match_stays_whole():
    text = "a" * 2000 + "private leaderboard score: 0.97" + "b" * 2000
    start = 2000
    hit = _hit({"hits": [{"file": "x.log", "line": 1, "excerpt": [f"1: {text}"], "match": [start, start + 31]}]})
    line = hit["hit_line"]
    assert line["match"] == "private leaderboard score: 0.97"
    assert line["before"].startswith("…") and line["after"].endswith("…")
    assert len(line["before"]) + len(line["match"]) + len(line["after"]) <= SHOWN_CHARS + 2
    assert not hit["context"]  # one line: nothing to expand


def test_evidence_without_the_match_place_shows_the_line_unmarked_and_a_bad_place_is_ignored():
    for match in (None, [5, 400], [3, 1], ["a", "b"], [True, 2]):
        hit = _hit({"hits": [{"file": "x.log", "line": 2, "excerpt": ["1: a", "2: gold_medal"], "match": match}]})
        assert hit["hit_line"]["before"] == "gold_medal" and hit["hit_line"]["match"] == ""
        assert [line["number"] for line in hit["lines"]] == [1, 2]


def test_text_that_only_looks_numbered_is_not_taken_for_line_numbers():
    hit = _hit({"hits": [{"file": "x.log", "line": 41, "excerpt": ["step 12: validating", "retrying"]}]})
    assert [line["number"] for line in hit["lines"]] == [None, None] and hit["hit_line"] is None
    assert [line["text"] for line in hit["lines"]] == ["step 12: validating", "retrying"]


def test_where_the_match_is_shown_does_not_reopen_a_decision():
    def flag(evidence):
        return FlagData(code="test_set_feedback", severity="blocking", key="k", message="m", evidence=evidence)

    without = {"hits": [{k: v for k, v in SCANNED["hits"][0].items() if k != "match"}], "total": 1}
    with_match = {"hits": [SCANNED["hits"][0]], "total": 1}
    changed = {"hits": [{**SCANNED["hits"][0], "line": 10}], "total": 1}
    assert flag_fingerprint(flag(without)) == flag_fingerprint(flag(with_match))
    assert flag_fingerprint(flag(changed)) != flag_fingerprint(flag(with_match))
