"""Writes to the competition registry: loading shipped data, setting leaderboards, importing packs."""

from dataclasses import fields as dataclass_fields

from django.db import transaction

from competitions.models import Benchmark, Competition
from competitions.shipped import ShippedBenchmark, read_benchmark
from grading.engine.medals import Thresholds, thresholds_from_leaderboard


def _threshold_fields(scores: list[float], source: str, official: Thresholds | None = None) -> dict:
    if not scores:
        return {
            "leaderboard_source": Competition.LeaderboardSource.NONE,
            "leaderboard_scores": [],
            "is_lower_better": None,
            "gold_threshold": None,
            "silver_threshold": None,
            "bronze_threshold": None,
            "median_threshold": None,
            "thresholds_from_official_report": False,
        }
    limits = official or thresholds_from_leaderboard(scores)
    return {
        "leaderboard_source": source,
        "leaderboard_scores": list(scores),
        "is_lower_better": limits.is_lower_better,
        "gold_threshold": limits.gold,
        "silver_threshold": limits.silver,
        "bronze_threshold": limits.bronze,
        "median_threshold": limits.median,
        "thresholds_from_official_report": official is not None,
    }


@transaction.atomic
def competitions_load(*, shipped: ShippedBenchmark | None = None) -> tuple[Benchmark, int, int]:
    """Create or update the benchmark and its competitions from shipped data. Running it twice changes nothing.

    A leaderboard that came from a competition pack is kept: the operator chose it by importing the pack.
    Returns (benchmark, created, updated).
    """
    shipped = shipped or read_benchmark()
    benchmark, _ = Benchmark.objects.get_or_create(name=shipped.name, version=shipped.version)
    changed = benchmark.commit != shipped.commit or not benchmark.is_current
    if changed:
        Benchmark.objects.filter(name=shipped.name, is_current=True).exclude(pk=benchmark.pk).update(is_current=False)
        benchmark.commit, benchmark.source_url, benchmark.is_current = shipped.commit, shipped.source_url, True
        benchmark.save()

    existing = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark)}
    created = updated = 0
    for item in shipped.competitions:
        fields = {f.name: getattr(item, f.name) for f in dataclass_fields(item)}
        scores = fields.pop("leaderboard_scores")
        official = fields.pop("official_thresholds")
        slug = fields.pop("slug")
        current = existing.get(slug)
        if current is None or current.leaderboard_source != Competition.LeaderboardSource.PACK:
            fields.update(_threshold_fields(scores, Competition.LeaderboardSource.KAGGLE, official))
        if current is None:
            Competition.objects.create(benchmark=benchmark, slug=slug, **fields)
            created += 1
        elif any(getattr(current, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(current, name, value)
            current.save()
            updated += 1
    return benchmark, created, updated


def competition_set_pack_leaderboard(*, competition: Competition, scores: list[float], synthetic: bool) -> None:
    """Thresholds from a pack's leaderboard: where the shipped data has no Kaggle leaderboard, or for a
    synthetic (demo) pack, whose answers only its own simulated leaderboard can judge."""
    if competition.leaderboard_source == Competition.LeaderboardSource.KAGGLE and not synthetic:
        return
    for name, value in _threshold_fields(scores, Competition.LeaderboardSource.PACK).items():
        setattr(competition, name, value)
    competition.save()
