"""Redaction of secret values (runners/redaction.py, what the worker and the portal both apply), on real files."""

import ast
import os
from pathlib import Path

from runners import redaction as redaction_module
from runners.redaction import redact, redact_file, redact_tail, redact_tree, secret_values

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
    monkeypatch.setattr(redaction_module, "_CHUNK", 8)
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


def test_the_portal_takes_the_redaction_from_the_one_shared_module_not_from_the_workers_code() -> None:
    """One implementation both sides import (issue 21): no portal module reaches into the worker's collect.py,
    and the worker's collect.py no longer holds a redaction of its own."""
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for package in ("portal", "grading", "competitions", "leaderboard", "runners"):
        for path in (root / package).rglob("*.py"):
            if path.is_relative_to(root / "runners" / "worker"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
                if any(name.startswith("runners.worker.collect") for name in names):
                    offenders.append(path.relative_to(root).as_posix())
    assert offenders == []
    collect_source = (root / "runners" / "worker" / "collect.py").read_text()
    assert "def redact" not in collect_source and "from runners.redaction import" not in collect_source
