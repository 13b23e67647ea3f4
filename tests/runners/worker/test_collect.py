"""The task's archive, on real files and real tar files (the redaction before it: tests/runners/test_redaction.py)."""

import io
import os
import tarfile
from pathlib import Path

import pytest

from runners.worker.collect import OverCap, collect, tree_bytes


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
