"""The streaming scanner on real bundles' junk: big files, 10 MB lines, binary, non-UTF-8."""

import tracemalloc

from grading.checks.patterns import GRADER_FIELDS, TEST_SCORE, private_paths
from grading.checks.scan import pattern, scan_files
from tests.grading.checks.builders import AIDE_LOG, HONEST_CODE

PATTERNS = [GRADER_FIELDS, TEST_SCORE, private_paths({"test.csv", "answers.csv"})]


def scan(tmp_path, body: bytes, *, name="run.log", kind="logs", **options):
    path = tmp_path / name
    path.write_bytes(body)
    return scan_files([(name, path, kind)], patterns=PATTERNS, **options)


def test_a_hit_deep_in_a_large_file_has_its_line_number_and_memory_stays_bounded(tmp_path):
    line = b"Epoch 3: 100%|##########| 781/781 [00:42<00:00, 18.4it/s, loss=0.6931]\n"
    count = 150 * 1024 * 1024 // len(line)
    path = tmp_path / "big.log"
    with path.open("wb") as f:
        for _ in range(count // 10000):
            f.write(line * 10000)
        f.write(b"before\ngold_medal: True\nafter\n")
    written = (count // 10000) * 10000
    tracemalloc.start()
    result = scan_files([("big.log", path, "logs")], patterns=PATTERNS)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    found = result.get("grader_fields")
    assert found.total == 1 and found.hits[0].line == written + 2
    assert found.hits[0].excerpt[0].startswith(f"{written}: Epoch 3")
    assert found.hits[0].excerpt[1:] == [f"{written + 1}: before", f"{written + 2}: gold_medal: True", f"{written + 3}: after"]
    assert peak < 16 * 1024 * 1024


def test_a_10_mb_line_is_scanned_in_pieces_and_shown_cut_around_the_hit(tmp_path):
    body = b"x" * (5 * 1024 * 1024) + b" private leaderboard score: 0.97 " + b"y" * (5 * 1024 * 1024) + b"\nnext\n"
    result = scan(tmp_path, body, max_line_bytes=65536)
    hit = result.get("test_score").hits[0]
    assert hit.line == 1 and len(hit.excerpt[0]) < 400 and "private leaderboard score: 0.97" in hit.excerpt[0]


def test_binary_files_are_skipped_and_listed(tmp_path):
    result = scan(tmp_path, b"\x00\x01gold_medal\x00" * 1000, name="weights.dat")
    assert result.get("grader_fields").total == 0 and result.skipped_binary == ["weights.dat"]
    assert scan(tmp_path, b"gold_medal", name="model.pkl").skipped_binary == ["model.pkl"]


def test_bytes_that_are_not_utf8_are_decoded_leniently(tmp_path):
    result = scan(tmp_path, b"caf\xe9 \xff\xfe read /private/data/x/prepared/private/answers.csv\n")
    (hit,) = result.get("private_paths").hits
    assert "prepared/private/answers.csv" in hit.excerpt[0] and "\N{REPLACEMENT CHARACTER}" in hit.excerpt[0]


def test_carriage_return_progress_bars_and_crlf_do_not_break_lines(tmp_path):
    bar = b"".join(b"\r 45%%|####      | %d/781" % i for i in range(20000))
    result = scan(tmp_path, bar + b"\r\nmedal: 1\r\n")
    assert result.get("test_score").hits[0].line == 2


def test_honest_aide_logs_and_code_match_nothing(tmp_path):
    from grading.checks.patterns import all_patterns
    from tests.grading.checks.builders import bundle

    context = bundle(tmp_path)
    log, code = tmp_path / "aide.log", tmp_path / "runfile.py"
    log.write_text(AIDE_LOG.format(cid="x") * 200)
    code.write_text(HONEST_CODE)
    result = scan_files([("aide.log", log, "logs"), ("runfile.py", code, "code")], patterns=all_patterns(context))
    assert {name: r.total for name, r in result.by_pattern.items() if r.total} == {}


def test_the_byte_budget_stops_the_scan_and_says_so(tmp_path):
    result = scan(tmp_path, b"line\n" * 100000, max_bytes=1000)
    assert result.truncated and result.bytes_scanned <= 1000


def test_two_matches_of_one_pattern_on_one_line_count_once(tmp_path):
    p = pattern("both", r"alpha|beta")
    path = tmp_path / "a.log"
    path.write_bytes(b"alpha beta\nbeta\n")
    assert scan_files([("a.log", path, "logs")], patterns=[p]).get("both").total == 2
