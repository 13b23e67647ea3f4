import csv
from pathlib import Path

import pytest
from django.forms.models import model_to_dict

from competitions.models import Benchmark, Competition
from competitions.services import competitions_load
from grading.engine.medals import thresholds_from_leaderboard

DATA = Path(__file__).resolve().parents[2] / "competitions" / "data" / "mlebench-v1"


@pytest.fixture
def registry(db):
    competitions_load()


def test_it_loads_all_82_competitions_with_their_tiers(registry):
    assert Competition.objects.count() == 82
    counts = {tier: Competition.objects.filter(tier=tier).count() for tier in ("low", "medium", "high")}
    assert counts == {"low": 22, "medium": 38, "high": 15}
    split75 = [c for c in Competition.objects.all() if "split75" in c.splits]
    dev = [c for c in Competition.objects.all() if "dev" in c.splits]
    assert len(split75) == 75 and len(dev) == 7
    benchmark = Benchmark.objects.get()
    assert (benchmark.name, benchmark.version, benchmark.is_current) == ("mle-bench", "v1", True)
    assert benchmark.commit == "783b15af77404fbaffe7255b0c4a934b46153389"


def test_running_the_load_twice_changes_nothing(registry):
    before = [model_to_dict(c) for c in Competition.objects.order_by("slug")]
    _, created, updated = competitions_load()
    assert (created, updated) == (0, 0)
    assert [model_to_dict(c) for c in Competition.objects.order_by("slug")] == before


def test_68_competitions_have_kaggle_thresholds_and_the_rest_say_they_have_none(registry):
    with_board = Competition.objects.filter(leaderboard_source=Competition.LeaderboardSource.KAGGLE)
    assert with_board.count() == 68
    in_75_without = [c.slug for c in Competition.objects.filter(gold_threshold__isnull=True) if "split75" in c.splits]
    assert len(in_75_without) == 7


def test_thresholds_equal_the_official_graders_for_all_16_reported_competitions(registry):
    rows = list(csv.DictReader((DATA / "official_thresholds.csv").open()))
    for row in rows:
        c = Competition.objects.get(slug=row["competition_id"])
        assert [c.gold_threshold, c.silver_threshold, c.bronze_threshold, c.median_threshold] == [
            float(row[f"{name}_threshold"]) for name in ("gold", "silver", "bronze", "median")
        ]
        assert c.thresholds_from_official_report


def test_computed_thresholds_equal_the_official_graders_wherever_the_leaderboard_is_the_same(registry):
    from tests.grading.engine.test_medals import MISSING_ROWS  # explained there: rows missing from our copies

    rows = list(csv.DictReader((DATA / "official_thresholds.csv").open()))
    assert len(rows) == 16
    same = [row for row in rows if row["competition_id"] not in MISSING_ROWS]
    assert len(same) == 7
    for row in same:
        c = Competition.objects.get(slug=row["competition_id"])
        limits = thresholds_from_leaderboard(c.leaderboard_scores)
        c.gold_threshold, c.silver_threshold, c.bronze_threshold, c.median_threshold = (
            limits.gold,
            limits.silver,
            limits.bronze,
            limits.median,
        )
        for name in ("gold", "silver", "bronze", "median"):
            assert getattr(c, f"{name}_threshold") == pytest.approx(
                float(row[f"{name}_threshold"]), abs=0, rel=1e-12
            ), (c.slug, name)
        assert c.is_lower_better == (row["is_lower_better"] == "True")


def test_known_issues_and_deviations_are_kept(registry):
    pizza = Competition.objects.get(slug="random-acts-of-pizza")
    assert any("giver_username_if_known" in issue for issue in pizza.known_issues)
    ranzcr = Competition.objects.get(slug="ranzcr-clip-catheter-line-classification")
    assert "9" in ranzcr.metric and "11" in ranzcr.metric
