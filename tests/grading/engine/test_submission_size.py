"""The largest honest submission of a competition: rows x the widest honest row, plus the header."""

import pandas as pd

from grading.engine.csvio import MiB, limits_for_answers
from grading.engine.submission_size import NUMBER_BYTES, honest_size, list_lengths_from_params

HM_CUSTOMERS = 1_371_980  # the sample submission lists every customer; the answers only those who bought
HM_PARAMS = {"id_column": "customer_id", "target_column": "prediction", "k": 12, "columns": "exact", "ids": "superset"}
TWELVE = (
    "0706016001 0706016002 0372860001 0610776002 0759871002 0464297007 0372860002 0610776001 0399223001 "
    "0706016003 0720125001 0156231001"
)


def hm_frames() -> list[pd.DataFrame]:
    """A few rows of h-and-m's answers (articles bought, read as integers) and sample submission."""
    customers = [f"{i:064x}" for i in range(6)]
    answers = pd.DataFrame({"customer_id": customers[:3], "prediction": ["706016001", "372860001 610776002", "1"]})
    sample = pd.DataFrame({"customer_id": customers, "prediction": [TWELVE] * 6})
    return [answers, sample]


def test_an_honest_full_size_h_and_m_submission_is_under_its_bound():
    # Twelve article ids for each of the 1.37 M customers, written with CRLF: the file the official grader scores.
    line = f"{'f' * 64},{TWELVE}\r\n"
    honest_file = len("customer_id,prediction\r\n") + HM_CUSTOMERS * len(line.encode())
    assert honest_file > 242_000_000

    size = honest_size(
        columns=["customer_id", "prediction"],
        frames=hm_frames(),
        rows=HM_CUSTOMERS,
        id_column="customer_id",
        list_lengths=list_lengths_from_params(params=HM_PARAMS),
    )
    assert honest_file <= size.max_bytes
    # Not much more: the bound follows the format (a quoted 64-digit id, twelve 10-digit ids, quotes, CRLF).
    assert size.row_bytes == 66 + 1 + (12 * 10 + 11 + 2) + 2
    # The limit that followed the answers file (20 x 7.3 MiB) refused it.
    assert limits_for_answers(answers_bytes=int(146.1 * MiB / 20)).max_bytes < honest_file


def test_the_k_of_a_map_at_k_grader_bounds_its_list_even_when_no_file_shows_a_full_one():
    answers = hm_frames()[0]
    size = honest_size(
        columns=["customer_id", "prediction"],
        frames=[answers],
        rows=3,
        id_column="customer_id",
        list_lengths={"prediction": 12},
    )
    assert size.row_bytes == 66 + 1 + (12 * 9 + 11 + 2) + 2
    assert list_lengths_from_params(params={"id_column": "id", "target_column": "label"}) == {}


def test_numbers_take_their_longest_text_form_and_text_twice_its_widest_value():
    frame = pd.DataFrame({"id": ["id00001", "id00002"], "EAP": [1, 0], "note": ["a", "дом"]})
    size = honest_size(columns=["id", "EAP", "note"], frames=[frame], rows=10, id_column="id")
    assert repr(-1.2345678901234567e-308) == "-1.2345678901234567e-308" and NUMBER_BYTES == 24
    assert size.row_bytes == (7 + 2) + 1 + 24 + 1 + (2 * len("дом".encode()) + 2) + 2
    assert size.header_bytes == len('"id","EAP","note"\r\n')
    assert size.max_bytes == size.header_bytes + 10 * size.row_bytes


def test_a_column_no_file_shows_is_taken_as_a_number():
    size = honest_size(columns=["id", "score"], frames=[pd.DataFrame({"id": [1, 2]})], rows=2, id_column="id")
    assert size.row_bytes == 24 + 1 + 24 + 2
