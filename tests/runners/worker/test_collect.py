"""Redaction of secret values and the task's archive, on real files and real tar files."""

import io
import os
import tarfile
from pathlib import Path

import pytest

from runners.worker import collect as collect_module
from runners.worker.collect import (
    OverCap,
    collect,
    redact,
    redact_file,
    redact_tail,
    redact_tree,
    secret_values,
    tree_bytes,
)

SECRETS = {"API_KEY": "abc123secret", "SHORT": "abc"}


def test_it_blanks_each_secret_by_name_the_longest_first() -> None:
    assert redact("key abc123secret and abc", SECRETS) == "key [secret API_KEY] and [secret SHORT]"
    assert redact("nothing here", {}) == "nothing here"


def test_it_blanks_the_cheap_disguises_of_a_long_secret_and_not_those_of_a_short_one() -> None:
    import base64
    from urllib.parse import quote

    value = "sk/live+0123456789"
    for skip in range(3):  # base64 of the secret inside a longer text, at each alignment
        encoded = base64.b64encode(b"x" * skip + value.encode() + b"!").decode()
        assert "[secret API_KEY]" in redact(f"log {encoded} end", {"API_KEY": value}), skip
    for disguise in (value.upper(), value[::-1], value.encode().hex(), quote(value, safe="")):
        assert redact(f"log {disguise} end", {"API_KEY": value}) == "log [secret API_KEY] end", disguise
    assert redact("ABC cba", {"SHORT": "abc"}) == "ABC cba"  # too short to chase its disguises


def test_only_secrets_with_a_value_are_kept() -> None:
    env = {"API_KEY": "x1", "EMPTY": "", "PLAIN": "visible"}

    assert secret_values(env, ["API_KEY", "EMPTY", "MISSING"]) == {"API_KEY": "x1"}


def test_a_tail_cut_inside_a_secret_shows_no_piece_of_it() -> None:
    output = "start abc123secret middle abc123secret end"
    cut = output[output.index("secret middle") :]  # starts with the last 6 characters of the first secret

    tail = redact_tail(cut, {"API_KEY": "abc123secret"}, truncated=True)

    # Up to the longest disguise's length (its hex, 24 characters) is dropped at the cut.
    assert tail == "[secret API_KEY] end"
    assert redact_tail(output, {"API_KEY": "abc123secret"}, truncated=False) == (
        "start [secret API_KEY] middle [secret API_KEY] end"
    )


def test_it_blanks_a_secret_that_spans_two_read_chunks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(collect_module, "_CHUNK", 8)
    path = tmp_path / "log.txt"
    path.write_bytes(b"0123456abc123secret-and-abc123secret" + b"x" * 20 + b"abc123secret")
    os.chmod(path, 0o640)

    assert redact_file(path, SECRETS)

    assert path.read_bytes() == (b"0123456[secret API_KEY]-and-[secret API_KEY]" + b"x" * 20 + b"[secret API_KEY]")
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)


def test_it_leaves_a_file_without_secrets_untouched(tmp_path: Path) -> None:
    path = tmp_path / "clean.bin"
    path.write_bytes(bytes(range(100, 256)) * 3)  # no "abc" in it
    before = path.stat().st_mtime_ns

    assert not redact_file(path, SECRETS)
    assert path.stat().st_mtime_ns == before


def test_it_redacts_every_file_of_a_tree_but_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("abc123secret")
    tree = tmp_path / "code"
    (tree / "deep").mkdir(parents=True)
    (tree / "deep" / "a.py").write_text("K='abc123secret'")
    (tree / "link.txt").symlink_to(outside)

    assert redact_tree([tree, tmp_path / "missing"], SECRETS) == 1

    assert (tree / "deep" / "a.py").read_text() == "K='[secret API_KEY]'"
    assert outside.read_text() == "abc123secret"


def make_home(tmp_path: Path) -> Path:
    home = tmp_path / "task"
    for name in ("submission", "logs", "code"):
        (home / name).mkdir(parents=True)
    (home / "submission" / "submission.csv").write_text("id,target\n1,0\n")
    (home / "logs" / "agent.log").write_text("hello\n")
    (home / "code" / "agent.py").write_text("print(1)\n")
    (home / "run.log").write_text("output\n")
    (home / "oracle").mkdir()
    (home / "scratch.bin").write_bytes(b"\0" * 100)
    return home


def names(archive: Path) -> list[str]:
    with tarfile.open(archive) as tar:
        return sorted(member.name for member in tar.getmembers())


def test_it_archives_the_submission_logs_code_and_run_log_only(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    archive = tmp_path / "out.tar.gz"

    assert collect(home, archive, max_bytes=10_000) == []

    assert names(archive) == [
        "code", "code/agent.py", "logs", "logs/agent.log", "run.log", "submission", "submission/submission.csv",
    ]  # fmt: skip
    with tarfile.open(archive) as tar:
        assert {member.uid for member in tar.getmembers()} == {0}
        assert tar.extractfile("run.log").read() == b"output\n"  # type: ignore[union-attr]


def test_it_leaves_links_out_of_the_archive(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "code" / "passwd").symlink_to("/etc/passwd")
    os.mkfifo(home / "logs" / "pipe")

    skipped = collect(home, tmp_path / "out.tar.gz", max_bytes=10_000)

    assert sorted(skipped) == ["code/passwd", "logs/pipe"]
    assert "code/passwd" not in names(tmp_path / "out.tar.gz")


def test_it_refuses_outputs_over_the_cap_and_writes_nothing(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "code" / "weights.bin").write_bytes(b"\0" * 5000)

    with pytest.raises(OverCap, match="over the cap of 1000 bytes"):
        collect(home, tmp_path / "out.tar.gz", max_bytes=1000)
    assert not (tmp_path / "out.tar.gz").exists()


def test_tree_bytes_counts_files_not_folders_nor_link_targets(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x" * 10)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 10_000)
    (tmp_path / "a" / "link").symlink_to(big)

    assert tree_bytes([tmp_path / "a", tmp_path / "missing"]) == 10 + len(os.fsencode(big))


def test_an_archive_round_trips_through_a_reader(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    archive = tmp_path / "out.tar.gz"
    collect(home, archive, max_bytes=10_000)

    with tarfile.open(fileobj=io.BytesIO(archive.read_bytes()), mode="r:gz") as tar:
        tar.extractall(tmp_path / "back", filter="data")
    assert (tmp_path / "back" / "submission" / "submission.csv").read_text() == "id,target\n1,0\n"
