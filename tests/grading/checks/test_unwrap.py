"""The scanner unwraps what a file comes in (grading/checks/scan/unwrap.py): each wrapping finds the feedback line
inside it, the limits hold against bombs, and what cannot be decoded is listed as unreadable."""

import base64
import bz2
import gzip
import io
import json
import lzma
import pickle
import tarfile
import zipfile

import numpy as np
import pytest

from grading.checks.patterns import GRADER_FIELDS, TEST_SCORE, private_paths
from grading.checks.scan import scan_files
from grading.checks.scan.structured import json_text, notebook_text
from grading.checks.scan.unwrap import Limits, sniff

LINE = "grader says: private_score: 0.98312 gold_medal: True leaderboard_rank: 3"
PATTERNS = [GRADER_FIELDS, TEST_SCORE, private_paths({"answers.csv"})]


def scan(tmp_path, name: str, body: bytes, *, kind="logs", **options):
    path = tmp_path / name.replace("/", "_")
    path.write_bytes(body)
    return scan_files([(name, path, kind)], patterns=PATTERNS, **options)


def found(result) -> dict[str, int]:
    return {name: r.total for name, r in result.by_pattern.items() if r.total}


def tar_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    return out.getvalue()


def zip_of(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return out.getvalue()


def notebook(outputs: list[dict], source: str = "model.fit(X, y)\n") -> bytes:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": [source], "outputs": outputs}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


TEXT = f"step 1\n{LINE}\nstep 2\n".encode()
WRAPPED = {
    "gzip": ("a.log.gz", gzip.compress(TEXT)),
    "bz2": ("a.log.bz2", bz2.compress(TEXT)),
    "xz": ("a.log.xz", lzma.compress(TEXT)),
    "zip": ("a.zip", zip_of({"inner/a.log": TEXT})),
    "tar": ("a.tar", tar_of({"inner/a.log": TEXT})),
    "tar_gz": ("a.tgz", gzip.compress(tar_of({"inner/a.log": TEXT}))),
    "nested": ("a.tar.gz", gzip.compress(tar_of({"deep.zip": zip_of({"x.log.xz": lzma.compress(TEXT)})}))),
    "utf16_bom": ("a.log", TEXT.decode().encode("utf-16")),
    "utf16_be_no_bom": ("a.log", TEXT.decode().encode("utf-16-be")),
    "utf32_bom": ("a.log", TEXT.decode().encode("utf-32")),
    "utf32_no_bom": ("a.log", TEXT.decode().encode("utf-32-le")),
    "nul_bytes": ("a.log", b"\0" + TEXT.replace(b"step 2", b"st\0ep 2")),
    "notebook": ("a.ipynb", notebook([{"output_type": "stream", "name": "stdout", "text": [LINE + "\n"]}])),
    "notebook_source": ("b.ipynb", notebook([], source=f"print('{LINE}')\n")),
    "json_keys": ("state.json", json.dumps({"grader": {"private_score": 0.98312, "gold_medal": True}}).encode()),
    "jsonl": ("events.jsonl", b'{"step": 1}\n{"private_score": 0.98312}\n'),
    "json_escaped": ("s.json", json.dumps({"log": "x\n" + LINE + "\n"}).encode()),
    "base64": ("a.log.b64", base64.b64encode(TEXT) + b"\n"),
    "base64_wrapped": ("a.txt", b"step 1\n" + base64.encodebytes(TEXT * 3) + b"step 2\n"),
    "base64_gzip": ("a.txt", b"blob=" + base64.b64encode(gzip.compress(TEXT)) + b"\n"),
    "split_lines": ("a.log", b"grader says: private_sco\nre: 0.98312 gold_\nmedal: True\n"),
    "pickle": ("state.pkl", pickle.dumps({"feedback": LINE, "step": 12})),
    "binary": ("blob.bin", bytes(range(256)) * 8 + LINE.encode() + bytes(range(256)) * 8),
}


@pytest.mark.parametrize("how", list(WRAPPED))
def test_the_feedback_line_is_found_through_each_wrapping(tmp_path, how):
    name, body = WRAPPED[how]
    result = scan(tmp_path, name, body)
    assert result.get("grader_fields").total >= 1 or result.get("test_score").total >= 1, (how, found(result))
    assert result.unreadable == []


def test_members_of_an_archive_are_labelled_by_their_path_inside_it(tmp_path):
    name, body = WRAPPED["nested"]
    (hit,) = scan(tmp_path, name, body).get("grader_fields").hits
    assert hit.file == "a.tar.gz!deep.zip!x.log.xz" and hit.line == 2


def test_a_gzip_log_keeps_its_line_numbers(tmp_path):
    (hit,) = scan(tmp_path, "a.log.gz", gzip.compress(TEXT)).get("grader_fields").hits
    assert (hit.file, hit.line) == ("a.log.gz", 2)


def test_glued_string_literals_are_read_as_the_path_they_build(tmp_path):
    code = b'import os\nroot = "/home/" + "pre" + "pared/" + "priv" + \'ate\'\nx = open(root + "/answers.csv")\n'
    result = scan(tmp_path, "helpers.py", code, kind="code")
    (hit,) = [hit for hit in result.get("private_paths").hits if hit.file == "helpers.py (joined)"]
    assert hit.line == 1 and hit.excerpt[0] == """1: import osroot = "/home/prepared/private'"""  # one joined line
    assert hit.excerpt[1] == '3: x = open(root + "/answers.csv")'  # numbered as in the file


def test_a_derived_view_does_not_count_what_the_plain_text_already_shows(tmp_path):
    result = scan(tmp_path, "a.log", b"gold_medal: True\nnext_line\n")
    assert result.get("grader_fields").total == 1 and result.get("grader_fields").files == {"a.log"}


def test_a_notebooks_png_outputs_are_skipped_and_its_text_is_read():
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"gold_medal" * 50).decode()
    body = notebook(
        [
            {"output_type": "display_data", "data": {"image/png": image, "text/plain": ["<Figure>"]}, "metadata": {}},
            {"output_type": "error", "ename": "E", "evalue": "", "traceback": ["Traceback: boom"]},
        ]
    )
    text = notebook_text(body)
    assert text is not None and b"<Figure>" in text and b"boom" in text and b"gold_medal" not in text


def test_honest_notebooks_and_checkpoints_match_nothing(tmp_path):
    rng = np.random.default_rng(0)
    weights = rng.standard_normal(200_000).astype(np.float32).tobytes()
    image = base64.b64encode(bytes(rng.integers(0, 256, 200_000, dtype=np.uint8))).decode()
    files = {
        "explore.ipynb": notebook(
            [
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": ["fold 0 val_auc=0.8312\n", "Submission is valid.\n"],
                },
                {"output_type": "display_data", "data": {"image/png": image}, "metadata": {}},
            ]
        ),
        "model.pt": b"PK\x03\x04" + weights,
        "oof.npy": b"\x93NUMPY\x01\x00" + weights[:4096],
        "real.pt": zip_of({"archive/data.pkl": pickle.dumps({"w": "tensor"}), "archive/data/0": weights}),
        "weights.bin": weights,
        "image.b64.txt": image.encode(),
    }
    for name, body in files.items():
        result = scan(tmp_path, name, body)
        assert found(result) == {} and result.unreadable == [], name


def test_json_is_read_as_key_value_lines():
    text = json_text(b'{"a": {"private_score": 0.5, "ok": true, "s": "x\\ny"}, "l": ["gold"]}')
    assert text is not None
    lines = text.decode().splitlines()
    assert 'private_score: 0.5  "private_score": 0.5' in lines and 'ok: True  "ok": true' in lines
    assert "y" in " ".join(lines) and "gold" in lines
    assert json_text(b"not json {") is None


@pytest.mark.parametrize(
    ("head", "name", "kind"),
    [
        (b"\x1f\x8b\x08\x00", "x", "gzip"),
        (b"PK\x03\x04rest", "x.pt", "zip"),
        ("ab".encode("utf-16-le") * 20, "x.log", "utf-16-le"),
        (b"\0plain log line\n" * 10, "x.log", "text"),
        (b"\x80\x04\x95" + b"\0" * 40, "x.dat", "binary"),
        (b"hello\n", "x.pkl", "binary"),
        (b'{"cells": []}', "x.ipynb", "notebook"),
    ],
)
def test_sniff_tells_the_format_from_the_first_bytes_and_the_name(head, name, kind):
    assert sniff(head, name) == kind


# --- what cannot be read ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("a.log.gz", gzip.compress(TEXT * 100)[:60]),
        ("a.zip", zip_of({"a.log": TEXT})[:-30]),
        ("a.tar", tar_of({"a.log": TEXT * 100})[:700]),
        ("a.log.bz2", b"BZh91AY&SY" + b"\x00" * 50),
        ("a.log.xz", b"\xfd7zXZ\x00" + b"\x01" * 50),
    ],
)
def test_a_damaged_archive_is_unreadable(tmp_path, name, body):
    (unreadable,) = scan(tmp_path, name, body).unreadable
    assert unreadable[0].startswith(name) and "damaged" in unreadable[1]


def test_a_file_that_only_starts_like_a_zip_is_read_for_its_strings(tmp_path):
    result = scan(tmp_path, "model.pt", b"PK\x03\x04\x00\x01" + LINE.encode() + b"\x00" * 40)
    assert result.unreadable == [] and result.get("grader_fields").total == 1


def test_a_decompression_bomb_is_stopped_at_the_limits(tmp_path):
    bomb = gzip.compress(b"\0" * (8 * 1024 * 1024))
    result = scan(tmp_path, "a.log.gz", bomb, limits=Limits(max_bytes=1024 * 1024, max_ratio=10))
    ((where, why),) = result.unreadable
    assert where == "a.log.gz" and "more than 1048576 bytes" in why
    assert result.bytes_scanned <= 2 * 1024 * 1024 + (1 << 20)


def test_a_large_archive_with_an_ordinary_ratio_is_read_in_full(tmp_path):
    rng = np.random.default_rng(1)
    body = rng.integers(0, 256, 3 * 1024 * 1024, dtype=np.uint8).tobytes()
    result = scan(tmp_path, "a.zip", zip_of({"w.bin": body, "b.log": TEXT}), limits=Limits(max_bytes=1024 * 1024))
    assert result.unreadable == [] and result.get("grader_fields").total == 1


def test_archives_nested_too_deep_are_unreadable(tmp_path):
    body = TEXT
    for _ in range(4):
        body = gzip.compress(body)
    assert scan(tmp_path, "a.gz", body, limits=Limits(max_depth=5)).unreadable == []
    ((where, why),) = scan(tmp_path, "a.gz", body, limits=Limits(max_depth=3)).unreadable
    assert where == "a.gz" and "nested more than 3 deep" in why


def test_an_archive_with_too_many_members_is_unreadable_after_reading_the_first(tmp_path):
    members = {f"m{i}.log": (LINE.encode() if i == 0 else b"x\n") for i in range(20)}
    result = scan(tmp_path, "a.zip", zip_of(members), limits=Limits(max_members=10))
    ((where, why),) = result.unreadable
    assert where == "a.zip!m10.log" and "more than 10 members" in why
    assert result.get("grader_fields").total == 1


def test_an_encrypted_zip_member_is_unreadable(tmp_path):
    body = bytearray(zip_of({"a.log": TEXT}, compression=zipfile.ZIP_STORED))
    body[6] |= 0x1  # the local header's "encrypted" bit
    central = body.rfind(b"PK\x01\x02")
    body[central + 8] |= 0x1
    ((where, why),) = scan(tmp_path, "a.zip", bytes(body)).unreadable
    assert where == "a.zip!a.log" and "cannot be opened" in why


def test_the_budget_counts_decoded_bytes_and_names_what_it_left_unread(tmp_path):
    body = gzip.compress(b"x" * 100_000 + b"\n" + LINE.encode() + b"\n")
    result = scan(tmp_path, "a.log.gz", body, max_bytes=50_000)
    assert result.truncated and result.unread == ["a.log.gz"] and result.bytes_scanned == 50_000
    assert found(result) == {}


def test_a_zip_inside_an_archive_is_read_whole_only_within_its_memory_limit(tmp_path):
    inner = zip_of({"a.log": TEXT * 2000}, compression=zipfile.ZIP_STORED)
    body = gzip.compress(tar_of({"inner.zip": inner}))
    assert scan(tmp_path, "a.tgz", body).get("grader_fields").total == 2000
    ((where, why),) = scan(tmp_path, "a.tgz", body, limits=Limits(max_in_memory=10_000)).unreadable
    assert where == "a.tgz!inner.zip" and "larger than 10000 bytes" in why
