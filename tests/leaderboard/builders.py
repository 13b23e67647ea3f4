"""Builders of published entries with known figures, for the board's tests (no bundle files: the board reads
only what grading stored)."""

from competitions.models import Benchmark, Competition
from competitions.selectors import current_benchmark
from grading.engine.aggregation import AGGREGATION_VERSION, aggregate
from grading.engine.tiers import tiers_of_split
from grading.models import Run, Submission, TierAggregate
from grading.selectors import run_outcome, tier_members
from leaderboard import services

MEDAL_FIELDS = {"gold": "gold_medal", "silver": "silver_medal", "bronze": "bronze_medal"}


def report(*, medal: str | None = None, valid: bool = True, score: float = 0.5, exists: bool = True) -> dict:
    out = {
        "score": score if valid else None,
        "submission_exists": exists,
        "valid_submission": valid,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": medal is not None,
        "gold_threshold": 0.9,
        "silver_threshold": 0.8,
        "bronze_threshold": 0.7,
        "median_threshold": 0.5,
        "reason": None if valid else "12 ids missing",
    }
    if medal:
        out[MEDAL_FIELDS[medal]] = True
    return out


def benchmark() -> Benchmark:
    loaded = current_benchmark()
    assert loaded is not None, "the tests load the registry first (competitions_load)"
    return loaded


def split_members(split: str = "low") -> list[str]:
    tier = tiers_of_split(split)[-1]
    return tier_members(benchmark_id=benchmark().pk, tiers=[tier])[tier]


def entry(
    team,
    *,
    agent: str = "Agent",
    split: str = "low",
    medals: dict[int, list[str]] | None = None,
    seeds: int = 3,
    comparable: bool = True,
    manifest: dict | None = None,
    status: str = "published",
    missing: tuple[tuple[str, int], ...] | list[tuple[str, int]] = (),
    claimed: dict | None = None,
    report_only: bool = False,
    origin: str = Submission.Origin.UPLOAD,
    refresh: bool = True,
) -> Submission:
    """A submission of `split` with a run of every competition for `seeds` seeds; medals[seed] lists the
    competitions with a gold in that seed; `missing` (competition, seed) pairs have no run at all."""
    loaded = benchmark()
    medals = medals or {}
    body = {
        "schema": "bundle-v1",
        "agent": {"name": agent, "open_source": True, "source_url": "https://example.org/a"},
        "llms": ["gpt-4o"],
        "benchmark": {"name": "mle-bench", "version": "v1", "split": split},
        "runtime_hours": 24,
        "internet_access": True,
        "hardware": {"gpus": [{"model": "A10", "memory_gb": 24, "count": 1}], "vcpus": 36, "ram_gb": 440},
    }
    body.update(manifest or {})
    submission = Submission.objects.create(
        team=team,
        benchmark=loaded,
        status=status,
        manifest=body,
        report_only=report_only,
        origin=origin,
        comparability={"comparable": comparable, "reasons": [] if comparable else ["a test reason"]},
    )
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=loaded)}
    runs = []
    for seed in range(seeds):
        for slug in split_members(split):
            if (slug, seed) in missing:
                continue
            graded = report(medal="gold" if slug in medals.get(seed, []) else None)
            runs.append(
                Run(
                    submission=submission,
                    competition=competitions[slug],
                    seed=seed,
                    run_group=f"g{seed}",
                    run_id=f"{slug}_{seed}",
                    status=Run.Status.DONE,
                    regraded=None if report_only else graded,
                    claimed=(claimed or {}).get((slug, seed), graded),
                    any_medal=bool(medals.get(seed) and slug in medals[seed]) and not report_only,
                )
            )
    Run.objects.bulk_create(runs)
    members = tier_members(benchmark_id=loaded.pk, tiers=tiers_of_split(split))
    outcomes = [run_outcome(run, claimed=report_only) for run in runs]
    for tier, competitions_of_tier in members.items():
        for kind in TierAggregate.Kind:
            TierAggregate.objects.create(
                submission=submission,
                tier=tier,
                kind=kind,
                version=AGGREGATION_VERSION,
                data=aggregate(outcomes, split=competitions_of_tier, padded=kind == "padded"),
            )
    if refresh:
        services.board_refresh(submission_ids=[submission.pk])
    return submission
