"""NaN scores and refusals of real graders, end to end: a file on disk graded into an MLE-bench report.

MLE-bench counts a NaN score as a valid submission that earns nothing (every comparison with NaN is
false), and writes it as ``NaN`` in the report's JSON; a grader that raises makes the file invalid.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from grading.engine.medals import read_leaderboard
from grading.engine.registry import GraderRef
from grading.engine.report import build_run_group_report, grade_submission

from .frames import DATA, GRADERS

PATENT = "us-patent-phrase-to-phrase-matching"
UW = "uw-madison-gi-tract-image-segmentation"
NO_MEDAL = ("any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median")


def graded(tmp_path: Path, competition: str, *, answers: str, submission: str):
    answers_path, submission_path = tmp_path / "answers.csv", tmp_path / "submission.csv"
    answers_path.write_text(answers)
    submission_path.write_text(submission)
    entry = GRADERS[competition]
    return grade_submission(
        competition_id=competition,
        submission_path=submission_path,
        answers_path=answers_path,
        grader=GraderRef(entry["grader"], entry["params"]),
        leaderboard_scores=read_leaderboard(DATA / "leaderboards" / f"{competition}.csv"),
    )


PATENT_ANSWERS = (
    "id,anchor,target,context,score\n"
    "37d61fd2272659b1,abatement,abatement of pollution,A47,0.5\n"
    "7b9652b17b68b7a4,abatement,act of abating,A47,0.75\n"
    "36d72442aefd8232,abatement,active catalyst,A47,0.25\n"
)


def test_constant_patent_scores_give_a_valid_nan_report_without_medals(tmp_path):
    report = graded(
        tmp_path,
        PATENT,
        answers=PATENT_ANSWERS,
        submission="id,score\n37d61fd2272659b1,0.5\n7b9652b17b68b7a4,0.5\n36d72442aefd8232,0.5\n",
    )
    assert report.valid_submission is True and math.isnan(report.score)
    assert not any(getattr(report, flag) for flag in NO_MEDAL)
    written = build_run_group_report([report]).to_json(with_reason=False)
    assert '"score": NaN' in written
    assert json.loads(written)["total_valid_submissions"] == 1


def test_an_empty_patent_score_makes_the_report_invalid_with_a_reason(tmp_path):
    report = graded(
        tmp_path,
        PATENT,
        answers=PATENT_ANSWERS,
        submission="id,score\n37d61fd2272659b1,0.4\n7b9652b17b68b7a4,\n36d72442aefd8232,0.2\n",
    )
    assert (report.valid_submission, report.score) == (False, None)
    assert "row 2 (id '7b9652b17b68b7a4')" in report.reason
    assert not any(getattr(report, flag) for flag in NO_MEDAL)


def test_a_uw_madison_file_with_only_the_header_is_valid_with_a_nan_score(tmp_path):
    report = graded(
        tmp_path,
        UW,
        answers=(
            "id,class,predicted,image_height,image_width\n"
            "case1_day0_slice_0001,large_bowel,1 4,4,4\n"
            "case1_day0_slice_0001,small_bowel,,4,4\n"
            "case1_day0_slice_0001,stomach,,4,4\n"
        ),
        submission="id,class,predicted\n",
    )
    assert report.reason is None
    assert report.valid_submission is True and math.isnan(report.score)
    assert not any(getattr(report, flag) for flag in NO_MEDAL)
