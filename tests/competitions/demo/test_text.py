"""Synthetic packs of the text group: formats, the simulated agent under the real graders, written packs."""

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from competitions.demo import Defect, generate_answers, grade, make_demo_pack, simulate_submission
from competitions.demo.csvio import write_csv
from grading.engine import csvio
from grading.engine.errors import InvalidSubmission
from grading.engine.registry import get_grader

DATA = Path(__file__).resolve().parents[3] / "competitions" / "data" / "mlebench-v1"
COMPETITIONS = {c["id"]: c for c in json.loads((DATA / "competitions.json").read_text())}
GRADERS = json.loads((DATA / "graders.json").read_text())

NQ = "tensorflow2-question-answering"
ANSWERS_COLUMNS = {
    "billion-word-imputation": ["id", "sentence"],
    "bms-molecular-translation": ["image_id", "InChI"],
    "chaii-hindi-and-tamil-question-answering": ["id", "PredictionString"],
    "multi-modal-gesture-recognition": ["Id", "Sequence"],
    NQ: [
        "document_text",
        "long_answer_candidates",
        "question_text",
        "annotations",
        "document_url",
        "example_id",
    ],
    "tweet-sentiment-extraction": ["textID", "text", "selected_text", "sentiment"],
}
TEXT = sorted(ANSWERS_COLUMNS)
ID_PATTERNS = {
    "billion-word-imputation": r"\d+",
    "bms-molecular-translation": r"[0-9a-f]{12}",
    "chaii-hindi-and-tamil-question-answering": r"[0-9a-f]{9}",
    "multi-modal-gesture-recognition": r"\d+",
    NQ: r"-?\d+",
    "tweet-sentiment-extraction": r"[0-9a-f]{10}",
}


@pytest.fixture(scope="module")
def small() -> dict:
    return {cid: generate_answers(competition_id=cid, size="small", seed=0) for cid in TEXT}


def graded(competition_id: str, answers, quality: float, *, seed: int = 1) -> float:
    submission = simulate_submission(competition_id=competition_id, answers=answers, quality=quality, seed=seed)
    return grade(competition_id=competition_id, submission=submission, answers=answers)


@pytest.mark.parametrize("competition_id", TEXT)
def test_small_answers_have_the_real_columns_and_dtypes(competition_id, small):
    data = small[competition_id]
    answers, entry = data.answers, COMPETITIONS[competition_id]
    assert list(answers.columns) == ANSWERS_COLUMNS[competition_id]
    id_column = entry["id_column"].split(" ")[0]
    assert answers[id_column].is_unique
    assert answers[id_column].astype(str).str.fullmatch(ID_PATTERNS[competition_id]).all()
    assert list(data.sample_submission.columns) == entry["submission_columns"]
    if competition_id == NQ:
        assert answers["example_id"].dtype == "int64" and len(data.sample_submission) == 2 * len(answers)
        assert data.sample_submission["example_id"].str.fullmatch(r"-?\d+_(long|short)").all()
        assert data.gold_submission is not None and len(data.gold_submission) == 2 * len(answers)
        note = answers["annotations"].iloc[0][0]
        assert set(note) >= {"yes_no_answer", "long_answer", "short_answers"}
    else:
        assert data.gold_submission is None and len(data.sample_submission) == len(answers)
        assert all(isinstance(answers[c].dtype, pd.StringDtype) for c in answers.columns if answers[c].dtype != "int64")
        assert answers[entry["submission_columns"][1]].str.len().min() > 0


@pytest.mark.parametrize("competition_id", [c for c in TEXT if c != NQ])
def test_frames_are_what_read_csv_gives_back(competition_id, small, tmp_path):
    data = small[competition_id]
    for name, frame in (("answers", data.answers), ("sample", data.sample_submission)):
        write_csv(frame, tmp_path / f"{name}.csv")
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"{name}.csv"), frame)


def test_text_payloads_look_like_the_real_ones(small):
    inchi = small["bms-molecular-translation"].answers["InChI"]
    assert inchi.str.match(r"InChI=1S/C\d+H\d+").all() and inchi.str.contains("/c").all()
    sequences = small["multi-modal-gesture-recognition"].answers["Sequence"].str.split()
    assert sequences.map(len).between(8, 20).all()
    assert sequences.map(lambda s: all(1 <= int(g) <= 20 for g in s)).all()
    tweets = small["tweet-sentiment-extraction"].answers
    assert all(span in text for span, text in zip(tweets["selected_text"], tweets["text"]))
    assert small["billion-word-imputation"].answers["sentence"].str.contains("[^\\x00-\\x7f]").any()
    chaii = small["chaii-hindi-and-tamil-question-answering"].answers["PredictionString"]
    assert chaii.str.contains("[\u0900-\u097f]").any() and chaii.str.contains("[\u0b80-\u0bff]").any()


@pytest.mark.parametrize("competition_id", TEXT)
def test_quality_one_is_perfect_and_low_quality_is_clearly_worse(competition_id, small):
    answers = small[competition_id].answers
    higher_is_better = COMPETITIONS[competition_id]["higher_is_better"]
    best, low = graded(competition_id, answers, 1.0), graded(competition_id, answers, 0.2)
    assert best == (1.0 if higher_is_better else 0.0)
    margin = (best - low) if higher_is_better else (low - best)
    assert margin > 0.05 * max(abs(best), abs(low), 1e-9)
    scores = [graded(competition_id, answers, q, seed=4) for q in (0.0, 0.3, 0.6, 0.9)]
    direction = 1 if higher_is_better else -1
    assert all(direction * (b - a) >= 0 for a, b in itertools.pairwise(scores)), scores
    assert scores[0] != scores[-1]


@pytest.mark.parametrize("competition_id", TEXT)
def test_the_sample_submission_and_a_subset_grade(competition_id, small):
    data = small[competition_id]
    grade(competition_id=competition_id, submission=data.sample_submission, answers=data.answers)
    subset = data.answers.iloc[::3].reset_index(drop=True)
    assert 0 <= graded(competition_id, subset, 0.5) < float("inf")


@pytest.mark.parametrize(
    "competition_id,defect",
    [
        ("billion-word-imputation", Defect.NAN_VALUES),
        ("multi-modal-gesture-recognition", Defect.OUT_OF_RANGE),
        ("multi-modal-gesture-recognition", Defect.NAN_VALUES),
        (NQ, Defect.OUT_OF_RANGE),
        (NQ, Defect.DUPLICATE_IDS),
        ("tweet-sentiment-extraction", Defect.MISSING_ROWS),
        ("bms-molecular-translation", Defect.WRONG_COLUMNS),
    ],
)
def test_defects_make_a_submission_invalid_where_the_rules_say_so(competition_id, defect, small):
    answers = small[competition_id].answers
    submission = simulate_submission(
        competition_id=competition_id, answers=answers, quality=0.9, seed=1, defects=[defect]
    )
    with pytest.raises(InvalidSubmission):
        grade(competition_id=competition_id, submission=submission, answers=answers)


def test_empty_cells_are_valid_where_the_metric_reads_them_as_text(small):
    for competition_id in ("bms-molecular-translation", NQ, "chaii-hindi-and-tamil-question-answering"):
        answers = small[competition_id].answers
        submission = simulate_submission(
            competition_id=competition_id, answers=answers, quality=1.0, seed=1, defects=[Defect.NAN_VALUES]
        )
        score = grade(competition_id=competition_id, submission=submission, answers=answers)
        assert score != graded(competition_id, answers, 1.0)


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_written_packs_grade_their_sample_and_gold_from_the_files(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=TEXT, size="small", n_teams=12, workers=1, layout=layout)
    for competition_id in TEXT:
        entry, folder = COMPETITIONS[competition_id], tmp_path / competition_id
        if layout == "portal":
            manifest = json.loads((folder / "pack.json").read_text())
            answers_path, sample_path = folder / manifest["answers"], folder / manifest["sample_submission"]
            gold_path = folder / manifest["gold_submission"]
        else:
            answers_path, sample_path = (
                folder / entry["answers_file"],
                folder / entry["sample_submission_file"],
            )
            gold_path = folder / entry["gold_submission_file"]
        answers = csvio.load_answers(answers_path)
        assert isinstance(answers, list if competition_id == NQ else pd.DataFrame)
        choice = GRADERS[competition_id]
        grader = get_grader(choice["grader"])
        grader(csvio.read_answers(sample_path), answers, **choice["params"])
        best = 1.0 if entry["higher_is_better"] else 0.0
        assert grader(csvio.read_answers(gold_path), answers, **choice["params"]) == best
        board = pd.read_csv(folder / "leaderboard.csv")
        assert list(board.columns) == ["rank", "score"] and len(board) == 12


def test_the_jsonl_answers_read_back_as_the_generated_records(tmp_path, small):
    make_demo_pack(out_dir=tmp_path, competition_ids=[NQ], size="small", n_teams=4, workers=1)
    records = csvio.load_answers(tmp_path / NQ / "private" / "test.jsonl")
    pd.testing.assert_frame_equal(pd.DataFrame(records), small[NQ].answers)
    submission = simulate_submission(competition_id=NQ, answers=small[NQ].answers, quality=0.6, seed=2)
    assert grade(competition_id=NQ, submission=submission, answers=small[NQ].answers) == grade(
        competition_id=NQ, submission=submission, answers=records
    )
