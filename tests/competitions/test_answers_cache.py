"""Parsed private answers cached on local disk: the same frame as a fresh parse, rebuilt when damaged."""

import pickle
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from competitions import answers_cache
from competitions.answers_cache import answers_cache_file, answers_load
from competitions.models import CompetitionPack
from competitions.services import competitions_load
from grading.engine import csvio
from grading.services.grade_file import grade_file
from tests.competitions.builders import SPOOKY, spooky_answers, spooky_submission, write_portal_pack

SHA = "ab" * 32


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def _answers_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answers.csv"
    path.write_text(text)
    return path


def test_a_load_parses_once_and_later_loads_give_the_same_frame_from_the_cache(tmp_path, monkeypatch):
    path = _answers_file(tmp_path, "id,label,score\na,x,1.5\nb,,2\nc,z,\n")
    first = answers_load(path=path, sha256=SHA)
    assert answers_cache_file(SHA).is_file()
    monkeypatch.setattr(csvio, "load_answers", lambda p: pytest.fail("parsed again instead of using the cache"))
    again = answers_load(path=path, sha256=SHA)
    fresh = pd.read_csv(path)
    pd.testing.assert_frame_equal(again, first)
    pd.testing.assert_frame_equal(again, fresh)
    assert list(again.dtypes) == list(fresh.dtypes)


def test_a_damaged_cache_entry_is_rebuilt_from_the_answers_file(tmp_path, caplog):
    path = _answers_file(tmp_path, "id,label\na,1\nb,0\n")
    answers_cache_file(SHA).parent.mkdir(parents=True)
    answers_cache_file(SHA).write_bytes(b"not a pickle")
    loaded = answers_load(path=path, sha256=SHA)
    assert loaded["label"].tolist() == [1, 0]
    assert "unreadable" in caplog.text
    with answers_cache_file(SHA).open("rb") as f:
        pd.testing.assert_frame_equal(pickle.load(f), loaded)


def test_without_a_checksum_nothing_is_cached(tmp_path):
    path = _answers_file(tmp_path, "id,label\na,1\n")
    assert answers_load(path=path, sha256="")["label"].tolist() == [1]
    assert not answers_cache_file("").parent.exists() or not any(answers_cache_file("").parent.iterdir())


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def broken_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(answers_cache.pickle, "dump", broken_dump)
    path = _answers_file(tmp_path, "id,label\na,1\n")
    assert answers_load(path=path, sha256=SHA)["label"].tolist() == [1]
    assert list(answers_cache_file(SHA).parent.iterdir()) == []


@pytest.mark.django_db
def test_pack_import_fills_the_cache_and_a_new_pack_drops_the_old_entry(tmp_path, django_capture_on_commit_callbacks):
    competitions_load()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_competition_pack", str(write_portal_pack(tmp_path / "a", leaderboard=[0.1, 0.5, 1.0])))
    first = CompetitionPack.objects.get(competition__slug=SPOOKY).answers_sha256
    assert answers_cache_file(first).is_file()

    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_competition_pack",
            str(write_portal_pack(tmp_path / "b", answers=spooky_answers(rows=60), leaderboard=[0.1, 0.5, 1.0])),
        )
    pack = CompetitionPack.objects.select_related("competition").get(competition__slug=SPOOKY)
    assert pack.answers_sha256 != first
    assert not answers_cache_file(first).exists() and answers_cache_file(pack.answers_sha256).is_file()

    submission = tmp_path / "submission.csv"
    submission.write_text(spooky_submission(rows=60))
    report = grade_file(competition=pack.competition, submission_path=submission)
    assert report.valid_submission and report.score is not None


@pytest.mark.django_db
def test_a_pack_import_that_fails_caches_nothing(tmp_path, monkeypatch, django_capture_on_commit_callbacks, data_dir):
    from competitions import pack_services

    competitions_load()

    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(pack_services, "competition_leaderboard_apply", broken)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        pack_services.pack_import(path=write_portal_pack(tmp_path / "a", leaderboard=[0.1, 0.5, 1.0]))
    assert CompetitionPack.objects.count() == 0
    cache = data_dir / "cache" / "answers"
    assert not cache.exists() or list(cache.iterdir()) == []
