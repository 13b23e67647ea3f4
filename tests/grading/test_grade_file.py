"""Grading one file on the server: a competition without a leaderboard, and a submission bigger than its answers."""

from pathlib import Path

import pytest
from django.core.management import call_command

from competitions.demo import make_demo_pack
from competitions.models import Competition
from competitions.services import competitions_load
from grading.engine import csvio, report
from grading.services.grade_file import grade_file

MELANOMA = "siim-isic-melanoma-classification"  # Low tier, and no Kaggle leaderboard in our data
HM = "h-and-m-personalized-fashion-recommendations"
TWELVE = (
    "0706016001 0706016002 0372860001 0610776002 0759871002 0464297007 0372860002 0610776001 0399223001 "
    "0706016003 0720125001 0156231001"
)


@pytest.fixture
def registry(db):
    competitions_load()


def mlebench_data(out: Path, competition_id: str) -> Path:
    make_demo_pack(out_dir=out, competition_ids=[competition_id], size="small", n_teams=5, layout="mlebench", workers=1)
    (out / competition_id / "leaderboard.csv").unlink()
    return out / competition_id


def hm_data(folder: Path, *, buyers: int, customers: int) -> Path:
    """h-and-m's prepared data: answers for the customers who bought, a sample submission listing them all."""
    private, public = folder / "prepared" / "private", folder / "prepared" / "public"
    private.mkdir(parents=True)
    public.mkdir(parents=True)
    ids = [f"{i:064x}" for i in range(customers)]
    (private / "answers.csv").write_text(
        "customer_id,prediction\n" + "".join(f"{c},706016001 372860001\n" for c in ids[:buyers])
    )
    (public / "sample_submission.csv").write_text("customer_id,prediction\n" + "".join(f"{c},{TWELVE}\n" for c in ids))
    return folder


def test_a_competition_without_a_leaderboard_is_graded_with_its_medals_unknown(registry, tmp_path):
    folder = mlebench_data(tmp_path / "data", MELANOMA)
    call_command("import_competition_pack", str(folder))
    competition = Competition.objects.select_related("pack").get(slug=MELANOMA)
    assert not competition.has_thresholds

    answers = next((folder / "prepared" / "private").glob("*.csv"))
    graded = grade_file(competition=competition, submission_path=answers)  # the answers are the gold submission
    assert graded.valid_submission and graded.score == 1.0 and graded.reason is None
    assert graded.medals_known is False and graded.gold_threshold is None and not graded.any_medal
    assert graded.is_lower_better is False  # the metric's direction (ROC AUC), where a leaderboard would give it
    assert graded.to_dict(with_reason=True)["medals_known"] is False


def test_an_h_and_m_submission_for_every_customer_is_graded_though_far_bigger_than_its_answers(
    registry, tmp_path, monkeypatch
):
    # Scaled down 70 times so that no 242 MB file is written: 20,000 customers, 60 of whom bought, and the
    # limit's 64 MiB floor lowered to 64 KiB (it is what let small answers files pass at full size).
    monkeypatch.setattr(csvio, "MIN_MAX_BYTES", 64 * 1024)
    report._limits_cached.cache_clear()
    folder = hm_data(tmp_path / HM, buyers=60, customers=20_000)
    call_command("import_competition_pack", str(folder))
    competition = Competition.objects.select_related("pack").get(slug=HM)
    honest = folder / "prepared" / "public" / "sample_submission.csv"  # twelve articles for every customer
    answers_bytes = (folder / "prepared" / "private" / "answers.csv").stat().st_size
    assert honest.stat().st_size > 20 * answers_bytes
    assert honest.stat().st_size <= competition.pack.max_submission_bytes

    graded = grade_file(competition=competition, submission_path=honest)
    assert graded.reason is None and graded.valid_submission and graded.score is not None


def test_intake_accepts_submissions_up_to_the_bound_recorded_at_import(registry, tmp_path, settings):
    from grading.services.intake import _submission_limits

    settings.BUNDLE_MAX_SUBMISSION_BYTES = 100_000
    call_command("import_competition_pack", str(hm_data(tmp_path / HM, buyers=60, customers=2_000)))
    pack = Competition.objects.select_related("pack", "benchmark").get(slug=HM).pack
    # 2,000 customers x (a quoted 64-digit id, twelve 10-digit articles quoted, a comma, CRLF), plus the header
    assert pack.max_submission_bytes == len('"customer_id","prediction"\r\n') + 2_000 * (66 + 1 + 133 + 2)
    assert _submission_limits(pack.competition.benchmark)[HM] == pack.max_submission_bytes
    settings.BUNDLE_MAX_SUBMISSION_BYTES = 512 * 1024**2
    assert _submission_limits(pack.competition.benchmark)[HM] == 512 * 1024**2  # never below the floor
