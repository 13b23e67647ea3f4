"""Class-label competitions beyond the Lite split: accuracy, top-1 error, macro F1 and quadratic weighted kappa.

Accuracy: cassava, cdiscount, iwildcam-2020, speech commands (text labels). Top-1 error: iNaturalist 2019
(first token of each prediction). Macro F1 over integer ids: herbarium 2020-2022 and iwildcam-2019. Kappa:
automated essay scoring 2.
"""

import copy
import csv
import io
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from grading.engine.errors import AnswersProblem
from grading.engine.graders.f1_macro import macro_f1
from grading.engine.registry import get_grader

from .frames import GRADERS, grade, reject, roundtrip

CASSAVA = "cassava-leaf-disease-classification"
CDISCOUNT = "cdiscount-image-classification-challenge"
IWILDCAM_2020 = "iwildcam-2020-fgvc7"
SPEECH = "tensorflow-speech-recognition-challenge"
INATURALIST = "inaturalist-2019-fgvc6"
HERBARIA = ["herbarium-2020-fgvc7", "herbarium-2021-fgvc8", "herbarium-2022-fgvc9"]
IWILDCAM_2019 = "iwildcam-2019-fgvc6"
F1_COMPETITIONS = [*HERBARIA, IWILDCAM_2019]
ESSAYS = "learning-agency-lab-automated-essay-scoring-2"

UUIDS = [
    "8b31d3c0-21bc-11ea-a13a-137349068a90",
    "8cf202be-21bc-11ea-a13a-137349068a90",
    "8a87e62e-21bc-11ea-a13a-137349068a90",
    "8e5b81de-21bc-11ea-a13a-137349068a90",
    "8d8e7ab6-21bc-11ea-a13a-137349068a90",
    "8f0d5c3a-21bc-11ea-a13a-137349068a90",
]


def columns(competition: str) -> tuple[str, str]:
    params = GRADERS[competition]["params"]
    return params["id_column"], params["target_column"]


def frame(competition: str, ids, labels) -> pd.DataFrame:
    """id + label columns as a CSV file gives them."""
    id_column, target = columns(competition)
    return roundtrip(pd.DataFrame({id_column: ids, target: labels}))


def reference_macro_f1(truth: list, predicted: list) -> float:
    """Macro F1 over the union of labels, one class at a time, from the textbook definition."""
    scores = []
    for label in sorted(set(truth) | set(predicted)):
        tp = sum(t == label and p == label for t, p in zip(truth, predicted))
        fp = sum(t != label and p == label for t, p in zip(truth, predicted))
        fn = sum(t == label and p != label for t, p in zip(truth, predicted))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)


def assert_unchanged(competition: str, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    before = (submission.copy(deep=True), answers.copy(deep=True))
    score = grade(competition, submission, answers)
    pd.testing.assert_frame_equal(submission, before[0])
    pd.testing.assert_frame_equal(answers, before[1])
    return score


# ---------------------------------------------------------------------------------------------------
# Accuracy: cassava, cdiscount, iwildcam-2020, speech commands


def test_the_accuracy_competitions_use_the_accuracy_grader_on_their_columns():
    for competition, expected in (
        (CASSAVA, ("image_id", "label")),
        (CDISCOUNT, ("_id", "category_id")),
        (IWILDCAM_2020, ("Id", "Category")),
        (SPEECH, ("fname", "label")),
    ):
        assert GRADERS[competition]["grader"] == "accuracy"
        assert GRADERS[competition]["params"]["compare"] == "labels"
        assert columns(competition) == expected


def test_cassava_scores_the_share_of_correct_labels_matched_by_image():
    images = ["1000015157.jpg", "1000201771.jpg", "100042118.jpg", "1000723321.jpg", "1000812911.jpg"]
    answers = frame(CASSAVA, images, [0, 3, 3, 1, 4])
    assert grade(CASSAVA, frame(CASSAVA, images, [0, 3, 3, 1, 4]), answers) == 1.0
    shuffled = frame(CASSAVA, images[::-1], [4, 1, 2, 3, 0])  # rows reversed, one label wrong
    assert assert_unchanged(CASSAVA, shuffled, answers) == pytest.approx(4 / 5)
    as_float = frame(CASSAVA, images, [0.0, 3.0, 3.0, 1.0, 2.0])
    assert grade(CASSAVA, as_float, answers) == pytest.approx(4 / 5)  # 3.0 counts as 3
    reject(CASSAVA, frame(CASSAVA, images, [0, 3, 3.5, 1, 4]), answers, "whole-number", "row 3")
    reject(CASSAVA, frame(CASSAVA, images, [0, 3, None, 1, 4]), answers, "empty or not finite", "row 3")
    reject(CASSAVA, frame(CASSAVA, images[:4], [0, 3, 3, 1]), answers, "expected 5 rows", "got 4")
    reject(CASSAVA, frame(CASSAVA, [*images[:4], images[0]], [0, 3, 3, 1, 4]), answers, "1000812911.jpg")


def test_cdiscount_matches_renumbered_ids_and_ten_digit_categories():
    answers = frame(CDISCOUNT, [0, 1, 2, 3], [1000010653, 1000010653, 1000004079, 1000016018])
    submission = frame(CDISCOUNT, [3, 2, 1, 0], [1000016018, 1000004079, 1000004079, 1000010653])
    assert grade(CDISCOUNT, submission, answers) == pytest.approx(3 / 4)
    assert grade(CDISCOUNT, submission.assign(extra="x"), answers) == pytest.approx(3 / 4)
    reject(CDISCOUNT, submission.rename(columns={"category_id": "category"}), answers, "missing category_id")
    reject(CDISCOUNT, submission.assign(_id=[3, 2, 1, 4]), answers, "missing (e.g. 0)")


def test_iwildcam_2020_matches_uuid_ids():
    answers = frame(IWILDCAM_2020, UUIDS, [0, 0, 372, 3, 0, 71])
    submission = frame(IWILDCAM_2020, UUIDS[::-1], [71, 0, 0, 372, 0, 0])
    assert assert_unchanged(IWILDCAM_2020, submission, answers) == pytest.approx(5 / 6)


def test_speech_labels_are_compared_as_exact_text():
    clips = ["clip_000044442.wav", "clip_0000adecb.wav", "clip_0000d4322.wav", "clip_0000fb6fe.wav"]
    answers = frame(SPEECH, clips, ["yes", "marvin", "off", "no"])
    assert grade(SPEECH, frame(SPEECH, clips, ["yes", "marvin", "off", "no"]), answers) == 1.0
    # Kaggle's 'unknown' never matches MLE-bench's folder-name labels; case counts
    submission = frame(SPEECH, clips, ["yes", "unknown", "Off", "no"])
    assert grade(SPEECH, submission, answers) == pytest.approx(2 / 4)
    # numbers against text labels are scored (scikit-learn compares them) and never match
    assert grade(SPEECH, frame(SPEECH, clips, [1, 2, 3, 4]), answers) == 0.0
    reject(SPEECH, frame(SPEECH, clips, ["yes", None, "off", "no"]), answers, "empty cell", "row 2")


# ---------------------------------------------------------------------------------------------------
# Top-1 error: iNaturalist 2019


def inat_answers() -> pd.DataFrame:
    return frame(INATURALIST, [10, 11, 12, 13, 14], [5, 17, 1009, 0, 5])


def test_inaturalist_scores_the_share_of_wrong_first_guesses():
    answers = inat_answers()
    assert GRADERS[INATURALIST]["grader"] == "top1_error"
    assert grade(INATURALIST, frame(INATURALIST, [14, 13, 12, 11, 10], [5, 0, 1009, 17, 5]), answers) == 0.0
    submission = frame(INATURALIST, [10, 11, 12, 13, 14], [5, 16, 1009, 1, 5])
    assert assert_unchanged(INATURALIST, submission, answers) == pytest.approx(2 / 5)


def test_inaturalist_reads_only_the_first_space_separated_id():
    answers = inat_answers()
    submission = frame(INATURALIST, [10, 11, 12, 13, 14], ["5 17 3", "16 17", "1009", "+0 4", "  5 "])
    assert submission["predicted"].dtype != np.int64
    assert grade(INATURALIST, submission, answers) == pytest.approx(1 / 5)  # only '16 17' is wrong


def test_inaturalist_refuses_predictions_whose_first_token_is_not_an_integer():
    answers = inat_answers()
    ids = [10, 11, 12, 13, 14]
    # a decimal number column (even 5.0) is written '5.0' by pandas, which int() refuses
    reject(INATURALIST, frame(INATURALIST, ids, [5.0, 17.0, 1009.0, 0.0, 5.0]), answers, "5.0 in row 1")
    reject(INATURALIST, frame(INATURALIST, ids, [5, 17, None, 0, 5]), answers, "empty cell in row 3")
    message = reject(INATURALIST, frame(INATURALIST, ids, ["5", "17.0 3", "x", "0", ""]), answers, "3 values", "row 2")
    assert "'17.0 3' in row 2 (id 11); 'x' in row 3 (id 12)" in message
    reject(INATURALIST, frame(INATURALIST, ids, ["5", "17", "9" * 20, "0", "5"]), answers, "row 3")
    reject(INATURALIST, frame(INATURALIST, ids[:-1], [5, 17, 1009, 0]), answers, "expected 5 rows")
    reject(INATURALIST, inat_answers().rename(columns={"predicted": "Predicted"}), answers, "missing predicted")


# ---------------------------------------------------------------------------------------------------
# Macro F1: herbarium 2020-2022, iwildcam-2019


def f1_answers(competition: str) -> pd.DataFrame:
    if competition == IWILDCAM_2019:
        return frame(competition, UUIDS, [0, 0, 10, 13, 0, 10])
    return frame(competition, [112, 7, 3051, 44, 9, 15], [0, 0, 10, 13, 0, 10])


def f1_submission(competition: str, labels) -> pd.DataFrame:
    answers = f1_answers(competition)
    id_column, _ = columns(competition)
    return frame(competition, answers[id_column].tolist(), labels)


@pytest.mark.parametrize("competition", F1_COMPETITIONS)
def test_macro_f1_is_one_for_a_perfect_submission(competition):
    answers = f1_answers(competition)
    assert GRADERS[competition]["grader"] == "f1_macro"
    assert grade(competition, answers.copy(), answers) == 1.0
    assert grade(competition, answers.iloc[::-1].reset_index(drop=True), answers) == 1.0


@pytest.mark.parametrize("competition", F1_COMPETITIONS)
def test_macro_f1_averages_over_the_union_of_true_and_predicted_ids(competition):
    answers = f1_answers(competition)
    truth = [0, 0, 10, 13, 0, 10]
    # class 13 is never predicted (F1 0) and class 99 never occurs (an extra class with F1 0)
    predicted = [0, 10, 10, 99, 0, 10]
    score = assert_unchanged(competition, f1_submission(competition, predicted), answers)
    # hand-worked: F1(0) = 2*2/(3+2) = 0.8, F1(10) = 2*2/(2+3) = 0.8, F1(13) = F1(99) = 0
    assert score == pytest.approx((0.8 + 0.8 + 0 + 0) / 4)
    assert score == pytest.approx(reference_macro_f1(truth, predicted))
    assert score == pytest.approx(f1_score(truth, predicted, average="macro"))


def test_macro_f1_pairs_rows_by_id_not_by_position():
    competition = HERBARIA[0]
    answers = f1_answers(competition)
    shuffled = frame(competition, [15, 9, 44, 3051, 7, 112], [10, 0, 99, 10, 10, 0])  # reversed rows
    assert grade(competition, shuffled, answers) == pytest.approx(0.4)


def test_macro_f1_casts_labels_like_astype_int():
    competition = HERBARIA[1]
    answers = f1_answers(competition)
    exact = grade(competition, f1_submission(competition, [0, 10, 10, 99, 0, 10]), answers)
    # floats are truncated toward zero (10.9 -> 10), text is read with int() (' 10' and '+0' pass)
    truncated = f1_submission(competition, [0.2, 10.9, 10.0, 99.5, 0.0, 10.0])
    assert grade(competition, truncated, answers) == pytest.approx(exact)
    text = f1_submission(competition, ["0", " 10", "10", "99", "+0", "10"])
    assert grade(competition, text, answers) == pytest.approx(exact)
    assert grade(competition, f1_submission(competition, [True] * 6), answers) == pytest.approx(
        f1_score([0, 0, 10, 13, 0, 10], [1] * 6, average="macro")
    )


@pytest.mark.parametrize("competition", F1_COMPETITIONS)
def test_macro_f1_refuses_labels_that_are_not_integers(competition):
    answers = f1_answers(competition)
    reject(competition, f1_submission(competition, [0, 10, None, 13, 0, 10]), answers, "empty cell in row 3")
    message = reject(competition, f1_submission(competition, [0, "10.0", "abc", 13, 0, 10]), answers, "2 values")
    assert "'10.0' in row 2" in message and "'abc' in row 3" in message
    reject(competition, f1_submission(competition, [0, 10, math.inf, 13, 0, 10]), answers, "row 3")


@pytest.mark.parametrize("competition", F1_COMPETITIONS)
def test_macro_f1_refuses_wrong_rows_ids_and_columns(competition):
    answers = f1_answers(competition)
    id_column, target = columns(competition)
    submission = f1_submission(competition, [0, 0, 10, 13, 0, 10])
    reject(competition, submission.iloc[:-1], answers, "expected 6 rows", "got 5")
    reject(competition, pd.concat([submission, submission.iloc[[0]]]), answers, "expected 6 rows", "1 more")
    repeated = submission.copy()
    repeated.loc[5, id_column] = repeated.loc[0, id_column]
    reject(competition, repeated, answers, "test id is missing", "2 times")
    reject(competition, submission.drop(columns=[target]), answers, f"missing {target}")
    reject(competition, submission.drop(columns=[id_column]), answers, f"missing {id_column}")
    assert grade(competition, submission.assign(score=1.0), answers) == 1.0


def test_macro_f1_reports_answers_that_are_not_integer_labels():
    competition = HERBARIA[2]
    answers = f1_answers(competition).astype({"Predicted": object})
    answers.loc[0, "Predicted"] = "n/a"
    with pytest.raises(AnswersProblem):
        grade(competition, f1_submission(competition, [0, 0, 10, 13, 0, 10]), answers)


def test_macro_f1_counts_tens_of_thousands_of_classes_like_scikit_learn():
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 20_000, size=60_000)
    predicted = np.where(rng.random(60_000) < 0.6, truth, rng.integers(0, 25_000, size=60_000))
    assert macro_f1(truth, predicted) == pytest.approx(f1_score(truth, predicted, average="macro"), abs=1e-12)


def test_macro_f1_grades_a_herbarium_2021_sized_submission_without_a_confusion_matrix():
    # 477,000 rows over 64,500 classes: a dense confusion matrix would need 33 GB
    rng = np.random.default_rng(8)
    n = 477_000
    truth = rng.integers(0, 64_500, size=n)
    answers = pd.DataFrame({"Id": np.arange(n), "Predicted": truth})
    guess = np.where(rng.random(n) < 0.8, truth, truth[rng.integers(0, n, size=n)])
    order = rng.permutation(n)
    submission = pd.DataFrame({"Id": order, "Predicted": guess[order]})
    grader = get_grader("f1_macro")
    score = grader(submission, answers, id_column="Id", target_column="Predicted")
    assert score == pytest.approx(macro_f1(truth, guess), abs=1e-15)
    sample = rng.choice(n, size=500, replace=False)
    sub_sample = pd.DataFrame({"Id": sample, "Predicted": guess[sample]})
    ans_sample = pd.DataFrame({"Id": sample[::-1], "Predicted": truth[sample[::-1]]})
    expected = reference_macro_f1(truth[sample].tolist(), guess[sample].tolist())
    assert grader(sub_sample, ans_sample, id_column="Id", target_column="Predicted") == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------------
# Quadratic weighted kappa: automated essay scoring 2


def essay_answers() -> pd.DataFrame:
    texts = [
        'Dear Senator,\n\nI think the "Electoral College" should stay, because it works.',
        "Cars are bad, and driverless cars are worse.",
        "Venus is hot.\n\nStill, we should explore it.",
        "Phones help students learn, says my teacher.",
        "The Facial Action Coding System reads emotions.",
        "In conclusion, the Seagoing Cowboys program was a success.",
    ]
    frame_ = pd.DataFrame(
        {
            "essay_id": ["000d118", "000fe60", "001ab80", "001bdc0", "002ba53", "0030e86"],
            "full_text": texts,
            "score": [3, 2, 1, 4, 6, 3],
        }
    )
    return pd.read_csv(io.StringIO(frame_.to_csv(index=False, quoting=csv.QUOTE_MINIMAL)))


def essays(scores, ids=None) -> pd.DataFrame:
    ids = ids or ["000d118", "000fe60", "001ab80", "001bdc0", "002ba53", "0030e86"]
    return roundtrip(pd.DataFrame({"essay_id": ids, "score": scores}))


def test_essay_scoring_uses_quadratic_weighted_kappa_on_the_scores():
    answers = essay_answers()
    assert list(answers.columns) == ["essay_id", "full_text", "score"]
    assert GRADERS[ESSAYS]["grader"] == "quadratic_weighted_kappa"
    assert grade(ESSAYS, essays([3, 2, 1, 4, 6, 3]), answers) == 1.0
    predicted = [3, 3, 2, 4, 5, 3]
    score = assert_unchanged(ESSAYS, essays(predicted), answers)
    assert score == pytest.approx(cohen_kappa_score([3, 2, 1, 4, 6, 3], predicted, weights="quadratic"))
    reversed_ids = ["0030e86", "002ba53", "001bdc0", "001ab80", "000fe60", "000d118"]
    assert grade(ESSAYS, essays(predicted[::-1], reversed_ids), answers) == pytest.approx(score)


def test_essay_scoring_hand_worked_kappa():
    # truth 1,2,3 and prediction 1,3,3, weights (i-j)**2: the one disagreement (2 scored 3) weighs 1;
    # chance agreement from the marginals [1,1,1] x [1,0,2] weighs (8+3+4)/3 = 5, so kappa = 1 - 1/5
    answers = essay_answers().iloc[:3].reset_index(drop=True)
    answers["score"] = [1, 2, 3]
    submission = essays([1, 3, 3], ["000d118", "000fe60", "001ab80"])
    assert grade(ESSAYS, submission, answers) == pytest.approx(0.8)


def test_essay_scoring_refuses_fractional_scores_missing_ids_and_empty_files():
    answers = essay_answers()
    reject(ESSAYS, essays([3, 2.5, 1, 4, 6, 3]), answers, "whole-number", "row 2 (id '000fe60')")
    reject(ESSAYS, essays([3, 2, 1, 4, 6, 3]).iloc[:0], answers, "no rows")
    reject(ESSAYS, essays([3, 2, 1, 4, 6, 3]).iloc[1:], answers, "1 test id is missing", "'000d118'")
    reject(ESSAYS, essays([3, 2, 1, 4, 6, 3]).drop(columns=["essay_id"]), answers, "missing essay_id")
    assert grade(ESSAYS, essays([3.0, 2.0, 1.0, 4.0, 6.0, 3.0]), answers) == 1.0


def test_inputs_are_never_modified():
    for competition, submission, answers in (
        (
            HERBARIA[0],
            f1_submission(HERBARIA[0], ["0", "10", "10", "99", "0", "10"]),
            f1_answers(HERBARIA[0]),
        ),
        (INATURALIST, frame(INATURALIST, [14, 13, 12, 11, 10], ["5 1", "0", "9", "17", "5"]), inat_answers()),
    ):
        before = copy.deepcopy((submission, answers))
        grade(competition, submission, answers)
        pd.testing.assert_frame_equal(submission, before[0])
        pd.testing.assert_frame_equal(answers, before[1])
