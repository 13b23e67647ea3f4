"""Writes to the competition registry: loading shipped data, putting the leaderboard in force."""

import dataclasses
from dataclasses import fields as dataclass_fields

from django.db import transaction

from competitions.models import Benchmark, Competition, CompetitionPack, KnownIssue, KnownIssueRemoval
from competitions.selectors import LeaderboardInForce, competition_leaderboard_in_force, leaderboard_in_force
from competitions.shipped import ShippedBenchmark, read_benchmark
from competitions.signals import THRESHOLD_FIELDS, thresholds_changed
from grading.engine.medals import thresholds_from_leaderboard


def _threshold_fields(choice: LeaderboardInForce) -> dict:
    if choice.source == Competition.LeaderboardSource.NONE:
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
    limits = choice.official or thresholds_from_leaderboard(choice.scores)
    return {
        "leaderboard_source": choice.source,
        "leaderboard_scores": list(choice.scores),
        "is_lower_better": limits.is_lower_better,
        "gold_threshold": limits.gold,
        "silver_threshold": limits.silver,
        "bronze_threshold": limits.bronze,
        "median_threshold": limits.median,
        "thresholds_from_official_report": choice.official is not None,
    }


@transaction.atomic
def competitions_load(*, shipped: ShippedBenchmark | None = None) -> tuple[Benchmark, int, int]:
    """Create or update the benchmark and its competitions from shipped data. Running it twice changes nothing.

    The shipped Kaggle leaderboard and official thresholds are kept as shipped; the leaderboard in force
    also depends on the competition's pack (competitions.selectors.leaderboard_in_force).
    Returns (benchmark, created, updated).
    """
    shipped = shipped or read_benchmark()
    benchmark, _ = Benchmark.objects.get_or_create(name=shipped.name, version=shipped.version)
    changed = benchmark.commit != shipped.commit or not benchmark.is_current
    if changed:
        Benchmark.objects.filter(name=shipped.name, is_current=True).exclude(pk=benchmark.pk).update(is_current=False)
        benchmark.commit, benchmark.source_url, benchmark.is_current = shipped.commit, shipped.source_url, True
        benchmark.save()

    existing = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark).select_related("pack")}
    created = updated = 0
    for item in shipped.competitions:
        fields = {f.name: getattr(item, f.name) for f in dataclass_fields(item)}
        scores = list(fields.pop("leaderboard_scores"))
        official = fields.pop("official_thresholds")
        slug = fields.pop("slug")
        current = existing.get(slug)
        fields["kaggle_leaderboard_scores"] = scores
        fields["official_thresholds"] = dataclasses.asdict(official) if official else None
        pack = getattr(current, "pack", None) if current is not None else None
        fields.update(_threshold_fields(leaderboard_in_force(kaggle_scores=scores, official=official, pack=pack)))
        if current is None:
            Competition.objects.create(benchmark=benchmark, slug=slug, **fields)
            created += 1
        elif any(getattr(current, name) != value for name, value in fields.items()):
            moved = _thresholds_move(current, fields)
            for name, value in fields.items():
                setattr(current, name, value)
            current.save()
            updated += 1
            if moved:
                thresholds_changed.send(sender=None, competition=current, reason=f"shipped data {shipped.commit}")
    known_issues_load(benchmark=benchmark, issues=shipped.known_issues)
    return benchmark, created, updated


def known_issues_load(*, benchmark: Benchmark, issues: list[dict]) -> int:
    """Add or refresh the shipped known issues; a maintainer's edit or deletion wins. Returns how many changed."""
    existing = {
        issue.shipped_key: issue for issue in KnownIssue.objects.filter(benchmark=benchmark).exclude(shipped_key="")
    }
    removed = set(KnownIssueRemoval.objects.filter(benchmark=benchmark).values_list("shipped_key", flat=True))
    changed = 0
    for item in issues:
        fields = {
            "competition_slug": item["competition"],
            "kind": item["kind"],
            "description": item["description"],
            "data": item.get("data") or {},
        }
        current = existing.get(item["key"])
        if item["key"] in removed or (current is not None and current.edited):
            continue
        if current is None:
            KnownIssue.objects.create(benchmark=benchmark, shipped_key=item["key"], **fields)
            changed += 1
        elif any(getattr(current, name) != value for name, value in fields.items()):
            KnownIssue.objects.filter(pk=current.pk).update(**fields)
            changed += 1
    return changed


def known_issue_delete(*, issue: KnownIssue) -> None:
    """Delete a known issue; a shipped one stays deleted on later loads."""
    with transaction.atomic():
        if issue.shipped_key:
            KnownIssueRemoval.objects.get_or_create(benchmark_id=issue.benchmark_id, shipped_key=issue.shipped_key)
        issue.delete()


@transaction.atomic
def competition_leaderboard_apply(*, competition: Competition, pack: CompetitionPack) -> LeaderboardInForce:
    """Put in force the leaderboard that judges the competition's answers now (after a pack import)."""
    choice = competition_leaderboard_in_force(competition, pack=pack)
    fields = _threshold_fields(choice)
    moved = _thresholds_move(competition, fields)
    for name, value in fields.items():
        setattr(competition, name, value)
    competition.save()
    if moved:
        thresholds_changed.send(sender=None, competition=competition, reason=f"a pack's leaderboard ({choice.source})")
    return choice


def _thresholds_move(competition: Competition, fields: dict) -> bool:
    """Whether `fields` change the thresholds in force of a competition that exists."""
    return competition.pk is not None and any(
        name in fields and getattr(competition, name) != fields[name] for name in THRESHOLD_FIELDS
    )
