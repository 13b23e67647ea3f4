"""Reading submissions: same values as MLE-bench's read_csv, and every bad input refused with a reason."""

import io
import time
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grading.engine import csvio, textscan
from grading.engine.csvio import (
    MiB,
    limits_for_answers,
    load_answers,
    longest_line_bytes,
    read_answers,
    read_submission,
)
from grading.engine.errors import InvalidSubmission

LIMITS = {"max_bytes": 64 * MiB, "max_line_bytes": 1 * MiB}


def write(tmp_path: Path, content: bytes | str, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def refusal(path: Path, **limits: int) -> str:
    with pytest.raises(InvalidSubmission) as caught:
        read_submission(path, **{**LIMITS, **limits})
    return str(caught.value)


def mlebench_read(path: Path) -> pd.DataFrame:
    # MLE-bench's own call; pandas 3.1 deprecates the argument, which is noise here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.read_csv(path, float_precision="round_trip")


# --- same values as MLE-bench ----------------------------------------------------------------------

TRICKY_FLOATS = [
    "0.1",
    "0.30000000000000004",
    "1.00000000000000011102230246251565404236316680908203125",
    "2.2250738585072011e-308",
    "4.9e-324",
    "1.7976931348623157e308",
    "9007199254740993",
    "7.038531e-26",
    "0.01794",
    "0.930508",
    "-0.0",
    "1e-7",
    "123456789.123456789",
]


def test_it_parses_tricky_floats_exactly_as_python_float_does(tmp_path):
    # float_precision="round_trip" means "what Python's float() gives"; that is the reference.
    path = write(tmp_path, "id,value\n" + "".join(f"{i},{v}\n" for i, v in enumerate(TRICKY_FLOATS)))
    values = read_submission(path, **LIMITS)["value"].tolist()
    assert values == [float(v) for v in TRICKY_FLOATS]
    assert [np.float64(v).tobytes() for v in values] == [np.float64(float(v)).tobytes() for v in TRICKY_FLOATS]


def test_it_parses_random_decimals_identically_to_mlebench_read_csv(tmp_path):
    rng = np.random.default_rng(7)
    digits = rng.integers(1, 19, size=20_000)
    texts = [f"{x:.{d}f}" for x, d in zip(rng.random(20_000) * 10.0 ** rng.integers(-8, 8, 20_000), digits)]
    path = write(tmp_path, "id,p\n" + "".join(f"r{i},{t}\n" for i, t in enumerate(texts)))
    ours = read_submission(path, **LIMITS)
    pd.testing.assert_frame_equal(ours, mlebench_read(path))
    assert ours["p"].tolist() == [float(t) for t in texts]


@pytest.mark.parametrize(
    "content",
    [
        "id,label\n1,cat\n2,dog\n",
        '\ufeffid,text\n1,"a, quoted"\n2,"line\nbreak"\n',
        "id,score\r\n1,0.5\r\n2,0.25\r\n",
        "id,score\r1,0.5\r2,0.25\r",
        "id,flag,maybe\n1,True,NA\n2,false,\n3,TRUE,None\n",
        "id,big\n1,123456789012345678901234567890\n2,5\n",
        "id,mixed\n1,2\n2,x\n3,\n",
        "id,a,a\n1,2,3\n",
        "Id,Predicted\n000123,1_2_3\n000124,4_5_6\n",
        "id,x\n1,inf\n2,-Infinity\n3,nan\n",
    ],
    ids=[
        "labels",
        "bom-quotes",
        "crlf",
        "bare-cr",
        "bools-na",
        "huge-int",
        "mixed",
        "dup-cols",
        "ids",
        "inf",
    ],
)
def test_it_gives_the_same_frame_as_mlebench_read_csv(tmp_path, content):
    path = write(tmp_path, content)
    pd.testing.assert_frame_equal(read_submission(path, **LIMITS), mlebench_read(path))


def test_it_keeps_mixed_types_across_pandas_internal_chunks_like_mlebench(tmp_path):
    # With low_memory chunking a column that is numeric early and text late comes out mixed; MLE-bench
    # graded that mixed column, so we must hand the same one to the grader.
    rows = [f"{i},{i}\n" for i in range(300_000)] + ["300000,abc\n"]
    path = write(tmp_path, "id,value\n" + "".join(rows))
    pd.testing.assert_frame_equal(read_submission(path, **LIMITS), mlebench_read(path))


def test_it_reads_answers_like_submissions(tmp_path):
    path = write(tmp_path, "id,value\n1_1_1,0.01794\n1_1_2,1\n", name="answers.csv")
    pd.testing.assert_frame_equal(read_answers(path), mlebench_read(path))
    pd.testing.assert_frame_equal(load_answers(path), mlebench_read(path))


def test_it_loads_jsonl_answers_as_a_list_of_dicts_and_refuses_other_suffixes(tmp_path):
    jsonl = write(tmp_path, '{"example_id": 1}\n{"example_id": 2}\n', name="test.jsonl")
    assert load_answers(jsonl) == [{"example_id": 1}, {"example_id": 2}]
    with pytest.raises(ValueError, match="unsupported suffix"):
        load_answers(write(tmp_path, "x", name="answers.parquet"))


# --- bad inputs ------------------------------------------------------------------------------------


def test_it_refuses_an_empty_file(tmp_path):
    assert "the file is empty (0 bytes)" in refusal(write(tmp_path, b""))


def test_it_refuses_a_file_of_blank_lines(tmp_path):
    assert "no CSV header" in refusal(write(tmp_path, "\n\n\n"))


def test_a_header_only_file_reaches_the_grader_as_an_empty_frame(tmp_path):
    # Whether no rows is invalid is each grader's rule: uw-madison's reference scores it NaN, a valid score.
    frame = read_submission(write(tmp_path, "id,label\n"), **LIMITS)
    assert list(frame.columns) == ["id", "label"] and len(frame) == 0


def test_it_names_the_semicolon_when_the_file_is_not_comma_separated(tmp_path):
    message = refusal(write(tmp_path, "id;label\n1;cat\n2;dog\n"))
    assert message.startswith("found 1 column 'id;label'; the file must be comma-separated")


def test_it_names_tabs_when_the_file_is_tab_separated(tmp_path):
    message = refusal(write(tmp_path, "id\tlabel\n1\tcat\n"))
    assert "found 1 column 'id\\tlabel'; the file must be comma-separated (it looks separated by tabs)" in message


def test_it_says_which_line_has_too_many_fields(tmp_path):
    message = refusal(write(tmp_path, "id,label\n1,cat\n2,dog,extra\n"))
    assert message.startswith("line 3 has 3 fields but the header has 2")


def test_it_refuses_an_unclosed_quote(tmp_path):
    assert "never closed" in refusal(write(tmp_path, 'id,text\n1,"open\n2,b\n'))


def test_it_says_where_a_non_utf8_byte_is(tmp_path):
    latin1 = "id,city\n1,Paris\n2,Montréal\n".encode("latin-1")
    message = refusal(write(tmp_path, latin1))
    offset = latin1.index(b"\xe9")
    assert f"byte 0xe9 at byte offset {offset} (line 3)" in message
    assert "save the file as UTF-8" in message


def test_it_finds_a_bad_byte_far_into_a_large_file(tmp_path):
    body = b"id,value\n" + b"".join(b"%d,0.5\n" % i for i in range(400_000))
    bad = body + b"400000,\xff\n"
    message = refusal(write(tmp_path, bad))
    assert f"byte offset {len(body) + 7} (line 400002)" in message


def test_it_refuses_a_file_cut_inside_a_multibyte_character(tmp_path):
    message = refusal(write(tmp_path, "id,city\n1,Montréal".encode()[:-3]))
    assert "ends inside a multi-byte character" in message


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (b"PAR1\x00\x00", "a Parquet file"),
        (b"\x1f\x8b\x08\x00", "a gzip-compressed file"),
        ("id,label\n1,a\n".encode("utf-16"), "UTF-16 text"),
    ],
)
def test_it_recognises_common_binary_formats(tmp_path, content, what):
    assert f"the file is {what}, not a comma-separated text file" in refusal(write(tmp_path, content))


def test_it_refuses_a_zip_archive_saved_as_csv(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("submission.csv", "id,label\n1,a\n")
    assert "a ZIP archive" in refusal(write(tmp_path, buffer.getvalue()))


def test_it_refuses_a_nul_byte_in_the_header_as_binary(tmp_path):
    message = refusal(write(tmp_path, b"id,lab\x00el\n1,a\n"))
    assert message.startswith("the header line holds a NUL byte at byte offset 6; the file looks binary")


def test_it_refuses_utf16_without_a_byte_order_mark(tmp_path):
    assert "looks binary or UTF-16" in refusal(write(tmp_path, "id,label\n1,a\n".encode("utf-16-le")))


def test_a_nul_byte_inside_a_value_is_left_to_the_grader_as_mlebench_does(tmp_path):
    path = write(tmp_path, b"id,label\n1,a\x00b\n2,c\n")
    frame = read_submission(path, **LIMITS)
    pd.testing.assert_frame_equal(frame, mlebench_read(path))
    assert frame["label"].tolist() == ["a\x00b", "c"]


def test_it_refuses_a_line_of_ten_megabytes_while_reading_it_in_small_pieces(tmp_path):
    path = write(tmp_path, b"id,label\n1," + b"x" * 10_000_000 + b"\n2,b\n")
    tracemalloc.start()
    try:
        message = refusal(path, max_line_bytes=1 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message.startswith("line 2 is 9.5 MiB long, over the 1.0 MiB limit on one line")
    assert peak < 4 * MiB  # streamed: never the whole 10 MB line in memory


def test_it_refuses_a_long_last_line_without_a_line_break(tmp_path):
    message = refusal(write(tmp_path, b"id,label\n1," + b"x" * 3000), max_line_bytes=1000)
    assert message.startswith("line 2 is 2.9 KiB long")


def test_it_accepts_lines_up_to_the_limit(tmp_path):
    path = write(tmp_path, b"id,label\n1," + b"x" * 998 + b"\n")
    assert read_submission(path, max_bytes=64 * MiB, max_line_bytes=1000)["label"].str.len().tolist() == [998]


def test_it_refuses_a_one_gigabyte_file_before_reading_any_of_it(tmp_path):
    path = tmp_path / "submission.csv"
    with path.open("wb") as f:
        f.truncate(1024 * MiB)  # sparse: takes no disk space and no time to write
    tracemalloc.start()
    started = time.perf_counter()
    try:
        message = refusal(path, max_bytes=64 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message.startswith("the file is 1.0 GiB, over the 64.0 MiB limit for this competition")
    assert peak < 1 * MiB
    assert time.perf_counter() - started < 1.0


def test_a_one_gigabyte_file_under_a_generous_cap_is_still_refused_from_its_first_chunk(tmp_path):
    path = tmp_path / "submission.csv"
    with path.open("wb") as f:
        f.truncate(1024 * MiB)
    tracemalloc.start()
    try:
        message = refusal(path, max_bytes=2048 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message.startswith("the header line holds a NUL byte at byte offset 0")
    assert peak < 4 * MiB


def test_a_gigabyte_long_line_is_refused_without_reading_it_to_the_end(tmp_path):
    path = tmp_path / "submission.csv"
    with path.open("wb") as f:
        f.write(b"id,label\n1,")
        f.write(b"x" * (40 * MiB))
    tracemalloc.start()
    try:
        message = refusal(path, max_line_bytes=1 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message.startswith("line 2 is more than 17.0 MiB long, over the 1.0 MiB limit")
    assert peak < 4 * MiB


def test_it_refuses_a_symbolic_link_even_to_a_good_csv(tmp_path):
    target = write(tmp_path, "id,label\n1,cat\n", name="answers.csv")
    link = tmp_path / "submission.csv"
    link.symlink_to(target)
    assert refusal(link) == "the submission is a symbolic link; include the file itself"


def test_it_refuses_a_file_that_cannot_be_opened(tmp_path):
    assert "cannot be read" in refusal(tmp_path / "nowhere.csv")


# --- limits ----------------------------------------------------------------------------------------


def test_limits_grow_with_the_answers_file_above_their_floors():
    assert limits_for_answers(answers_bytes=1000) == csvio.ReadLimits(64 * MiB, 1 * MiB)
    big = limits_for_answers(answers_bytes=90 * MiB, answers_longest_line=2 * MiB)
    assert big == csvio.ReadLimits(max_bytes=1800 * MiB, max_line_bytes=40 * MiB)


def test_longest_line_is_measured_across_chunk_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(textscan, "_CHUNK", 3)
    path = write(tmp_path, b"ab\nabcdefg\n\nabcd")
    assert longest_line_bytes(path) == 7


@pytest.mark.parametrize("chunk", [1, 3, 8, 1000])
def test_longest_line_at_least_a_length_is_exact_and_shorter_ones_stay_below_it(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(textscan, "_CHUNK", chunk)
    lines = [b"x" * n for n in (0, 3, 41, 2, 17, 0, 40, 5)]
    path = write(tmp_path, b"\n".join(lines) + b"\n")
    for at_least in (0, 1, 4, 10, 17, 40, 41):
        assert longest_line_bytes(path, at_least=at_least) == 41
    for at_least in (42, 60, 83, 1000):
        assert longest_line_bytes(path, at_least=at_least) < at_least


# --- block-by-block reading of large all-number files ---------------------------------------------

BLOCK_CASES = {
    "ints": "a,b\n" + "".join(f"{i},{i * 3}\n" for i in range(1000)),
    "ints and decimals in one column": "a,b\n" + "".join(f"{i},{i * 0.5 if i % 7 else i}\n" for i in range(1000)),
    "exponents, signs, inf, nan": "a,b\n"
    + "".join(
        f"{i},{['1e-300', '-0.0', 'inf', '-inf', 'nan', '1.7976931348623157e308', '+3'][i % 7]}\n" for i in range(1000)
    ),
    "booleans": "a,b\n" + "".join(f"{i},{'True' if i % 2 else 'False'}\n" for i in range(1000)),
    "duplicate column names": "a,a\n" + "".join(f"{i},{i}\n" for i in range(1000)),
    "CRLF line ends": "a,b\r\n" + "".join(f"{i},{i / 3}\r\n" for i in range(1000)),
    "blank lines between rows": "a,b\n" + "".join(f"{i},{i / 3}\n\n" for i in range(1000)),
    "quoted numbers": "a,b\n" + "".join(f'"{i}",{i}\n' for i in range(1000)),
}
FALLBACK_CASES = {
    "an empty cell late (int blocks, then a float block)": "a,b\n"
    + "".join(f"{i},{'' if i == 555 else i}\n" for i in range(1000)),
    "text late in a number column": "a,b\n" + "".join(f"{i},{'x' if i == 900 else i}\n" for i in range(1000)),
    "a text column": "a,b\n" + "".join(f"{i},id{i}\n" for i in range(1000)),
    "a row with an extra field": "a,b\n" + "".join(f"{i},{i}{',9' if i == 700 else ''}\n" for i in range(1000)),
    "integers beyond int64": "a,b\n" + "".join(f"{i},{2**63 + i}\n" for i in range(1000)),
    "CR-only line ends": "a,b\r" + "".join(f"{i},{i}\r" for i in range(1000)),
    "one field more than the header (pandas makes it the index)": "a,b\n"
    + "".join(f"{i + 100},{i / 2},{i * 3}\n" for i in range(1000)),
}


@pytest.mark.parametrize("case", sorted(BLOCK_CASES))
def test_an_all_number_file_read_in_blocks_is_the_frame_of_one_read_csv(tmp_path, case):
    path = write(tmp_path, BLOCK_CASES[case])
    blocks = csvio.read_numeric_blocks(path, max_rows=BLOCK_CASES[case].count("\n") + 1, block_rows=97)
    assert blocks is not None, "expected the block reader to take this file"
    expected = mlebench_read(path)
    pd.testing.assert_frame_equal(blocks, expected, check_exact=True)
    assert blocks.columns.equals(expected.columns) and blocks.index.equals(expected.index)


@pytest.mark.parametrize("case", sorted(FALLBACK_CASES))
def test_a_file_the_block_reader_cannot_vouch_for_is_left_to_one_read_csv(tmp_path, case):
    path = write(tmp_path, FALLBACK_CASES[case])
    assert csvio.read_numeric_blocks(path, max_rows=FALLBACK_CASES[case].count("\n") + 1, block_rows=97) is None


def test_large_submissions_take_the_block_reader_and_keep_mlebench_values(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "BLOCK_READ_MIN_BYTES", 1)
    monkeypatch.setattr(csvio, "BLOCK_ROWS", 50)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"event_id": np.arange(2000), "azimuth": rng.random(2000) * 6.28, "zenith": rng.random(2000)})
    path = write(tmp_path, frame.to_csv(index=False))
    taken = []
    original = csvio.read_numeric_blocks
    monkeypatch.setattr(csvio, "read_numeric_blocks", lambda *a, **k: taken.append(1) or original(*a, **k))
    pd.testing.assert_frame_equal(read_submission(path, **LIMITS), mlebench_read(path), check_exact=True)
    assert taken == [1]
    # a file it cannot vouch for still reads, and still fails, as one read_csv call makes it
    bad = write(tmp_path, "a,b\n1,2\n3,4,5\n", name="bad.csv")
    with pytest.raises(InvalidSubmission, match="line 3"):
        read_submission(bad, **LIMITS)


_PEAK = """
import sys
from pathlib import Path
from grading.engine import csvio
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) * 1024
path, mode = Path(sys.argv[1]), sys.argv[2]
before = rss()
frame = csvio._read_csv(path) if mode == "one" else csvio.read_numeric_blocks(path, max_rows=2_000_001)
print(rss() - before, int(frame.memory_usage(index=False).sum()))
"""


def test_the_block_reader_peaks_at_a_fraction_of_one_read_csv(tmp_path):
    import subprocess
    import sys

    rows = 2_000_000
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {"event_id": np.arange(rows) * 7, "azimuth": rng.random(rows) * 6.28, "zenith": rng.random(rows)}
    )
    path = write(tmp_path, frame.to_csv(index=False))
    root = Path(__file__).resolve().parents[3]

    def grown(mode: str) -> tuple[int, int]:
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, str(path), mode], cwd=root, check=True, capture_output=True, text=True
        ).stdout.split()
        return int(out[0]), int(out[1])

    one_call, size = grown("one")
    in_blocks, same_size = grown("blocks")
    assert same_size == size
    # measured here: one read_csv call about 4x the frame, the block reader the frame plus one block
    # (at 13.2 million rows: 1057 MB against 411 MB for a 317 MB frame)
    assert in_blocks < 0.6 * one_call and in_blocks < size + 100 * MiB, (in_blocks, one_call, size)


def test_large_answers_take_the_block_reader_too(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "BLOCK_READ_MIN_BYTES", 1)
    monkeypatch.setattr(csvio, "BLOCK_ROWS", 30)
    path = write(tmp_path, "event_id,azimuth,zenith\n" + "".join(f"{i},{i / 7},{i / 9}\n" for i in range(500)))
    taken = []
    original = csvio.read_numeric_blocks
    monkeypatch.setattr(csvio, "read_numeric_blocks", lambda *a, **k: taken.append(k["max_rows"]) or original(*a, **k))
    pd.testing.assert_frame_equal(read_answers(path), mlebench_read(path), check_exact=True)
    assert taken == [502]


# A submission column byte for byte the answers' column of the same name is held once (read_numeric_blocks(like=)).
def _answers_frame(rows: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {"event_id": np.arange(rows) * 3 + 7, "azimuth": rng.random(rows) * 6.28, "zenith": rng.random(rows)}
    )


def _read_like(tmp_path: Path, frame: pd.DataFrame, answers: pd.DataFrame) -> tuple[pd.DataFrame, Path]:
    path = write(tmp_path, frame.to_csv(index=False))
    read = csvio.read_numeric_blocks(path, max_rows=len(frame) + 1, block_rows=97, like=answers)
    assert read is not None
    return read, path


def _same_frame_bytes(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """assert_frame_equal, and the bytes too: it takes -0.0 for 0.0."""
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    for name in expected.columns:
        assert got[name].to_numpy().tobytes() == expected[name].to_numpy().tobytes(), name


def _shared(frame: pd.DataFrame, answers: pd.DataFrame, name: str) -> bool:
    return np.shares_memory(frame[name].to_numpy(), answers[name].to_numpy())


def test_a_submission_column_equal_to_the_answers_is_held_once_and_writes_to_it_copy_first(tmp_path):
    answers = _answers_frame()
    kept = answers.copy(deep=True)
    submission = answers.assign(azimuth=answers["azimuth"] + 0.5, zenith=0.25)
    read, path = _read_like(tmp_path, submission, answers)
    _same_frame_bytes(read, mlebench_read(path))
    assert _shared(read, answers, "event_id")
    assert not _shared(read, answers, "azimuth") and not _shared(read, answers, "zenith")
    # a grader writing into its frame, in place or through a column, never reaches the answers
    read.loc[0, "event_id"] = -1
    read["event_id"] += 1
    pd.testing.assert_frame_equal(answers, kept, check_exact=True)
    # and the other way round
    again, _ = _read_like(tmp_path, submission, answers)
    answers.loc[5, "event_id"] = 123456
    assert again["event_id"].iloc[5] == kept["event_id"].iloc[5]


SHARING_CASES = {
    # name: (how the submission differs from the answers, whether event_id is held once)
    "the same ids and angles (a copy of the answers)": (lambda a: a, True),
    "one id differs in the last block": (lambda a: a.assign(event_id=a["event_id"].where(a.index != 590, 1)), False),
    "one id differs in the first row": (lambda a: a.assign(event_id=a["event_id"].where(a.index != 0, 1)), False),
    "fewer rows than the answers": (lambda a: a.iloc[:450], True),
    "more rows than the answers": (
        lambda a: pd.concat([a, a.iloc[:30].assign(event_id=99_999)], ignore_index=True),
        False,
    ),
    "ids as floats": (lambda a: a.assign(event_id=a["event_id"] + 0.5), False),
    "rows in another order": (lambda a: a.iloc[::-1].reset_index(drop=True), False),
}


@pytest.mark.parametrize("case", sorted(SHARING_CASES))
def test_a_shared_column_gives_the_frame_of_one_read_csv_whatever_the_submission(tmp_path, case):
    answers = _answers_frame()
    change, shared = SHARING_CASES[case]
    read, path = _read_like(tmp_path, change(answers.copy()), answers)
    _same_frame_bytes(read, mlebench_read(path))
    assert _shared(read, answers, "event_id") is shared


def test_negative_zero_and_nan_are_told_apart_byte_for_byte(tmp_path):
    answers = pd.DataFrame({"id": np.arange(300), "value": np.where(np.arange(300) % 7 == 0, np.nan, 0.0)})
    # -0.0 equals 0.0 and is still another value: that column is not the answers', and keeps its sign
    negative = answers.assign(value=answers["value"].where(answers.index != 250, -0.0))
    read, path = _read_like(tmp_path, negative, answers)
    _same_frame_bytes(read, mlebench_read(path))
    assert np.signbit(read["value"].iloc[250]) and not _shared(read, answers, "value")
    assert _shared(read, answers, "id")
    # the answers' NaNs written out and read back are the same NaNs: held once
    read, path = _read_like(tmp_path, answers, answers)
    _same_frame_bytes(read, mlebench_read(path))
    assert _shared(read, answers, "value")


def test_columns_are_shared_only_by_name_and_only_with_answers_numbered_from_zero(tmp_path):
    answers = _answers_frame()
    renamed = answers.rename(columns={"event_id": "id"})
    read, path = _read_like(tmp_path, answers, renamed)
    _same_frame_bytes(read, mlebench_read(path))
    assert not np.shares_memory(read["event_id"].to_numpy(), renamed["id"].to_numpy())
    assert _shared(read, renamed, "azimuth")
    shifted = answers.set_axis(pd.RangeIndex(10, 10 + len(answers)))
    read, path = _read_like(tmp_path, answers, shifted)
    _same_frame_bytes(read, mlebench_read(path))
    assert not any(_shared(read, shifted, name) for name in answers.columns)


def test_a_large_submission_is_read_against_the_answers_given(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "BLOCK_READ_MIN_BYTES", 1)
    monkeypatch.setattr(csvio, "BLOCK_ROWS", 64)
    answers = _answers_frame()
    path = write(tmp_path, answers.assign(zenith=0.5).to_csv(index=False))
    read = read_submission(path, **LIMITS, answers=answers)
    _same_frame_bytes(read, mlebench_read(path))
    assert _shared(read, answers, "event_id") and _shared(read, answers, "azimuth")
