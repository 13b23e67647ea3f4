import shutil
from pathlib import Path

from django.conf import settings
from django.core.files.storage import storages
from django.db.models import QuerySet
from django.http import Http404

from competitions.models import Benchmark, Competition
from grading.engine.medals import Thresholds
from grading.engine.registry import GraderRef


def current_benchmark() -> Benchmark | None:
    return Benchmark.objects.filter(is_current=True).order_by("name").first()


def competition_list(*, tier: str | None = None, split: str | None = None) -> QuerySet[Competition]:
    queryset = Competition.objects.filter(benchmark__is_current=True).select_related("benchmark", "pack")
    if tier:
        queryset = queryset.filter(tier=tier)
    competitions = queryset.order_by("slug")
    if split:
        # JSON containment is not portable to SQLite; the registry is small enough to filter here.
        slugs = [c.slug for c in competitions if split in c.splits]
        competitions = competitions.filter(slug__in=slugs)
    return competitions


def competition_get(*, slug: str) -> Competition:
    competition = competition_list().filter(slug=slug).first()
    if competition is None:
        raise Http404(f"No competition '{slug}' in the current benchmark version.")
    return competition


def competition_thresholds(competition: Competition) -> Thresholds | None:
    if not competition.has_thresholds:
        return None
    return Thresholds(
        gold=competition.gold_threshold,
        silver=competition.silver_threshold,
        bronze=competition.bronze_threshold,
        median=competition.median_threshold,
        is_lower_better=competition.is_lower_better,
    )


def pack_local_file(name: str) -> Path:
    """A private-storage file as a local path: the file itself on disk storage, a cached copy otherwise."""
    storage = storages["private"]
    try:
        return Path(storage.path(name))
    except NotImplementedError:
        cached = Path(settings.DATA_DIR) / "cache" / "private" / name
        if not cached.exists():
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_suffix(cached.suffix + ".partial")
            with storage.open(name, "rb") as source, partial.open("wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
            partial.replace(cached)
        return cached


class NotGradable(Exception):
    """The competition cannot be graded here yet; the message says what is missing."""


def grading_setup(competition: Competition) -> tuple[Path, GraderRef, Thresholds]:
    pack = getattr(competition, "pack", None)
    if pack is None:
        raise NotGradable(
            f"'{competition.slug}' has no competition pack, so there are no answers to grade against; "
            "an operator imports one with 'manage.py import_competition_pack PATH'."
        )
    thresholds = competition_thresholds(competition)
    if thresholds is None:
        raise NotGradable(f"'{competition.slug}' has no leaderboard, so no medal thresholds; import a pack with one.")
    grader = (
        GraderRef(pack.grader_name, pack.grader_params)
        if pack.grader_name
        else GraderRef(competition.grader_name, competition.grader_params)
    )
    if not grader.name:
        raise NotGradable(f"'{competition.slug}' has no grader yet.")
    return pack_local_file(pack.answers_path), grader, thresholds
