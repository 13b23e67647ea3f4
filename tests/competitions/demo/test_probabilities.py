"""Synthetic packs of the probability-metric group: real answers formats, a sane simulated agent, valid samples."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from competitions.demo import (
    answers_submission,
    expected_rows,
    generate_answers,
    grade,
    make_demo_pack,
    pack_files,
    simulate_submission,
)
from competitions.demo.catalog import competition_facts
from competitions.demo.csvio import write_csv
from competitions.demo.specs._probabilities_kinds import HMS_VOTES, JIGSAW_COLUMNS, JIGSAW_IDENTITIES
from competitions.demo.specs.probabilities import SPECS
from grading.engine.csvio import load_answers, read_answers

HMS = "hms-harmful-brain-activity-classification"
JIGSAW = "jigsaw-unintended-bias-in-toxicity-classification"
SPINE = "rsna-2022-cervical-spine-fracture-detection"
GROUP = sorted(SPECS)

ANSWERS_COLUMNS = {
    "alaska2-image-steganalysis": ["Id", "Label"],
    HMS: [
        "eeg_id",
        "eeg_sub_id",
        "eeg_label_offset_seconds",
        "spectrogram_id",
        "spectrogram_sub_id",
        "spectrogram_label_offset_seconds",
        "label_id",
        "patient_id",
        "expert_consensus",
        *HMS_VOTES,
    ],
    JIGSAW: list(JIGSAW_COLUMNS),
    "lmsys-chatbot-arena": [
        "id",
        "model_a",
        "model_b",
        "prompt",
        "response_a",
        "response_b",
        "winner_model_a",
        "winner_model_b",
        "winner_tie",
    ],
    SPINE: ["StudyInstanceUID", "prediction_type", "fractured", "row_id"],
    "rsna-breast-cancer-detection": ["prediction_id", "cancer"],
    "rsna-miccai-brain-tumor-radiogenomic-classification": ["BraTS21ID", "MGMT_value"],
    "seti-breakthrough-listen": ["id", "target"],
    "statoil-iceberg-classifier-challenge": ["id", "is_iceberg"],
}
ID_PATTERNS = {
    "alaska2-image-steganalysis": r"\d{4}\.jpg",
    "rsna-breast-cancer-detection": r"\d{5}_[LR]",
    "seti-breakthrough-listen": r"[0-9a-f]{15}",
    "statoil-iceberg-classifier-challenge": r"[0-9a-f]{8}",
    SPINE: r"1\.2\.826\.0\.1\.3680043\.\d{5}_(patient_overall|C[1-7])",
}
INTEGER_IDS = {"lmsys-chatbot-arena", "rsna-miccai-brain-tumor-radiogenomic-classification", HMS, JIGSAW}


def _best(competition_id: str) -> float:
    return 1.0 if competition_facts(competition_id).higher_is_better else 0.0


@pytest.fixture(scope="module")
def small():
    return {c: generate_answers(competition_id=c, size="small", seed=0) for c in GROUP}


def test_the_group_covers_its_nine_competitions():
    assert set(GROUP) == set(ANSWERS_COLUMNS)


@pytest.mark.parametrize("competition_id", GROUP)
def test_small_answers_have_the_real_columns_ids_and_rows(small, competition_id):
    data = small[competition_id]
    facts = competition_facts(competition_id)
    assert list(data.answers.columns) == ANSWERS_COLUMNS[competition_id]
    assert len(data.answers) == expected_rows(competition_id=competition_id, size="small")
    ids = data.answers[facts.id_column]
    if competition_id in INTEGER_IDS:
        assert ids.dtype == np.int64
    else:
        assert all(re.fullmatch(ID_PATTERNS[competition_id], str(v)) for v in ids)
    if competition_id != HMS:
        assert ids.is_unique
    assert list(data.sample_submission.columns) == list(facts.submission_columns)
    assert list(data.sample_submission[facts.id_column]) == list(ids)


@pytest.mark.parametrize("competition_id", GROUP)
def test_answers_read_back_from_csv_with_the_same_dtypes_and_values(small, tmp_path, competition_id):
    answers = small[competition_id].answers
    path = tmp_path / "answers.csv"
    write_csv(answers, path)
    pd.testing.assert_frame_equal(read_answers(path), answers, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_answers_are_perfect_the_agent_close_at_quality_one_and_clearly_worse_at_point_two(small, competition_id):
    answers = small[competition_id].answers
    scores = [
        grade(
            competition_id=competition_id,
            submission=simulate_submission(competition_id=competition_id, answers=answers, quality=q, seed=3),
            answers=answers,
        )
        for q in (1.0, 0.9, 0.6, 0.2, 0.0)
    ]
    higher = competition_facts(competition_id).higher_is_better
    copied = answers_submission(competition_id=competition_id, answers=answers)
    assert grade(competition_id=competition_id, submission=copied, answers=answers) == pytest.approx(
        _best(competition_id), abs=1e-5
    )
    assert (scores[0] <= _best(competition_id) + 1e-5) if higher else (scores[0] >= _best(competition_id) - 1e-5)
    ordered = scores if higher else [-s for s in scores]
    assert ordered == sorted(ordered, reverse=True)  # monotonic in quality for one seed
    assert abs(scores[0] - scores[3]) > 0.1


@pytest.mark.parametrize("competition_id", GROUP)
def test_the_sample_submission_is_valid(small, competition_id):
    data = small[competition_id]
    assert np.isfinite(grade(competition_id=competition_id, submission=data.sample_submission, answers=data.answers))


def test_hms_answers_repeat_eeg_ids_in_consecutive_windows_and_count_votes(small):
    answers = small[HMS].answers
    assert not answers["eeg_id"].is_unique
    assert answers["eeg_id"].is_monotonic_increasing
    votes = answers[list(HMS_VOTES)].to_numpy()
    assert votes.dtype == np.int64 and (votes.sum(axis=1) > 0).all()
    names = np.array(["Seizure", "LPD", "GPD", "LRDA", "GRDA", "Other"])
    assert (answers["expert_consensus"].to_numpy() == names[votes.argmax(axis=1)]).all()


def test_spine_answers_are_melted_studies_with_consistent_labels(small):
    answers = small[SPINE].answers
    wide = answers.pivot(index="StudyInstanceUID", columns="prediction_type", values="fractured")
    vertebrae = wide[[f"C{i}" for i in range(1, 8)]].to_numpy()
    assert (wide["patient_overall"].to_numpy() == vertebrae.max(axis=1)).all()
    assert list(answers["row_id"]) == [
        f"{s}_{t}" for s, t in zip(answers["StudyInstanceUID"], answers["prediction_type"])
    ]


def test_jigsaw_identities_are_mostly_empty_and_every_scored_subgroup_has_both_classes(small):
    answers = generate_answers(competition_id=JIGSAW, size=2000, seed=1).answers
    assert answers[list(JIGSAW_IDENTITIES)].isna().mean().mean() > 0.3
    toxic = answers["toxicity"] >= 0.5
    for name in ("male", "muslim", "psychiatric_or_mental_illness"):
        member = answers[name] >= 0.5
        assert toxic[member].sum() >= 5 and (~toxic[member]).sum() >= 5


@pytest.mark.parametrize("layout", ["portal", "mlebench"])
def test_packs_are_written_and_their_answers_grade_the_written_sample(tmp_path, layout):
    make_demo_pack(out_dir=tmp_path, competition_ids=GROUP, size="small", n_teams=12, workers=1, layout=layout)
    for competition_id in GROUP:
        facts = competition_facts(competition_id)
        root = tmp_path / competition_id
        files = pack_files(facts=facts, layout=layout)
        answers = load_answers(root / files["answers"])
        sample = pd.read_csv(root / files["sample_submission"])
        assert np.isfinite(grade(competition_id=competition_id, submission=sample, answers=answers))
        board = pd.read_csv(root / files["leaderboard"])
        assert len(board) == 12 and board["score"].notna().all()
        if layout == "portal":
            manifest = json.loads((root / "pack.json").read_text())
            assert manifest["grader"]["name"] and Path(root / manifest["answers"]).exists()
