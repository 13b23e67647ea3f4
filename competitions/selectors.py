import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.storage import storages
from django.db.models import QuerySet
from django.db.models.functions import Lower
from django.http import Http404

from competitions.models import Benchmark, Competition, CompetitionPack
from grading.engine.medals import MedalsUnknown, Thresholds
from grading.engine.registry import GraderRef
from portal.private_files import private_folder, private_opener


def current_benchmark() -> Benchmark | None:
    return Benchmark.objects.filter(is_current=True).order_by("name").first()


def competition_list(*, tier: str | None = None, split: str | None = None) -> QuerySet[Competition]:
    queryset = Competition.objects.filter(benchmark__is_current=True).select_related("benchmark", "pack")
    if tier:
        queryset = queryset.filter(tier=tier)
    competitions = queryset.order_by(Lower("name"), "slug")  # "AI4Code" among the a's, not before them
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


@dataclass(frozen=True)
class LeaderboardInForce:
    source: str  # a Competition.LeaderboardSource value
    scores: list[float]
    official: Thresholds | None  # the official grader's thresholds, which win over the computed ones
    note: str = ""  # why the pack's own leaderboard is not the one in force, when it has one


def leaderboard_in_force(
    *, kaggle_scores: Sequence[float], official: Thresholds | None, pack: CompetitionPack | None
) -> LeaderboardInForce:
    """The leaderboard whose thresholds judge a competition's answers, from the shipped data and the pack.

    A simulated leaderboard judges only the synthetic answers it was simulated for (the pack records their
    SHA-256), and synthetic answers are never judged by Kaggle's thresholds. Real answers are judged by the
    shipped Kaggle leaderboard (the official grader's thresholds where we ship them): it is the one
    MLE-bench grades with, whatever leaderboard.csv lies beside the data. The pack's own leaderboard
    serves where nothing is shipped; without one the medals are unknown.
    """
    source = Competition.LeaderboardSource
    own = list(pack.leaderboard_scores) if pack is not None else []
    note = ""
    if (
        own
        and pack is not None
        and pack.leaderboard_answers_sha256
        and pack.leaderboard_answers_sha256 != pack.answers_sha256
    ):
        own, note = [], "the pack's leaderboard was made for other answers (their SHA-256 differs), so it is not used"
    if pack is not None and pack.synthetic:
        if own:
            return LeaderboardInForce(source.SIMULATED, own, None)
        return LeaderboardInForce(
            source.NONE,
            [],
            None,
            note
            or "synthetic answers without the leaderboard simulated for them; Kaggle's thresholds would "
            "judge made-up answers",
        )
    if kaggle_scores or official is not None:
        if own:
            note = "the pack's own leaderboard.csv is not used: the shipped Kaggle leaderboard is MLE-bench's"
        return LeaderboardInForce(source.KAGGLE, list(kaggle_scores), official, note)
    if own:
        return LeaderboardInForce(source.PACK, own, None)
    return LeaderboardInForce(source.NONE, [], None, note)


def competition_leaderboard_in_force(
    competition: Competition, *, pack: CompetitionPack | None = None
) -> LeaderboardInForce:
    """The leaderboard in force for the competition with its pack (or with ``pack``, about to be its pack)."""
    official = competition.official_thresholds
    return leaderboard_in_force(
        kaggle_scores=competition.kaggle_leaderboard_scores,
        official=Thresholds(**official) if official else None,
        pack=pack if pack is not None else getattr(competition, "pack", None),
    )


def competition_thresholds(competition: Competition) -> Thresholds | None:
    if not competition.has_thresholds:
        return None
    gold, silver = competition.gold_threshold, competition.silver_threshold
    bronze, median = competition.bronze_threshold, competition.median_threshold
    lower = competition.is_lower_better
    # services._threshold_fields writes the five fields together from one Thresholds: all set or all None.
    assert gold is not None and silver is not None and bronze is not None and median is not None and lower is not None
    return Thresholds(gold=gold, silver=silver, bronze=bronze, median=median, is_lower_better=lower)


def pack_local_file(name: str) -> Path:
    """A private-storage file as a local path: the file itself on disk storage, a cached copy otherwise."""
    storage = storages["private"]
    try:
        return Path(storage.path(name))
    except NotImplementedError:
        cached = Path(settings.DATA_DIR) / "cache" / "private" / name
        if not cached.exists():
            private_folder(cached.parent)
            partial = cached.with_suffix(cached.suffix + ".partial")
            with storage.open(name, "rb") as source, open(partial, "wb", opener=private_opener) as target:
                shutil.copyfileobj(source, target, 1 << 20)
            partial.replace(cached)
        return cached


def competition_medal_rule(competition: Competition) -> Thresholds | MedalsUnknown:
    """The thresholds in force, or, without a leaderboard, medals unknown: the score and validity are
    graded all the same, with the metric's own direction in place of the leaderboard's."""
    thresholds = competition_thresholds(competition)
    if thresholds is not None:
        return thresholds
    return MedalsUnknown(is_lower_better=not competition.higher_is_better)


class NotGradable(Exception):
    """The competition cannot be graded here yet; the message says what is missing."""


def grading_setup(competition: Competition) -> tuple[Path, GraderRef, Thresholds | MedalsUnknown]:
    """Answers, grader and medal rule of a competition. Only missing answers or a missing grader make it
    not gradable: without a leaderboard, scores are graded and medals reported as unknown."""
    pack = getattr(competition, "pack", None)
    if pack is None:
        raise NotGradable(
            f"'{competition.slug}' has no competition pack, so there are no answers to grade against; "
            "an operator imports one with 'manage.py import_competition_pack PATH'."
        )
    grader = (
        GraderRef(pack.grader_name, pack.grader_params)
        if pack.grader_name
        else GraderRef(competition.grader_name, competition.grader_params)
    )
    if not grader.name:
        raise NotGradable(f"'{competition.slug}' has no grader yet.")
    return pack_local_file(pack.answers_path), grader, competition_medal_rule(competition)
