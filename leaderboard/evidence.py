"""The evidence of a published entry (SPEC §8, issue 22): one public zip holding what the entry's numbers depend
on, and the entry as the board serves it, so that anyone can recompute its figures and rank offline (`mleportal
verify`) and compare them with what the portal serves, to the last digit.

The zip (its format, FORMAT, is documented in the README under "The evidence of an entry"):

    evidence.json          versions, the portal's commit, the rank interval's settings, every other file with its
                           SHA-256 and size
    bundle/<name>          the bundle as submitted (absent for an entry imported from grading reports)
    reports/seed-<n>.json  per seed, the grading reports the aggregation counted, in MLE-bench's format
    competitions.json      per competition run: grader, answers' SHA-256, thresholds and their source, tiers
    aggregates.json        the tier figures as the API serves them, each tier's competitions, the known-leaky
                           ones, and each run's submission SHA-256 (a copy of an earlier seed's file counts once)
    ranking.json           per tab the entry is ranked in: every ranked row's per-seed figures, in the order the
                           ranking took them, and the entry's rank and interval

It never holds answers, only their SHA-256. Everything is read in one snapshot of the database, so the files agree
with each other even while the board refreshes; the same board state gives the same bytes.
"""

import hashlib
import json
import logging
import operator
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import reduce
from typing import IO, Any

from django.core.files.storage import storages
from django.db import connection, transaction
from django.db.models import Q
from django.http import Http404, StreamingHttpResponse
from django.urls import reverse

from competitions.models import Competition, KnownIssue
from competitions.selectors import competition_medal_rule
from grading.engine.medals import Thresholds

# The engine's rank settings. Part A of issue 22 moves ranking.py into the engine: this import becomes
# `from grading.engine.ranking import ...`, the one line to change here.
from grading.engine.ranking import LEVEL, RANK_VERSION, REPLICATES
from grading.engine.report import REPORT_FIELDS, TOTAL_FIELDS
from grading.engine.safe_json import restored_report
from grading.engine.tiers import TIER_SPLITS, TIERS
from grading.engine_wheel import WheelBuildFailed, engine_wheel
from grading.models import Run, Submission
from grading.selectors import (
    private_storage_is_remote,
    registration_facts,
    submission_folder,
    tier_members,
)
from leaderboard import selectors
from leaderboard.history import board_head
from leaderboard.models import BoardRow, BoardState, Entry
from leaderboard.services import RANK_RANDOM_SEED
from portal.release import portal_commit

logger = logging.getLogger(__name__)
FORMAT = "mle-portal-evidence/1"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # every member's date: the same board state gives the same bytes
_CHUNK = 1024 * 1024
# Where a competition's thresholds in force come from, in the evidence's words.
_THRESHOLDS_SOURCE: dict[str, str] = {
    Competition.LeaderboardSource.KAGGLE: "kaggle",
    Competition.LeaderboardSource.PACK: "pack",
    Competition.LeaderboardSource.SIMULATED: "simulated",
}


@dataclass(frozen=True)
class Evidence:
    entry_id: int
    header: dict  # evidence.json without its list of files
    documents: dict[str, bytes]  # the other files, by their path in the zip
    bundle_name: str | None  # the bundle's path in the zip; None: no bundle
    bundle_open: Callable[[], IO[bytes]] | None


@contextmanager
def _snapshot() -> Iterator[None]:
    """One consistent view of the database for every read inside (PostgreSQL's repeatable read), so that the
    rows of a tab and the entry's rank come from the same state of the board."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _board_version() -> int:
    state = BoardState.objects.filter(pk=1).values_list("version", flat=True).first()
    return int(state or 0)


# --- the entry as the board serves it: GET /api/v1/entries/<id>/ ---------------------------------------------


def _tab_order(row: BoardRow) -> tuple[int, bool]:
    return (TIERS.index(row.tier) if row.tier in TIERS else len(TIERS), row.excluding_leaky)


def entry_figures(*, entry_id: int) -> dict:
    """A published entry's numbers exactly as the board stores them (Http404 otherwise): every tier's complete and
    padded aggregates with and without the known-leaky competitions, and per tab the row the board lists (its
    figure, per-seed values, rank and 95% interval). The leaderboard API serves the same numbers."""
    with _snapshot():
        entry = selectors.entry_get(entry_id=entry_id)
        rows = sorted(entry.rows.all(), key=_tab_order)
        registrations = selectors.entry_registrations(entry)
        version = _board_version()
    return {
        "entry_id": entry.pk,
        "submission_id": entry.submission_id,
        "agent": entry.agent,
        "team": entry.team,
        "board": entry.board,
        "comparable": entry.board == Entry.Board.COMPARABLE,
        "verified": entry.verified,
        "aggregation_version": entry.aggregation_version,
        "board_version": version,
        "tiers": entry.tiers,
        "tabs": [
            {
                "tier": row.tier,
                "excluding_leaky": row.excluding_leaky,
                "uses": row.uses,
                "seeds": row.seeds,
                "any_medal": {"mean": row.any_medal_mean, "sem": row.any_medal_sem},
                "per_seed": row.per_seed,
                "rank": row.rank,
                "rank_low": row.rank_low,
                "rank_high": row.rank_high,
                "tied_with": row.tied_with,
            }
            for row in rows
        ],
        # The team's public registrations of this agent and version (SPEC section 9), as the entry page lists them.
        "registrations": registrations.as_dict(),
        "url": reverse("leaderboard_entry", args=[entry.pk]),
        "evidence_url": reverse("api_entry_evidence", args=[entry.pk]),
    }


# --- the evidence's files -------------------------------------------------------------------------------------


def _json(value: Any, *, allow_nan: bool = False) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=allow_nan) + "\n").encode()


def _report(run: Run, stored: dict) -> dict:
    """A run's report in MLE-bench's key order, with its submission's path inside the bundle."""
    stored = restored_report(stored)
    report: dict[str, Any] = {}
    for field in REPORT_FIELDS:
        if field == "competition_id":
            report[field] = run.competition.slug
        elif field == "submission_path":
            report[field] = run.submission_file or "None"  # MLE-bench's word for no file
        elif field in stored:
            report[field] = stored[field]
    if stored.get("medals_known") is False:
        report["medals_known"] = False
    return report


def _seed_report(reports: list[dict]) -> dict:
    """MLE-bench's run-group report: its totals, then the competition reports."""
    counted = (
        "submission_exists",
        "valid_submission",
        "any_medal",
        "gold_medal",
        "silver_medal",
        "bronze_medal",
        "above_median",
    )
    counts = [len(reports), *(sum(bool(report.get(field)) for report in reports) for field in counted)]
    return {**dict(zip(TOTAL_FIELDS, counts, strict=True)), "competition_reports": reports}


def _versions(values: set[str]) -> str | list[str] | None:
    found = sorted(v for v in values if v)
    return found[0] if len(found) == 1 else (found or None)


def _thresholds(competition: Competition) -> dict:
    """The medal rule the server grades with: the thresholds in force, or without a leaderboard null thresholds
    and the metric's own direction (competition_medal_rule)."""
    rule = competition_medal_rule(competition)
    if isinstance(rule, Thresholds):
        return {
            "gold": rule.gold,
            "silver": rule.silver,
            "bronze": rule.bronze,
            "median": rule.median,
            "is_lower_better": rule.is_lower_better,
        }
    return {"gold": None, "silver": None, "bronze": None, "median": None, "is_lower_better": rule.is_lower_better}


def _competition(competition: Competition, *, grader_versions: set[str]) -> dict:
    pack = getattr(competition, "pack", None)
    overridden = pack is not None and bool(pack.grader_name)
    source = _THRESHOLDS_SOURCE.get(competition.leaderboard_source)
    if source == "kaggle" and competition.thresholds_from_official_report:
        source = "official"
    return {
        "grader": {
            "name": (pack.grader_name if pack is not None and overridden else competition.grader_name) or None,
            "params": pack.grader_params if pack is not None and overridden else competition.grader_params,
            "version": _versions(grader_versions),
        },
        "answers_sha256": pack.answers_sha256 if pack is not None else None,
        "answers_file": competition.answers_file or None,
        "max_submission_bytes": pack.max_submission_bytes if pack is not None else None,
        "thresholds": _thresholds(competition),
        "thresholds_source": source if competition.has_thresholds else None,
        "tiers": [tier for tier in TIERS if TIER_SPLITS[tier] in competition.splits],
    }


def _ranking(entry: Entry) -> dict:
    """Per tab the entry is ranked in, the rows ranks_refresh ranked (comparable, with per-seed figures, by primary
    key), read in one query with the entry's own rank."""
    ranked = [
        (row.tier, row.excluding_leaky)
        for row in sorted(entry.rows.all(), key=_tab_order)
        if row.board == Entry.Board.COMPARABLE and row.per_seed and row.rank is not None
    ]
    if not ranked:
        return {"tabs": []}
    rows = (
        BoardRow.objects.filter(board=Entry.Board.COMPARABLE)
        .filter(reduce(operator.or_, (Q(tier=tier, excluding_leaky=excluding) for tier, excluding in ranked)))
        .order_by("pk")
        .values_list("tier", "excluding_leaky", "entry_id", "per_seed", "rank", "rank_low", "rank_high", "tied_with")
    )
    tabs: dict[tuple[str, bool], dict] = {
        tab: {"tier": tab[0], "excluding_leaky": tab[1], "rows": [], "entry": None} for tab in ranked
    }
    for tier, excluding, entry_id, per_seed, rank, low, high, tied_with in rows:
        if not per_seed:
            continue  # ranks_refresh leaves a row without seeds out
        tab = tabs[(tier, excluding)]
        tab["rows"].append({"entry_id": entry_id, "per_seed": per_seed})
        if entry_id == entry.pk:
            tab["entry"] = {"rank": rank, "low": low, "high": high, "tied_with": tied_with}
    return {"tabs": list(tabs.values())}


def _engine(base_url: str) -> dict:
    """The engine wheel that recomputes these numbers, as GET /api/v1/engine/ describes it; null fields when this
    portal cannot build it (the failure is logged)."""
    unknown = {"version": None, "wheel": None, "sha256": None, "url": None}
    try:
        wheel = engine_wheel()
    except WheelBuildFailed:
        logger.exception("the engine's wheel could not be built; the evidence names none")
        return unknown
    return {
        "version": wheel.version,
        "wheel": wheel.wheel,
        "sha256": wheel.sha256,
        "url": base_url.rstrip("/") + f"/downloads/engine/{wheel.wheel}",
    }


def _history_head() -> dict | None:
    """The head of the board's public history ({"seq", "hash"}), read in the evidence's snapshot."""
    return board_head().as_dict()


def bundle_opener(submission: Submission) -> Callable[[], IO[bytes]] | None:
    """How to read the bundle as the team uploaded it; None when the entry has none (imported from grading
    reports). Http404 when it should have one and its file is gone."""
    if not submission.bundle_name or submission.origin == Submission.Origin.IMPORT:
        return None
    if private_storage_is_remote():
        storage, name = storages["private"], submission.bundle_name
        if not storage.exists(name):
            raise Http404("The bundle's file is no longer on this server.")
        return lambda: storage.open(name, "rb")
    path = submission_folder(submission) / "bundle.archive"
    if not path.is_file():
        raise Http404("The bundle's file is no longer on this server.")
    return lambda: path.open("rb")


def bundle_download_name(entry_id: int, opener: Callable[[], IO[bytes]]) -> str:
    """The name the bundle is offered under: the portal keeps the bytes as uploaded, not the file's name."""
    with opener() as handle:
        start = handle.read(2)
    return f"entry-{entry_id}-bundle" + (".zip" if start == b"PK" else ".tar.gz")


def _aggregated_run(run: Run) -> dict[str, Any]:
    found = {"competition_id": run.competition.slug, "seed": run.seed, "submission_sha256": run.submission_sha256}
    if run.copy_key and run.copy_key != run.submission_sha256:
        found["counted_as"] = run.copy_key
    return found


def entry_evidence(*, entry_id: int, base_url: str) -> Evidence:
    """The evidence of a published entry (Http404 for any other), read in one snapshot of the database."""
    with _snapshot():
        entry = selectors.entry_get(entry_id=entry_id)
        submission = entry.submission
        source = "claimed" if submission.report_only else "regraded"  # what the aggregation counted (run_outcome)
        runs = list(
            Run.objects.filter(submission=submission)
            .select_related("competition")
            .only(
                source,
                "seed",
                "submission_file",
                "submission_sha256",
                "copy_key",
                "outside_registration",
                "grader_version",
                "competition__slug",
            )
            .order_by("seed", "competition__slug")
        )
        # A run outside the entry's registration (its log lacks the nonce) does not count (SPEC section 9).
        counted = [run for run in runs if getattr(run, source) and not run.outside_registration]
        competitions = list(
            Competition.objects.filter(pk__in={run.competition_id for run in runs})
            .select_related("pack")
            .defer("kaggle_leaderboard_scores", "leaderboard_scores", "pack__leaderboard_scores")
            .order_by("slug")
        )
        members = tier_members(benchmark_id=submission.benchmark_id, tiers=[t for t in TIERS if t in entry.tiers])
        leaky = sorted(
            KnownIssue.objects.filter(benchmark_id=submission.benchmark_id, kind=KnownIssue.Kind.LEAK).values_list(
                "competition_slug", flat=True
            )
        )
        facts = registration_facts(submission)
        registration = (
            {"id": facts.id, "competitions": list(facts.competitions), "seeds": facts.seeds} if facts else None
        )
        unnamed = list(submission.unnamed_registrations or [])  # as the entry's last check counted them
        ranking = _ranking(entry)
        version = _board_version()
        head = _history_head()
        opener = bundle_opener(submission)

    by_seed: dict[int, list[dict]] = {}
    for run in counted:
        by_seed.setdefault(run.seed, []).append(_report(run, getattr(run, source)))
    documents = {
        f"reports/seed-{seed}.json": _json(_seed_report(reports), allow_nan=True)
        for seed, reports in sorted(by_seed.items())
    }
    graders: dict[int, set[str]] = {}
    for run in runs:
        graders.setdefault(run.competition_id, set()).add(run.grader_version)
    documents["competitions.json"] = _json(
        {c.slug: _competition(c, grader_versions=graders.get(c.pk, set())) for c in competitions}
    )
    documents["aggregates.json"] = _json(
        {
            "tiers": entry.tiers,
            "members": members,
            "known_leaky": leaky,
            # counted_as: the file of an earlier seed this run's copies once normalised (the aggregation counts it once)
            "runs": [_aggregated_run(run) for run in counted],
            # Every registered (competition, seed) counts: the runs reported, renumbered 0, 1, ... per competition
            # in seed order, then a failure for each registered seed not reported (grading/checks/registration.py).
            **({"registration": registration} if registration else {}),
            # Then each lapsed registration of the same team, agent and version that no bundle named, in turn: a
            # failure for each of its registered (competition, seed), numbered after the highest seed so far.
            **({"unnamed_registrations": unnamed} if unnamed else {}),
        }
    )
    documents["ranking.json"] = _json(ranking)
    bundle_name = f"bundle/{bundle_download_name(entry.pk, opener)}" if opener is not None else None
    header = {
        "format": FORMAT,
        "entry_id": entry.pk,
        "submission_id": submission.pk,
        "board_version": version,
        "history_head": head,
        "portal_commit": portal_commit(),
        "engine": _engine(base_url),
        "aggregation_version": entry.aggregation_version,
        "rank": {"version": RANK_VERSION, "replicates": REPLICATES, "level": LEVEL, "random_seed": RANK_RANDOM_SEED},
        "reports": source,
        "bundle": bundle_name,
    }
    return Evidence(entry_id=entry.pk, header=header, documents=documents, bundle_name=bundle_name, bundle_open=opener)


# --- the zip, streamed ------------------------------------------------------------------------------------------


class _Sink:
    """A write-only stream the zip is written to, emptied after each step: the zip never sits in memory whole.
    It has no tell() or seek(), so zipfile writes each member's sizes after its data (as streamed zips do)."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


def _member(path: str, *, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=_ZIP_TIME)
    info.compress_type = compress
    info.external_attr = 0o644 << 16
    return info


def evidence_chunks(evidence: Evidence) -> Iterator[bytes]:
    """The zip's bytes, piece by piece: the bundle in 1 MiB chunks (stored as it is: it is compressed already),
    then the JSON files, then evidence.json listing them all with their SHA-256."""
    sink = _Sink()
    files = []
    with zipfile.ZipFile(sink, "w") as archive:
        if evidence.bundle_name and evidence.bundle_open:
            digest, size = hashlib.sha256(), 0
            member = _member(evidence.bundle_name, compress=zipfile.ZIP_STORED)
            with evidence.bundle_open() as source, archive.open(member, "w", force_zip64=True) as target:
                for chunk in iter(lambda: source.read(_CHUNK), b""):
                    digest.update(chunk)
                    size += len(chunk)
                    target.write(chunk)
                    yield sink.take()
            files.append({"path": evidence.bundle_name, "sha256": digest.hexdigest(), "bytes": size})
        for path, data in evidence.documents.items():
            archive.writestr(_member(path, compress=zipfile.ZIP_DEFLATED), data)
            files.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
            yield sink.take()
        manifest = {**evidence.header, "files": sorted(files, key=operator.itemgetter("path"))}
        archive.writestr(_member("evidence.json", compress=zipfile.ZIP_DEFLATED), _json(manifest))
    yield sink.take()


def evidence_response(found: Evidence) -> StreamingHttpResponse:
    """The zip as a download, streamed (the page's URL and the API's serve it alike)."""
    response = StreamingHttpResponse(evidence_chunks(found), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="entry-{found.entry_id}-evidence.zip"'
    return response
