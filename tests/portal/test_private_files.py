"""Answers, everything under PORTAL_PRIVATE_ROOT, the local caches, uploads, the SQLite database and the
secret key are readable by the portal's own user only: 0600 files in 0700 folders, checked with os.stat."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from competitions.answers_cache import answers_cache_file
from competitions.models import CompetitionPack
from competitions.services import competitions_load
from tests.competitions.builders import SPOOKY, write_portal_pack

REPO = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _assert_private_tree(top: Path, leaf: Path) -> None:
    """leaf is a 0600 file and each folder from it up to top, top included, is 0700."""
    assert _mode(leaf) == 0o600, f"{leaf}: {oct(_mode(leaf))}"
    folder = leaf.parent
    while True:
        assert _mode(folder) == 0o700, f"{folder}: {oct(_mode(folder))}"
        if folder == top:
            break
        assert folder.is_relative_to(top)
        folder = folder.parent


@pytest.fixture
def private_root(settings, tmp_path):
    """Fresh private storage and data folder, configured as the settings configure them."""
    root = tmp_path / "private"
    settings.PRIVATE_ROOT = root
    settings.DATA_DIR = tmp_path / "data"
    private = settings.STORAGES["private"]
    settings.STORAGES = {
        **settings.STORAGES,
        "private": {**private, "OPTIONS": {**private["OPTIONS"], "location": root}},
    }
    return root


def test_an_imported_pack_and_its_parsed_answers_are_private(
    db, private_root, tmp_path, django_capture_on_commit_callbacks
):
    competitions_load()
    source = write_portal_pack(tmp_path / "spooky")
    (source / "private" / "test.csv").chmod(0o644)  # as a pack usually arrives
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_competition_pack", str(source))
    pack = CompetitionPack.objects.get(competition__slug=SPOOKY)

    _assert_private_tree(private_root, private_root / pack.answers_path)
    _assert_private_tree(private_root, private_root / pack.sample_submission_path)
    cached = answers_cache_file(pack.answers_sha256)
    assert cached.is_file()
    _assert_private_tree(tmp_path / "data" / "cache", cached)


def test_files_saved_to_private_storage_are_private(private_root):
    upload = SimpleUploadedFile("bundle.tar.gz", b"x" * 10)
    name = storages["private"].save("submissions/7/bundle.archive", upload)
    _assert_private_tree(private_root, private_root / name)


def test_uploads_are_kept_private_in_any_storage(settings, tmp_path):
    assert settings.FILE_UPLOAD_PERMISSIONS == 0o600 and settings.FILE_UPLOAD_DIRECTORY_PERMISSIONS == 0o700
    assert _mode(settings.FILE_UPLOAD_TEMP_DIR) == 0o700
    media = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path / "media"}}
    settings.STORAGES = {**settings.STORAGES, "default": media}
    name = storages["default"].save("a/b/upload.bin", SimpleUploadedFile("upload.bin", b"data"))
    _assert_private_tree(tmp_path / "media", tmp_path / "media" / name)


def _start(data: Path, script: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_PRIVATE_ROOT")}
    env.update({"PORTAL_DATA_DIR": str(data), "DJANGO_SETTINGS_MODULE": "portal.settings"})
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{script}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


WRITE_AND_REPORT_MODES = """
import os, stat
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE t (x int)")
    cursor.execute("INSERT INTO t VALUES (1)")
    # While the connection is open, SQLite's write-ahead log and shared-memory files lie beside the database.
    for suffix in ("-wal", "-shm"):
        print(suffix, oct(stat.S_IMODE(os.stat(str(connection.settings_dict["NAME"]) + suffix).st_mode)))
"""


def test_a_single_machine_install_keeps_its_database_key_and_private_folders_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir()  # as scripts/run makes it, with the usual umask
    assert _start(data, WRITE_AND_REPORT_MODES).split() == ["-wal", "0o600", "-shm", "0o600"]
    assert _mode(data / "db.sqlite3") == _mode(data / "secret_key") == 0o600
    for folder in ("private", "cache", "uploads-in-progress"):
        assert _mode(data / folder) == 0o700, folder


def test_an_older_install_is_tightened_on_start(tmp_path):
    data = tmp_path / "data"
    (data / "private" / "packs").mkdir(parents=True)
    (data / "cache").mkdir()
    (data / "secret_key").write_text("k" * 50)
    (data / "db.sqlite3").touch()
    for path in (data / "private", data / "cache"):
        path.chmod(0o755)
    for path in (data / "secret_key", data / "db.sqlite3"):
        path.chmod(0o644)
    _start(data)
    assert _mode(data / "private") == _mode(data / "cache") == 0o700
    assert _mode(data / "secret_key") == _mode(data / "db.sqlite3") == 0o600
    assert (data / "secret_key").read_text() == "k" * 50
