"""The benchmark data shipped with the project (framework-free): competitions, splits, leaderboards, graders.

Layout of ``competitions/data/<benchmark folder>/``:
``competitions_meta.json`` (source repository and commit), ``competitions.json`` (one entry per competition),
``splits/<split>.txt``, ``leaderboards/<competition id>.csv`` (rank,score, best first) and ``graders.json``
(``{"<competition id>": {"grader": name, "params": {...}, "deviation": text}}``).
"""

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from grading.engine.medals import Thresholds, read_leaderboard
from grading.engine.tiers import COMPETITION_TIERS, REGISTRY_SPLITS

DATA_ROOT = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class ShippedCompetition:
    slug: str
    name: str
    tier: str
    splits: list[str]
    category: str
    metric: str
    metric_family: str
    higher_is_better: bool
    submission_columns: list[str]
    id_column: str
    answers_format: str
    answers_file: str
    sample_submission_file: str
    validation_rules: list[str]
    known_issues: list[str]
    deviations: str
    answers_rows_estimate: int | None
    grader_name: str
    grader_params: dict
    leaderboard_scores: list[float] = field(default_factory=list)
    official_thresholds: Thresholds | None = None


@dataclass(frozen=True)
class ShippedBenchmark:
    name: str
    version: str
    commit: str
    source_url: str
    competitions: list[ShippedCompetition]
    # Known leaks, loopholes and other issues of this version: {key, competition, kind, description, data}.
    known_issues: list[dict] = field(default_factory=list)


def read_benchmark(folder: Path = DATA_ROOT / "mlebench-v1") -> ShippedBenchmark:
    meta = json.loads((folder / "competitions_meta.json").read_text())
    entries = json.loads((folder / "competitions.json").read_text())
    graders_file = folder / "graders.json"
    graders = json.loads(graders_file.read_text()) if graders_file.exists() else {}
    split_members = {
        split: set((folder / "splits" / f"{split}.txt").read_text().split())
        for split in REGISTRY_SPLITS
        if (folder / "splits" / f"{split}.txt").exists()
    }
    official = _official_thresholds(folder / "official_thresholds.csv")
    competitions = []
    for entry in entries:
        slug = entry["id"]
        grader = graders.get(slug, {})
        leaderboard = folder / "leaderboards" / f"{slug}.csv"
        competitions.append(
            ShippedCompetition(
                slug=slug,
                name=entry["name"],
                tier=entry["tier"] if entry["tier"] in COMPETITION_TIERS else "",
                splits=[split for split in REGISTRY_SPLITS if slug in split_members.get(split, ())],
                category=entry.get("category") or "",
                metric=entry["metric"],
                metric_family=entry.get("metric_family") or "",
                higher_is_better=bool(entry["higher_is_better"]),
                submission_columns=list(entry.get("submission_columns") or []),
                id_column=entry.get("id_column") or "",
                answers_format=entry.get("answers_format") or "",
                answers_file=entry.get("answers_file") or "",
                sample_submission_file=entry.get("sample_submission_file") or "",
                validation_rules=list(entry.get("validation_rules") or []),
                known_issues=[item for item in entry.get("special") or [] if "known issue" in item.lower()],
                deviations=grader.get("deviation", ""),
                answers_rows_estimate=entry.get("answers_rows_estimate"),
                grader_name=grader.get("grader", ""),
                grader_params=grader.get("params", {}),
                leaderboard_scores=read_leaderboard(leaderboard) if leaderboard.exists() else [],
                official_thresholds=official.get(slug),
            )
        )
    source = meta["source"]
    return ShippedBenchmark(
        name="mle-bench",
        version="v1",
        commit=source["commit"],
        source_url=f"https://{source['repo']}",
        competitions=competitions,
        known_issues=_known_issues(folder / "known_issues.json"),
    )


def _known_issues(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [
        {
            "key": item["key"],
            "competition": item["competition"],
            "kind": item["kind"],
            "description": item["description"],
            "data": item.get("data") or {},
        }
        for item in json.loads(path.read_text())["issues"]
    ]


def _official_thresholds(path: Path) -> dict[str, Thresholds]:
    """Thresholds read from reports of the official grader. For 9 competitions our copy of the Kaggle
    leaderboard lacks a row or two below the median, which moves the median (and, for mlsp-2013-birds,
    the medal rows); the official figures then win (tests/grading/engine/test_medals.py shows why)."""
    if not path.exists():
        return {}
    with path.open() as handle:
        return {
            row["competition_id"]: Thresholds(
                gold=float(row["gold_threshold"]),
                silver=float(row["silver_threshold"]),
                bronze=float(row["bronze_threshold"]),
                median=float(row["median_threshold"]),
                is_lower_better=row["is_lower_better"] == "True",
            )
            for row in csv.DictReader(handle)
        }
