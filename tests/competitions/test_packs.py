import json
import tarfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from competitions.models import Competition, CompetitionPack
from competitions.services import competitions_load
from tests.competitions.builders import SPOOKY, spooky_submission, write_mlebench_data_dir, write_portal_pack


@pytest.fixture
def registry(db):
    competitions_load()


def _private_files() -> list[Path]:
    root = Path(settings.PRIVATE_ROOT)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_it_imports_a_pack_in_our_layout_into_private_storage(registry, tmp_path):
    call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky")))
    pack = CompetitionPack.objects.get(competition__slug=SPOOKY)
    stored = Path(settings.PRIVATE_ROOT) / pack.answers_path
    assert stored.read_text() == (tmp_path / "spooky" / "private" / "test.csv").read_text()
    assert stored.is_relative_to(settings.PRIVATE_ROOT)
    assert pack.description.startswith("# Spooky") and pack.source_layout == "portal"


def test_it_imports_an_mlebench_prepared_data_directory(registry, tmp_path):
    call_command("import_competition_pack", str(write_mlebench_data_dir(tmp_path / "data")))
    pack = CompetitionPack.objects.get(competition__slug=SPOOKY)
    assert pack.source_layout == "mlebench" and pack.answers_path.endswith("test.csv")


def test_reimporting_replaces_the_answers_and_removes_the_old_file(
    registry, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_competition_pack", str(write_portal_pack(tmp_path / "a")))
        call_command("import_competition_pack", str(write_portal_pack(tmp_path / "b")))
    assert CompetitionPack.objects.count() == 1
    assert sorted(p.name for p in _private_files()) == ["public.tar.gz", "sample_submission.csv", "test.csv"]


def _public_names(pack: CompetitionPack) -> list[str]:
    with tarfile.open(Path(settings.PRIVATE_ROOT) / pack.public_archive_path) as archive:
        return sorted(archive.getnames())


def test_the_public_folder_is_kept_for_hosted_runs_and_the_answers_are_not(registry, tmp_path):
    folder = write_portal_pack(tmp_path / "spooky")
    (folder / "public" / "train.csv").write_text("id,EAP,HPL,MWS\ntr1,1,0,0\n")
    call_command("import_competition_pack", str(folder))
    pack = CompetitionPack.objects.get(competition__slug=SPOOKY)
    assert _public_names(pack) == ["description.md", "sample_submission.csv", "train.csv"]
    assert pack.public_bytes == (Path(settings.PRIVATE_ROOT) / pack.public_archive_path).stat().st_size
    assert len(pack.public_sha256) == 64


def test_an_mlebench_directory_gives_its_prepared_public_folder(registry, tmp_path):
    call_command("import_competition_pack", str(write_mlebench_data_dir(tmp_path / "data")))
    pack = CompetitionPack.objects.get(competition__slug=SPOOKY)
    assert _public_names(pack) == ["description.md", "sample_submission.csv"]


@pytest.mark.parametrize("where", ["answers inside", "a link"])
def test_a_public_folder_that_would_leak_is_refused_and_nothing_is_kept(registry, tmp_path, where):
    folder = write_portal_pack(tmp_path / "spooky")
    if where == "answers inside":
        (folder / "public" / "test.csv").write_text((folder / "private" / "test.csv").read_text())
        spec = json.loads((folder / "pack.json").read_text())
        (folder / "pack.json").write_text(json.dumps({**spec, "answers": "public/test.csv"}))
        words = "holds the answers file"
    else:
        (folder / "public" / "answers.csv").symlink_to(folder / "private" / "test.csv")
        words = "is a link"
    with pytest.raises(CommandError, match=words):
        call_command("import_competition_pack", str(folder))
    assert not CompetitionPack.objects.exists() and _private_files() == []


def test_a_pack_leaderboard_gives_thresholds_only_where_kaggle_has_none(registry, tmp_path):
    write_portal_pack(tmp_path / "spooky", leaderboard=[0.1, 0.2, 0.3])
    call_command("import_competition_pack", str(tmp_path / "spooky"))
    spooky = Competition.objects.get(slug=SPOOKY)
    assert spooky.leaderboard_source == "kaggle" and spooky.gold_threshold == 0.16506

    without_board = next(c for c in Competition.objects.filter(gold_threshold__isnull=True) if "split75" in c.splits)
    pack = write_portal_pack(
        tmp_path / "other",
        competition_id=without_board.slug,
        leaderboard=[0.9, 0.8, 0.7, 0.6],
        extra={"grader": {"name": "log_loss_multiclass", "params": {}}},
    )
    call_command("import_competition_pack", str(pack))
    without_board.refresh_from_db()
    assert without_board.leaderboard_source == "pack"
    assert (without_board.gold_threshold, without_board.median_threshold) == (0.9, 0.75)
    assert without_board.is_lower_better is False


@pytest.mark.parametrize(
    ("breaks", "message"),
    [
        (lambda d: (d / "pack.json").write_text("{not json"), "is not valid JSON"),
        (
            lambda d: (d / "pack.json").write_text(
                json.dumps({"competition_id": "nope-such", "answers": "private/test.csv"})
            ),
            "no competition 'nope-such' in the current benchmark",
        ),
        (
            lambda d: (d / "pack.json").write_text(
                json.dumps({"competition_id": SPOOKY, "answers": "../../etc/passwd"})
            ),
            "points outside the pack folder",
        ),
        (lambda d: (d / "pack.json").write_text(json.dumps({"competition_id": SPOOKY})), "'answers' is required"),
        (lambda d: (d / "private" / "test.csv").unlink(), "which does not exist"),
        (
            lambda d: (d / "pack.json").write_text(
                json.dumps(
                    {"competition_id": SPOOKY, "answers": "private/test.csv", "grader": {"name": "no-such-grader"}}
                )
            ),
            "no grader named 'no-such-grader'",
        ),
    ],
)
def test_a_broken_pack_is_refused_with_a_clear_message_and_leaves_nothing(registry, tmp_path, breaks, message):
    folder = write_portal_pack(tmp_path / "spooky")
    breaks(folder)
    with pytest.raises(CommandError, match=message):
        call_command("import_competition_pack", str(folder))
    assert CompetitionPack.objects.count() == 0 and _private_files() == []


def test_an_empty_folder_says_what_a_pack_looks_like(registry, tmp_path):
    with pytest.raises(CommandError, match="No competition pack in"):
        call_command("import_competition_pack", str(tmp_path))


def test_answers_are_never_served(registry, tmp_path, client):
    call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky")))
    pack = CompetitionPack.objects.get()
    for url in (
        f"/media/{pack.answers_path}",
        f"/private/{pack.answers_path}",
        f"/static/{pack.answers_path}",
        f"/api/v1/competitions/{SPOOKY}/",
    ):
        response = client.get(url)
        assert b"id00000,1,0,0" not in response.content
        assert pack.answers_path.encode() not in response.content


def test_the_grade_command_prints_an_mlebench_report(registry, tmp_path, capsys):
    call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky")))
    capsys.readouterr()
    submission = tmp_path / "submission.csv"
    submission.write_text(spooky_submission(confidence=0.8))
    call_command("grade", "--competition", SPOOKY, str(submission))
    report = json.loads(capsys.readouterr().out)
    assert list(report) == [
        "competition_id",
        "score",
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
        "any_medal",
        "gold_medal",
        "silver_medal",
        "bronze_medal",
        "above_median",
        "submission_exists",
        "valid_submission",
        "is_lower_better",
        "created_at",
        "submission_path",
    ]
    # log loss of a 0.8 confidence on the right author for every row
    assert report["score"] == pytest.approx(round(-__import__("math").log(0.8), 5))
    # 0.22314 is between the official gold (0.16506) and silver (0.26996) thresholds; lower is better
    assert report["valid_submission"] and report["is_lower_better"]
    assert report["silver_medal"] and report["any_medal"] and not report["gold_medal"]


def test_the_grade_command_explains_an_invalid_submission(registry, tmp_path, capsys):
    call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky")))
    capsys.readouterr()
    submission = tmp_path / "submission.csv"
    submission.write_text("id;EAP;HPL;MWS\nid00000;1;0;0\n")
    call_command("grade", "--competition", SPOOKY, str(submission), "--with-reason")
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["score"] is None and report["valid_submission"] is False
    assert "comma-separated" in report["reason"] and "invalid submission" in captured.err


def test_the_grade_command_refuses_a_competition_without_a_pack(registry, tmp_path):
    (tmp_path / "s.csv").write_text("id\n")
    with pytest.raises(CommandError, match="has no competition pack"):
        call_command("grade", "--competition", SPOOKY, str(tmp_path / "s.csv"))
    with pytest.raises(CommandError, match="No competition 'nope'"):
        call_command("grade", "--competition", "nope", str(tmp_path / "s.csv"))


def test_a_synthetic_pack_brings_its_own_leaderboard_and_a_reload_keeps_it(registry, tmp_path):
    write_portal_pack(tmp_path / "spooky", leaderboard=[0.1, 0.2, 0.3, 0.4], extra={"synthetic": True})
    call_command("import_competition_pack", str(tmp_path / "spooky"))
    competitions_load()
    spooky = Competition.objects.get(slug=SPOOKY)
    assert spooky.leaderboard_source == "simulated" and spooky.gold_threshold == 0.1 and spooky.is_lower_better
    assert spooky.pack.synthetic and spooky.pack.leaderboard_answers_sha256 == spooky.pack.answers_sha256
    from django.test import Client

    page = Client().get(f"/competitions/{SPOOKY}/").content.decode()
    assert "simulated for the synthetic answers" in page and "synthetic demo pack's answers, not Kaggle" in page


def test_answers_that_do_not_fit_the_grader_are_refused_at_import(registry, tmp_path):
    broken = "id,EAP,HPL,MWS\n" + "".join(f"id{i:05d},x,y,z\n" for i in range(30))
    with pytest.raises(CommandError, match="the answers do not fit the grader 'log_loss_multiclass'"):
        call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky", answers=broken)))
    assert CompetitionPack.objects.count() == 0 and _private_files() == []


def test_every_split75_demo_pack_imports_and_its_sample_and_gold_grade_on_the_server(registry, tmp_path):
    from competitions.demo import make_demo_pack
    from competitions.demo.catalog import split_ids
    from grading.services.grade_file import grade_file

    out = tmp_path / "packs"
    make_demo_pack(out_dir=out, split="split75", size="small", seed=0, n_teams=12, workers=2)
    call_command("import_competition_pack", str(out))
    assert CompetitionPack.objects.count() == 75
    for slug in split_ids("split75"):
        competition = Competition.objects.select_related("pack").get(slug=slug)
        manifest = json.loads((out / slug / "pack.json").read_text())
        gold = grade_file(competition=competition, submission_path=out / slug / manifest["gold_submission"])
        assert gold.valid_submission, (slug, gold.to_dict(with_reason=True))
        sample = grade_file(competition=competition, submission_path=out / slug / manifest["sample_submission"])
        assert sample.valid_submission, (slug, sample.to_dict(with_reason=True))
