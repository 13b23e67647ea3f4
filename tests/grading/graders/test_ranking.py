"""Ranking group: MAP@k (H&M, hotel-id, whale), micro F1 over label sets (facebook-iii, iMet, plant 2021) and
lwlrap (freesound). Expected scores come from plain-Python loops or scikit-learn, never from the graders."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, label_ranking_average_precision_score
from sklearn.preprocessing import MultiLabelBinarizer

from .frames import csv_frame, grade, params, reject, roundtrip

HM = "h-and-m-personalized-fashion-recommendations"
HOTEL = "hotel-id-2021-fgvc8"
WHALE = "whale-categorization-playground"
FACEBOOK = "facebook-recruiting-iii-keyword-extraction"
IMET = "imet-2020-fgvc7"
PLANT = "plant-pathology-2021-fgvc8"
FREESOUND = "freesound-audio-tagging-2019"
MAP = [HM, HOTEL, WHALE]
F1 = [FACEBOOK, IMET, PLANT]


# ---------------------------------------------------------------------------------------------------
# Plain-Python references


def apk(actual: set, predicted: list, k: int) -> float:
    predicted = predicted[:k]
    score, hits = 0.0, 0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1
            score += hits / (i + 1)
    return score / min(len(actual), k) if actual else 0.0


def reference_map(submission, answers, competition) -> float:
    p = params(competition)
    id_col, col, k = p["id_column"], p["target_column"], p["k"]
    sub = submission[submission[id_col].isin(set(answers[id_col]))]
    sub = sub.sort_values(id_col, kind="stable")
    ans = answers.sort_values(id_col, kind="stable")
    actual = [set(str(a).split(" ")) for a in ans[col]]
    predicted = [("" if pd.isna(x) else str(x)).split(" ") for x in sub[col]]
    return float(np.mean([apk(a, q, k) for a, q in zip(actual, predicted)]))


def reference_f1(submission, answers, competition) -> float:
    p = params(competition)
    id_col, col = p["id_column"], p["target_column"]
    sub, ans = submission.sort_values(id_col), answers.sort_values(id_col)
    truth = [set(("" if pd.isna(x) else str(x)).split()) for x in ans[col]]
    guess = [set(("" if pd.isna(x) else str(x)).split()) for x in sub[col]]
    binarizer = MultiLabelBinarizer(classes=sorted(set().union(*truth)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "unknown class(es) will be ignored"
        return float(f1_score(binarizer.fit_transform(truth), binarizer.transform(guess), average="micro"))


# ---------------------------------------------------------------------------------------------------
# Frames in each competition's format


def map_answers(competition, n=8, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if competition == HM:
        ids = [f"{rng.integers(16**15):015x}" + "0" * 49 for _ in range(n)]
        items = [
            " ".join(map(str, rng.choice(np.arange(108775015, 108775060), rng.integers(1, 16), replace=False)))
            for _ in range(n)
        ]
        return roundtrip(pd.DataFrame({"customer_id": ids, "prediction": items}))
    if competition == HOTEL:
        frame = pd.DataFrame(
            {
                "image": [f"{rng.integers(16**15):016x}.jpg" for _ in range(n)],
                "chain": rng.integers(0, 5, n),
                "hotel_id": rng.integers(0, 12, n) * 1000 + 36,
                "timestamp": "2018-04-20 13:59:12",
            }
        )
        return roundtrip(frame)
    whales = ["new_whale", "w_23a388d", "w_9b5109b", "w_9c506f6", "w_0369a5c", "w_f48451c"]
    frame = pd.DataFrame({"Image": [f"{i:08x}.jpg" for i in rng.permutation(n) + 100], "Id": rng.choice(whales, n)})
    return roundtrip(frame)


def map_vocabulary(answers, competition) -> list[str]:
    column = params(competition)["target_column"]
    return sorted({token for cell in answers[column] for token in str(cell).split(" ")}) + ["zz1", "zz2"]


def noisy_map_submission(competition, answers, seed=0) -> pd.DataFrame:
    p = params(competition)
    rng = np.random.default_rng(seed)
    vocabulary = map_vocabulary(answers, competition)
    lists = [" ".join(rng.choice(vocabulary, rng.integers(0, p["k"] + 4))) for _ in range(len(answers))]
    frame = pd.DataFrame({p["id_column"]: answers[p["id_column"]], p["target_column"]: lists})
    return roundtrip(frame.sample(frac=1, random_state=seed))


def perfect_submission(competition, answers) -> pd.DataFrame:
    p = params(competition)
    return roundtrip(answers[[p["id_column"], p["target_column"]]])


def f1_answers(competition, n=10, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    id_col, col = params(competition)["id_column"], params(competition)["target_column"]
    ids: np.ndarray | list[str]
    if competition == FACEBOOK:
        ids, vocabulary = (
            rng.permutation(n) * 7 + 1,
            ["c#", "java", "php", ".net", "asp.net", "jquery", "c++"],
        )
    elif competition == IMET:
        ids, vocabulary = (
            [f"{i:032x}" for i in rng.permutation(n) + 5],
            [str(v) for v in (0, 13, 147, 448, 2429, 3473)],
        )
    else:
        ids = [f"{i:016x}.jpg" for i in rng.permutation(n) + 9]
        vocabulary = ["scab", "healthy", "frog_eye_leaf_spot", "rust", "complex", "powdery_mildew"]
    labels = [" ".join(rng.choice(vocabulary, rng.integers(1, 4), replace=False)) for _ in range(n)]
    frame = pd.DataFrame({id_col: ids, col: labels})
    if competition == FACEBOOK:
        frame.insert(1, "Title", "How do I, in C#, sort?")
        frame.insert(2, "Body", '<p>Say "hi"\nthere</p>')
    return roundtrip(frame)


def noisy_f1_submission(competition, answers, seed=0) -> pd.DataFrame:
    id_col, col = params(competition)["id_column"], params(competition)["target_column"]
    rng = np.random.default_rng(seed)
    vocabulary = sorted({t for cell in answers[col] for t in str(cell).split()}) + ["unknown-tag"]
    lists = [" ".join(rng.choice(vocabulary, rng.integers(0, 5))) for _ in range(len(answers))]
    frame = pd.DataFrame({id_col: answers[id_col], col: lists})
    return roundtrip(frame.sample(frac=1, random_state=seed))


# ---------------------------------------------------------------------------------------------------
# MAP@k


@pytest.mark.parametrize("competition", MAP)
def test_map_of_a_perfect_submission_is_one(competition):
    answers = map_answers(competition)
    assert grade(competition, perfect_submission(competition, answers), answers) == 1.0


@pytest.mark.parametrize("competition", MAP)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_map_matches_a_plain_python_reference(competition, seed):
    answers = map_answers(competition, n=30, seed=seed)
    submission = noisy_map_submission(competition, answers, seed=seed)
    expected = reference_map(submission, answers, competition)
    assert 0 < expected < 1
    assert grade(competition, submission, answers) == pytest.approx(expected, abs=1e-12)


def _whale(predictions: list[str]):
    answers = csv_frame("Image,Id\na.jpg,w_1\nb.jpg,new_whale\nc.jpg,w_2\n")
    submission = pd.DataFrame({"Image": ["a.jpg", "b.jpg", "c.jpg"], "Id": predictions})
    return roundtrip(submission), answers


def test_map_at_5_hand_worked_ranks_repeats_and_truncation():
    # rank 2 -> 1/2; a repeat of the right id is not a second hit; the right id in 6th place is cut off
    submission, answers = _whale(["x w_1", "new_whale new_whale", "a b c d e w_2"])
    assert grade(WHALE, submission, answers) == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    # a double space is an empty token that takes rank 2
    submission, answers = _whale(["x  w_1", "new_whale", "w_2"])
    assert grade(WHALE, submission, answers) == pytest.approx((1 / 3 + 1 + 1) / 3)


def test_map_divides_by_the_smaller_of_true_set_size_and_k():
    answers = csv_frame("customer_id,prediction\nc1,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\nc2,7 8\nc3,5 5 6\n")
    submission = csv_frame(
        "customer_id,prediction\nc1,15 14 13 12 11 10 9 8 7 6 5 4 3\nc2,9 8 1 7\nc3,6 0 0 0 0 0 0 0 0 0 0 0\n"
    )
    # c1: twelve hits of 15 -> 1; c2: hits at ranks 2 and 4 -> (1/2 + 2/4) / 2; c3: set {5, 6} -> (1) / 2
    assert grade(HM, submission, answers) == pytest.approx((1.0 + 0.5 + 0.5) / 3)


def test_map_compares_article_ids_as_text():
    answers = csv_frame("customer_id,prediction\nc1,108775015 108775044\nc2,706016001\n")
    padded = csv_frame("customer_id,prediction\nc1,0108775015 0108775044\nc2,0706016001\n")
    assert grade(HM, padded, answers) == 0.0
    plain = csv_frame("customer_id,prediction\nc1,108775044 108775015\nc2,706016001\n")
    assert grade(HM, plain, answers) == 1.0


def test_map_scores_an_empty_prediction_zero():
    submission, answers = _whale([None, "new_whale", "w_2"])
    assert submission["Id"].isna().sum() == 1
    assert grade(WHALE, submission, answers) == pytest.approx(2 / 3)


def test_hotel_ids_read_as_numbers_are_compared_as_text():
    answers = map_answers(HOTEL, n=5)
    single = roundtrip(answers[["image", "hotel_id"]].iloc[::-1])
    assert single["hotel_id"].dtype == np.int64
    assert grade(HOTEL, single, answers) == 1.0
    shifted = single.assign(hotel_id=single["hotel_id"] + 1)
    assert grade(HOTEL, shifted, answers) == 0.0


def test_hm_ignores_customers_outside_the_answers_and_requires_every_answer_customer():
    answers = map_answers(HM, n=12)
    submission = noisy_map_submission(HM, answers)
    extra = pd.DataFrame({"customer_id": [f"{i:064x}" for i in range(5)], "prediction": "1 2 3"})
    bigger = roundtrip(pd.concat([extra.iloc[:2], submission, extra.iloc[2:]]))
    assert grade(HM, bigger, answers) == pytest.approx(reference_map(submission, answers, HM), abs=1e-12)
    missing = submission[submission["customer_id"] != answers["customer_id"][3]]
    reject(HM, missing, answers, "lacks 1 id", answers["customer_id"][3][:20], "extra ids are allowed")


def test_hm_repeated_customer_shifts_the_pairing_like_mlebench():
    answers = csv_frame("customer_id,prediction\na,1\nb,2\nc,3\n")
    submission = csv_frame("customer_id,prediction\nc,3\nb,2\na,1\na,9\nz,7\n")
    # sorted and zipped: (a,1)~a, (a,9)~b, (b,2)~c; the surplus row (c,3) is dropped
    assert grade(HM, submission, answers) == pytest.approx(reference_map(submission, answers, HM))
    assert grade(HM, submission, answers) == pytest.approx(1 / 3)


@pytest.mark.parametrize("competition", [HM, WHALE])
def test_map_competitions_with_exact_columns_refuse_an_extra_column(competition):
    answers = map_answers(competition)
    submission = perfect_submission(competition, answers).assign(score=1)
    reject(competition, submission, answers, "remove the extra column score")


def test_hotel_accepts_extra_columns_but_needs_every_image_once():
    answers = map_answers(HOTEL)
    submission = perfect_submission(HOTEL, answers).assign(note="x")
    assert grade(HOTEL, submission, answers) == 1.0
    reject(HOTEL, submission.iloc[:-1], answers, "expected 8 rows", "got 7")
    duplicated = submission.copy()
    duplicated.loc[0, "image"] = duplicated.loc[1, "image"]
    reject(HOTEL, duplicated, answers, "1 test id is missing", "more often than in the test set")
    reject(HOTEL, submission.rename(columns={"hotel_id": "Hotel_id"}), answers, "missing hotel_id")


def test_whale_needs_exactly_the_test_images():
    answers = map_answers(WHALE)
    submission = perfect_submission(WHALE, answers)
    renamed = submission.copy()
    renamed.loc[2, "Image"] = "nope.jpg"
    reject(WHALE, renamed, answers, "not in the test set", "'nope.jpg'")
    reject(WHALE, submission.iloc[1:], answers, "expected 8 rows")


# ---------------------------------------------------------------------------------------------------
# Micro F1


@pytest.mark.parametrize("competition", F1)
def test_f1_of_a_perfect_submission_is_one(competition):
    answers = f1_answers(competition)
    p = params(competition)
    submission = roundtrip(answers[[p["id_column"], p["target_column"]]].iloc[::-1])
    assert grade(competition, submission, answers) == 1.0


@pytest.mark.parametrize("competition", F1)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_f1_matches_scikit_learn(competition, seed):
    answers = f1_answers(competition, n=25, seed=seed)
    submission = noisy_f1_submission(competition, answers, seed=seed)
    expected = reference_f1(submission, answers, competition)
    assert 0 < expected < 1
    assert grade(competition, submission, answers) == pytest.approx(expected, abs=1e-12)


def test_f1_hand_worked_unknown_labels_repeats_and_empty_cells():
    answers = csv_frame("image,labels\na.jpg,scab\nb.jpg,rust complex\nc.jpg,healthy\n")
    submission = csv_frame("image,labels\na.jpg,scab scab  new_disease\nb.jpg,rust\tpowdery_mildew\nc.jpg,\n")
    # vocabulary {scab, rust, complex, healthy}: new_disease and powdery_mildew are ignored
    # predicted pairs {a-scab, b-rust}, true pairs 4, TP 2 -> 2*2 / (2 + 4)
    assert grade(PLANT, submission, answers) == pytest.approx(4 / 6)


def test_f1_reads_a_numeric_label_column_as_text():
    answers = csv_frame("id,attribute_ids\nx,448\ny,13 2429\n")
    submission = csv_frame("id,attribute_ids\ny,2429\nx,448\n")
    assert submission["attribute_ids"].dtype == np.int64
    assert grade(IMET, submission, answers) == pytest.approx(2 * 2 / (2 + 3))


def test_whitespace_split_cuts_plain_ascii_text_where_the_unicode_splitter_does():
    """The ASCII splitter is taken for plain ASCII text only; the tokens are those of Arrow's Unicode one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from grading.engine.graders.ranking.tokens import split_cells

    odd = [chr(c) for c in range(128)] + ["\u00a0", "\u2003", "\u3000", "é"]
    cells = [f"a{c}b{c}{c}c {c}" for c in odd] + ["", " ", "x", "  y  z\t"]
    for group in [cells[:28], cells[:32], cells[32:], cells, [cells[60]]]:
        array = pa.array(group, type=pa.large_string())
        lists = pc.utf8_split_whitespace(array).to_pylist()
        expected = [[piece for piece in pieces if piece] for pieces in lists]
        tokens = split_cells(array, split="whitespace")
        got = [[] for _ in group]
        for row, piece in zip(tokens.rows.tolist(), tokens.values.to_pylist()):
            got[row].append(piece)
        assert got == expected


def test_f1_with_no_labels_at_all_scores_zero():
    answers = csv_frame("image,labels\na.jpg,scab\n")
    assert grade(PLANT, csv_frame("image,labels\na.jpg,\n"), answers) == 0.0


@pytest.mark.parametrize("competition", F1)
def test_f1_refuses_missing_columns_rows_and_ids(competition):
    answers = f1_answers(competition)
    p = params(competition)
    submission = roundtrip(answers[[p["id_column"], p["target_column"]]])
    reject(competition, submission.drop(columns=[p["target_column"]]), answers, f"missing {p['target_column']}")
    reject(competition, submission.iloc[:-2], answers, "expected 10 rows", "got 8")
    duplicated = submission.copy()
    duplicated.loc[0, p["id_column"]] = duplicated.loc[1, p["id_column"]]
    reject(competition, duplicated, answers, "1 test id is missing", "more often than in the test set")
    assert grade(competition, submission.assign(extra="ignored"), answers) == 1.0


# ---------------------------------------------------------------------------------------------------
# lwlrap


def freesound_frames(n=20, seed=0):
    classes = params(FREESOUND)["class_columns"]
    rng = np.random.default_rng(seed)
    truth = np.zeros((n, len(classes)), dtype=int)
    for row in range(n):
        truth[row, rng.choice(len(classes), rng.integers(1, 4), replace=False)] = 1
    answers = pd.DataFrame(truth, columns=classes)
    answers.insert(0, "fname", [f"{i:08x}.wav" for i in rng.permutation(n) + 77])
    scores = np.round(np.clip(truth * 0.3 + rng.random(truth.shape), 0, 1), 1)  # ties on purpose
    submission = pd.DataFrame(scores, columns=classes)
    submission.insert(0, "fname", answers["fname"])
    return roundtrip(answers), roundtrip(submission.iloc[::-1]), classes


def reference_lwlrap(answers, submission, classes):
    ans, sub = answers.sort_values("fname"), submission.sort_values("fname")
    truth, scores = ans[classes].to_numpy(), sub[classes].to_numpy(dtype=float)
    weights = truth.sum(axis=1)
    keep = weights > 0
    return label_ranking_average_precision_score(truth[keep], scores[keep], sample_weight=weights[keep])


def test_lwlrap_of_a_perfect_submission_is_one():
    answers, _, _ = freesound_frames()
    assert grade(FREESOUND, roundtrip(answers), answers) == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lwlrap_matches_scikit_learn_weighted_by_label_count(seed):
    answers, submission, classes = freesound_frames(seed=seed)
    expected = reference_lwlrap(answers, submission, classes)
    assert 0 < expected < 1
    assert grade(FREESOUND, submission, answers) == pytest.approx(expected, abs=1e-12)


def test_lwlrap_hand_worked_ties_count_against_the_true_label():
    answers, submission, classes = freesound_frames(n=2)
    submission = submission.sort_values("fname").reset_index(drop=True)
    answers = answers.sort_values("fname").reset_index(drop=True)
    answers[classes] = 0
    answers.loc[0, classes[0]] = 1
    answers.loc[1, [classes[1], classes[2]]] = 1
    submission[classes] = 0.0
    submission.loc[0, [classes[0], classes[5]]] = 0.5  # tied with one false label: 1/2
    submission.loc[1, classes[1]] = 0.9  # rank 1: 1/1
    submission.loc[1, classes[3]] = 0.8  # a false label above the second true one: 2/3
    submission.loc[1, classes[2]] = 0.7
    # weights 1 and 2: (1 * 1/2 + 2 * (1 + 2/3) / 2) / 3
    assert grade(FREESOUND, submission, answers) == pytest.approx((0.5 + (1 + 2 / 3)) / 3)


def test_lwlrap_needs_fname_first_and_the_classes_in_order():
    answers, submission, classes = freesound_frames()
    reject(FREESOUND, submission[[*classes, "fname"]], answers, "first column must be 'fname'")
    swapped = [classes[1], classes[0], *classes[2:]]
    reject(FREESOUND, submission[["fname", *swapped]], answers, "column 2 is 'Accordion'", "'Accelerating")
    reject(FREESOUND, submission.drop(columns=["Zipper_(clothing)"]), answers, "missing Zipper_(clothing)")
    reject(FREESOUND, submission.assign(extra=0), answers, "remove the extra column extra")
    reject(FREESOUND, submission.iloc[:-1], answers, "expected 20 rows")


def test_lwlrap_reads_scores_with_pandas_to_numeric_and_refuses_the_rest():
    answers, submission, classes = freesound_frames()
    expected = grade(FREESOUND, submission, answers)
    as_text = submission.astype({classes[4]: str})
    as_text[classes[4]] = as_text[classes[4]].str.replace("0.", ".", regex=False)
    assert grade(FREESOUND, as_text, answers) == pytest.approx(expected)
    bad = submission.astype({classes[4]: object})
    bad.loc[3, classes[4]] = "high"
    reject(FREESOUND, roundtrip(bad), answers, "'Bark'", "cannot read as a number", "'high'", "row 4")
    blank = submission.copy()
    blank.loc[2, classes[7]] = np.nan
    reject(FREESOUND, blank, answers, "missing value", "row 3")
    infinite = submission.copy()
    infinite.loc[2, classes[7]] = np.inf
    reject(FREESOUND, infinite, answers, "infinite value")


# ---------------------------------------------------------------------------------------------------
# Inputs are left alone


@pytest.mark.parametrize("competition", [HM, HOTEL, WHALE, FACEBOOK, IMET, PLANT, FREESOUND])
def test_grading_does_not_modify_the_frames(competition):
    if competition in MAP:
        answers = map_answers(competition)
        submission = noisy_map_submission(competition, answers)
    elif competition in F1:
        answers = f1_answers(competition)
        submission = noisy_f1_submission(competition, answers)
    else:
        answers, submission, _ = freesound_frames()
    before = (answers.copy(deep=True), submission.copy(deep=True))
    grade(competition, submission, answers)
    pd.testing.assert_frame_equal(answers, before[0])
    pd.testing.assert_frame_equal(submission, before[1])
