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
    assert found.hits[0].excerpt[1:] == [
        f"{written + 1}: before",
        f"{written + 2}: gold_medal: True",
        f"{written + 3}: after",
    ]
    assert peak < 16 * 1024 * 1024


def test_a_10_mb_line_is_scanned_in_pieces_and_shown_cut_around_the_hit(tmp_path):
    body = b"x" * (5 * 1024 * 1024) + b" private leaderboard score: 0.97 " + b"y" * (5 * 1024 * 1024) + b"\nnext\n"
    result = scan(tmp_path, body, max_line_bytes=65536)
    hit = result.get("test_score").hits[0]
    assert hit.line == 1 and len(hit.excerpt[0]) < 400 and "private leaderboard score: 0.97" in hit.excerpt[0]


def test_binary_files_are_read_for_their_printable_strings_and_listed(tmp_path):
    result = scan(tmp_path, b"\x00\x01gold_medal\x00" * 1000, name="weights.dat")
    assert result.get("grader_fields").total == 1000 and result.binary_strings == ["weights.dat"]
    assert scan(tmp_path, b"\x80\x04gold_medal", name="model.pkl").binary_strings == ["model.pkl"]
    assert scan(tmp_path, b"\x01\x02gold\x00\x03_medal" * 100, name="w.bin").get("grader_fields").total == 0


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


def lines_of(result, name="grader_fields"):
    return [hit.line for hit in result.get(name).hits]


def test_a_last_line_without_a_newline_is_scanned_with_its_number(tmp_path):
    result = scan(tmp_path, b"one\ntwo\ngold_medal")
    assert lines_of(result) == [3] and result.get("grader_fields").hits[0].excerpt[-1] == "3: gold_medal"


def test_the_context_is_clipped_at_the_start_and_end_of_the_file(tmp_path):
    result = scan(tmp_path, b"gold_medal first\nmiddle\nlast gold_medal\n")
    first, last = result.get("grader_fields").hits
    assert first.excerpt == ["1: gold_medal first", "2: middle", "3: last gold_medal"]
    assert last.excerpt == ["1: gold_medal first", "2: middle", "3: last gold_medal"]
    assert scan(tmp_path, b"a\nb\nc\ngold_medal\n", context_lines=0).get("grader_fields").hits[0].excerpt == [
        "4: gold_medal"
    ]


def test_hits_beyond_the_cap_are_counted_with_their_files_but_not_kept(tmp_path):
    (tmp_path / "b.log").write_bytes(b"gold_medal\n" * 3)
    (tmp_path / "a.log").write_bytes(b"gold_medal\n" * 3)
    result = scan_files(
        [("a.log", tmp_path / "a.log", "logs"), ("b.log", tmp_path / "b.log", "logs")], patterns=PATTERNS, max_hits=4
    )
    found = result.get("grader_fields")
    assert found.total == 6 and found.files == {"a.log", "b.log"} and len(found.hits) == 4
    assert [(h.file, h.line) for h in found.hits] == [("a.log", 1), ("a.log", 2), ("a.log", 3), ("b.log", 1)]
    assert found.as_evidence()["files"] == 2 and found.as_evidence()["total"] == 6


def test_an_excluded_line_is_no_hit(tmp_path):
    p = pattern("private", r"/private/", exclude=r"read-only")
    path = tmp_path / "a.log"
    path.write_bytes(b"mount /private/ read-only\ncat /private/answers.csv\n")
    assert lines_of(scan_files([("a.log", path, "logs")], patterns=[p]), "private") == [2]


def test_a_pattern_for_code_is_not_applied_to_logs_and_one_for_logs_not_to_code(tmp_path):
    code_only, logs_only = pattern("c", r"needle", where="code"), pattern("l", r"needle", where="logs")
    both = pattern("b", r"needle")
    path = tmp_path / "f"
    path.write_bytes(b"needle\n")
    as_log = scan_files([("f", path, "logs")], patterns=[code_only, logs_only, both])
    as_code = scan_files([("f", path, "code")], patterns=[code_only, logs_only, both])
    assert {n for n, r in as_log.by_pattern.items() if r.total} == {"l", "b"}
    assert {n for n, r in as_code.by_pattern.items() if r.total} == {"c", "b"}


def test_a_file_with_no_pattern_for_its_kind_is_not_read(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"needle\n")
    result = scan_files([("a.log", path, "logs")], patterns=[pattern("c", r"needle", where="code")])
    assert (result.files_scanned, result.bytes_scanned) == (0, 0)


def test_a_file_that_cannot_be_read_is_skipped_and_the_others_are_scanned(tmp_path):
    good = tmp_path / "good.log"
    good.write_bytes(b"gold_medal\n")
    seen = []
    result = scan_files(
        [("gone.log", tmp_path / "gone.log", "logs"), ("good.log", good, "logs")],
        patterns=PATTERNS,
        on_file=seen.append,
    )
    assert lines_of(result) == [1] and result.files_scanned == 1 and result.get("grader_fields").files == {"good.log"}
    assert seen == ["gone.log", "good.log"]


def test_an_empty_file_is_scanned_and_finds_nothing(tmp_path):
    result = scan(tmp_path, b"")
    assert result.files_scanned == 1 and result.bytes_scanned == 0 and result.by_pattern == {}


def test_binary_is_told_by_the_suffix_or_control_bytes_and_a_stray_nul_leaves_a_log_text(tmp_path):
    assert scan(tmp_path, b"gold_medal\n", name="weights.SAFETENSORS").binary_strings == ["weights.SAFETENSORS"]
    late_nul = b"x\n" * 5000 + b"\0\ngold_medal\n"
    result = scan(tmp_path, late_nul, name="late.log")
    assert result.binary_strings == [] and lines_of(result) == [5002]
    early_nul = scan(tmp_path, b"\0progress\ngold_medal: True\n", name="early.log")
    assert early_nul.binary_strings == [] and lines_of(early_nul) == [2]


def test_a_line_that_straddles_a_chunk_keeps_its_number(tmp_path):
    from grading.checks.scan import CHUNK

    width = 100
    row = b"x" * (width - 1) + b"\n"
    before = CHUNK // width  # the line that crosses the first chunk's end is line before + 1
    body = row * before + b"y" * 50 + b" gold_medal " + b"z" * 200 + b"\n" + b"gold_medal\n"
    assert len(row * before) < CHUNK < len(row * before) + 250
    assert lines_of(scan(tmp_path, body)) == [before + 1, before + 2]


def test_a_long_line_is_shown_as_the_part_around_the_hit(tmp_path):
    from grading.checks.scan import EXCERPT_CHARS

    result = scan(tmp_path, b"a" * 1000 + b" gold_medal " + b"b" * 1000 + b"\n")
    (shown,) = result.get("grader_fields").hits[0].excerpt
    assert shown.startswith("1: …") and shown.endswith("…") and "gold_medal" in shown
    assert len(shown) == len("1: ") + EXCERPT_CHARS + 2


def test_tabs_carriage_returns_and_control_bytes_are_shown_harmlessly(tmp_path):
    (shown,) = scan(tmp_path, b"\tgold_medal\x1b[31m\r\n", context_lines=0).get("grader_fields").hits[0].excerpt
    assert shown == "1:  gold_medal\N{REPLACEMENT CHARACTER}[31m "


def test_hits_are_kept_in_line_order_around_a_long_line_cut_at_a_chunk(tmp_path):
    body = b"gold_medal first\n" + b"gold_medal second " + b"x" * (2 * 1024 * 1024) + b"\nend\n"
    assert lines_of(scan(tmp_path, body, max_line_bytes=256)) == [1, 2]


def test_a_hit_records_where_its_match_is_in_the_shown_line_even_when_the_line_is_cut(tmp_path):
    for body in (
        b"before\nsaw gold_medal here\nafter\n",
        b"a" * 1000 + b" gold_medal " + b"b" * 1000 + b"\n",
        "é".encode() * 700 + b" gold_medal " + "ü".encode() * 700 + b"\n",  # bytes and characters differ
        b"gold_medal " + b"x" * 5000 + b"\n",  # at the very start of a long line
        b"x" * 5000 + b" gold_medal\n",  # at its very end
    ):
        (hit,) = scan(tmp_path, body).get("grader_fields").hits
        shown = next(line for line in hit.excerpt if line.startswith(f"{hit.line}: ")).split(": ", 1)[1]
        start, end = hit.as_dict()["match"]
        assert shown[start:end].lower() == "gold_medal", body[:40]
