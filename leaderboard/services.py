"""Board rows, recomputed from what grading stored when a submission's results or decisions change.

``entry_refresh`` rebuilds one submission's entry and rows (or removes them when it is no longer
published); ``ranks_refresh`` ranks comparable tabs again; ``board_refresh`` does both, ranking again only the
tabs whose inputs the entry changed, and bumps the board's version, which is what cached pages and exports key
on. A request never recomputes anything.
"""

import json
import logging
import operator
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from functools import reduce

from django.db import connection, transaction
from django.db.models import F, Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.dateparse import parse_date

from competitions.models import KnownIssue
from grading.bundles.errors import BundleError
from grading.bundles.manifest import Manifest, parse_manifest
from grading.engine.aggregation import AGGREGATION_VERSION, RunOutcome, aggregate, per_seed
from grading.engine.ranking import TabRank, tab_ranks
from grading.engine.tiers import TIERS
from grading.models import Flag, Submission, TierAggregate
from grading.selectors import submission_outcomes, tier_members
from leaderboard import footnotes, history
from leaderboard.levels import evidence_level
from leaderboard.models import BoardRow, BoardState, Entry
from leaderboard.selectors import HEADLINE_ORDER
from leaderboard.selectors.entry import entry_level_facts

logger = logging.getLogger(__name__)
# The footnotes' rules live in leaderboard/footnotes.py; these names stay importable from here.
MAX_FOOTNOTES, FOOTNOTE_CODES, SELF_REPORTED_NOTE, IMPORTED_NOTE = (
    footnotes.MAX_FOOTNOTES,
    footnotes.FOOTNOTE_CODES,
    footnotes.SELF_REPORTED_NOTE,
    footnotes.IMPORTED_NOTE,
)


def _manifest(submission: Submission) -> Manifest | None:
    try:
        return parse_manifest(data=submission.manifest) if submission.manifest else None
    except BundleError:
        return None


def _hardware_text(manifest: Manifest | None) -> str:
    if manifest is None:
        return ""
    hardware = manifest.hardware
    parts = [
        f"{gpu.count} × {gpu.model}" + (f" {gpu.memory_gb:g} GB" if gpu.memory_gb else "") for gpu in hardware.gpus
    ]
    if hardware.vcpus is not None:
        parts.append(f"{hardware.vcpus} vCPU")
    if hardware.ram_gb is not None:
        parts.append(f"{hardware.ram_gb:g} GB RAM")
    return " · ".join(parts)


def _choose(complete: dict | None, padded: dict | None) -> str | None:
    """Which aggregate a cell shows: the complete-seed one when any seed is complete, else the padded one."""
    if complete:
        return TierAggregate.Kind.COMPLETE
    if padded:
        return TierAggregate.Kind.PADDED
    return None


def _tier_figures(submission: Submission, outcomes: list[RunOutcome], leaky: set[str]) -> dict[str, dict]:
    """Per tier: the stored aggregates and those without the known-leaky competitions, with per-seed values."""
    stored: dict[str, dict] = {}
    for agg in TierAggregate.objects.filter(submission=submission):
        stored.setdefault(agg.tier, {})[agg.kind] = agg.data
    members = tier_members(benchmark_id=submission.benchmark_id, tiers=[t for t in TIERS if t in stored])
    figures: dict[str, dict] = {}
    for tier, split in members.items():
        variants = {}
        for name, competitions in (("all", split), ("excluding_leaky", [c for c in split if c not in leaky])):
            if name == "all":
                complete, padded = stored[tier].get("complete"), stored[tier].get("padded")
            else:
                complete = aggregate(outcomes, split=competitions, padded=False) if competitions else None
                padded = aggregate(outcomes, split=competitions, padded=True) if competitions else None
            uses = _choose(complete, padded)
            seeds = (
                [row["any_medal"] for row in per_seed(outcomes, split=competitions, padded=uses == "padded")]
                if uses and competitions
                else []
            )
            variants[name] = {
                "complete": complete,
                "padded": padded,
                "uses": uses,
                "per_seed": seeds,
                "competitions": len(competitions),
            }
        figures[tier] = variants
    return figures


def _footnotes(submission: Submission, flags: list[Flag], figures: dict[str, dict]) -> list[str]:
    return footnotes.entry_footnotes(submission=submission, flags=flags, figures=figures)


def _test_set_info(manifest: Manifest | None, flags: list[Flag]) -> str:
    if manifest is not None and manifest.disclosures.test_set_feedback:
        return Entry.TestSetInfo.DECLARED
    if any(f.code == "test_set_feedback" and f.decision != "accept" for f in flags):
        return Entry.TestSetInfo.FLAGGED
    return Entry.TestSetInfo.NONE


def _resources(flags: list[Flag]) -> str:
    """From the nonstandard_resources check: beyond the reference setup, not declared, or within it."""
    found = {f.key for f in flags if f.code == "nonstandard_resources"}
    if "manifest" in found:
        return Entry.Resources.BEYOND
    if "undeclared" in found:
        return Entry.Resources.UNDECLARED
    return Entry.Resources.REFERENCE


def _verified(submission: Submission) -> str:
    if submission.origin == Submission.Origin.HOSTED:
        return Entry.Verified.HOSTED
    if submission.report_only or submission.origin == Submission.Origin.IMPORT:
        return Entry.Verified.SELF_REPORTED
    return Entry.Verified.REGRADED


def _date(submission: Submission) -> date:
    declared = submission.manifest.get("date") if submission.origin == Submission.Origin.IMPORT else None
    parsed = parse_date(declared) if isinstance(declared, str) else None
    return parsed or timezone.localdate(submission.created_at)


@transaction.atomic
def entry_refresh(*, submission_id: int, cause: dict | None = None) -> Entry | None:
    """Rebuild the entry of a published submission from what grading stored; remove it otherwise.
    Under the submission's row lock, so two refreshes of one entry run one after the other.

    When the entry's published state (its board and figures) differs from the last one the board's history
    recorded, an event is appended in this transaction, with `cause` (what the change passed down: a
    decision and its reason, a re-grade, an import; grading.signals.board_cause)."""
    submission = (
        Submission.objects.select_for_update(of=("self",))
        .select_related("team", "benchmark")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None or submission.status != Submission.Status.PUBLISHED:
        gone = Entry.objects.filter(submission_id=submission_id).only("pk", "agent", "team").first()
        Entry.objects.filter(submission_id=submission_id).delete()
        history.entry_record(submission_id=submission_id, entry=gone, state=history.WITHDRAWN, cause=cause)
        return None
    manifest = _manifest(submission)
    # Only what the aggregation counts of each run: the fields of one of its two reports (run_outcome).
    outcomes = submission_outcomes(submission_id=submission.pk, claimed=submission.report_only)
    flags = list(Flag.objects.filter(submission=submission))
    leaky = set(
        KnownIssue.objects.filter(benchmark_id=submission.benchmark_id, kind=KnownIssue.Kind.LEAK).values_list(
            "competition_slug", flat=True
        )
    )
    figures = _tier_figures(submission, outcomes, leaky)
    board = Entry.Board.COMPARABLE if submission.comparable else Entry.Board.NON_COMPARABLE
    hardware = manifest.hardware if manifest else None
    agent = manifest.agent if manifest else None
    llms = list(manifest.llms) if manifest else []
    stored_tiers = {
        tier: {name: {k: v for k, v in variant.items() if k != "per_seed"} for name, variant in variants.items()}
        for tier, variants in figures.items()
    }
    fields = {
        "board": board,
        "team": submission.team.name,
        "agent": agent.name if agent else f"submission {submission.pk}",
        "agent_version": (agent.version or "") if agent else "",
        "llms": llms,
        "llms_text": "; ".join(llms),
        "date": _date(submission),
        "runtime_hours": manifest.runtime_hours if manifest else None,
        "hardware": dict(submission.manifest.get("hardware") or {})
        if isinstance(submission.manifest.get("hardware"), dict)
        else {},
        "hardware_text": _hardware_text(manifest),
        "gpu_count": sum(gpu.count for gpu in hardware.gpus) if hardware and hardware.gpus else None,
        "vcpus": hardware.vcpus if hardware else None,
        "ram_gb": hardware.ram_gb if hardware else None,
        "internet_access": manifest.internet_access if manifest else None,
        "open_source": agent.open_source
        if agent and agent.open_source is not None
        else (bool(agent.source_url) if agent and agent.source_url else None),
        "source_url": (agent.source_url or "") if agent else "",
        "benchmark_version": (manifest.benchmark.version or "") if manifest else "",
        "test_set_info": _test_set_info(manifest, flags),
        "resources": _resources(flags) if submission.origin != Submission.Origin.IMPORT else Entry.Resources.UNDECLARED,
        "verified": _verified(submission),
        "evidence_level": evidence_level(entry_level_facts(submission=submission, flags=flags)),
        "padded": any(v["all"]["uses"] == TierAggregate.Kind.PADDED for v in figures.values()),
        "footnotes": _footnotes(submission, flags, figures),
        "tiers": stored_tiers,
        "aggregation_version": AGGREGATION_VERSION,
    }
    entry, _ = Entry.objects.update_or_create(submission=submission, defaults=fields)
    rows = []
    for tier, variants in figures.items():
        for name, variant in variants.items():
            uses = variant["uses"]
            if not uses:
                continue
            agg = variant[uses]
            rows.append(
                BoardRow(
                    entry=entry,
                    tier=tier,
                    excluding_leaky=name == "excluding_leaky",
                    board=board,
                    uses=uses,
                    seeds=agg["seeds"],
                    any_medal_mean=agg["any_medal"]["mean"],
                    any_medal_sem=agg["any_medal"]["sem"],
                    per_seed=variant["per_seed"],
                )
            )
    for excluding in (False, True):
        variant_rows = [row for row in rows if row.excluding_leaky == excluding]
        name = "excluding_leaky" if excluding else "all"
        shown = {
            tier: {"uses": variants[name]["uses"], "agg": variants[name][variants[name]["uses"]]}
            for tier, variants in figures.items()
            if variants[name]["uses"]
        }
        first = min((row.tier for row in variant_rows), key=HEADLINE_ORDER.index, default=None)
        for row in variant_rows:
            row.shown, row.headline = shown, row.tier == first
    # One upsert for the entry's rows. A comparable row keeps its rank until the ranks are refreshed; a
    # non-comparable one has none.
    updated = ["board", "uses", "seeds", "any_medal_mean", "any_medal_sem", "per_seed", "headline", "shown"]
    if board != Entry.Board.COMPARABLE:
        updated += ["rank", "rank_low", "rank_high", "tied_with"]
    BoardRow.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["entry", "tier", "excluding_leaky"],
        update_fields=updated,
    )
    BoardRow.objects.filter(entry=entry).exclude(pk__in=[row.pk for row in rows]).delete()
    history.entry_record(
        submission_id=submission.pk,
        entry=entry,
        state=history.entry_state(board=board, tiers=stored_tiers),
        cause=cause,
    )
    return entry


Tab = tuple[str, bool]  # (tier, excluding the known-leaky competitions)
# The bootstrap's random seed: fixed, and recorded in every entry's evidence (leaderboard/evidence.py), so that
# anyone can draw the same replicates and get the same intervals.
RANK_RANDOM_SEED = 0
RankedRow = tuple[int, int, int, int, list[int]]  # a board row's pk, rank, rank_low, rank_high and tied_with


def ranks_refresh(*, tabs: Iterable[Tab] | None = None) -> None:
    """Rank every comparable tab (tier × with/without the known-leaky competitions) again, or only `tabs`."""
    rows = BoardRow.objects.filter(board=Entry.Board.COMPARABLE)
    if tabs is not None:
        wanted = set(tabs)
        if not wanted:
            return
        rows = rows.filter(
            reduce(operator.or_, (Q(tier=tier, excluding_leaky=excluding) for tier, excluding in wanted))
        )
    # In a fixed order: the bootstrap's draws follow the rows' positions, so the same board ranks the same.
    # Plain tuples, not models, and the rows' JSON decoded in one go: a change ranks thousands of rows again.
    found = list(
        rows.order_by("pk")
        .annotate(figures=Cast("per_seed", TextField()), tied=Cast("tied_with", TextField()))
        .values_list("pk", "tier", "excluding_leaky", "rank", "rank_low", "rank_high", "figures", "tied")
    )
    decoded = json.loads(f"[{','.join(text for row in found for text in row[6:])}]")
    by_tab: dict[Tab, list[tuple[int, list[float], tuple]]] = {}
    for index, (pk, tier, excluding, rank, low, high, *_) in enumerate(found):
        figures, tied = decoded[2 * index], decoded[2 * index + 1]
        if figures:
            by_tab.setdefault((tier, excluding), []).append((pk, figures, (rank, low, high, tied)))
    changed: list[RankedRow] = []
    tabs_rows = list(by_tab.values())
    for tab, ranks in zip(
        tabs_rows, _ranked_tabs([[figures for _, figures, _ in tab] for tab in tabs_rows]), strict=True
    ):
        for (pk, _, before), ranked in zip(tab, ranks, strict=True):
            after = (ranked.rank, ranked.low, ranked.high, ranked.tied_ranks)
            if before != after:
                changed.append((pk, *after))
    _ranks_write(changed)


def _ranked_tabs(tabs: list[list[list[float]]]) -> list[list[TabRank]]:
    """tab_ranks of each tab, one thread per core: numpy lets go of Python's lock while it draws, counts and
    sorts, which is most of a tab's time (a medal that moves ranks 4 tabs again)."""
    workers = min(len(tabs), os.cpu_count() or 1)
    if workers < 2:
        return [tab_ranks(figures, random_seed=RANK_RANDOM_SEED) for figures in tabs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda figures: tab_ranks(figures, random_seed=RANK_RANDOM_SEED), tabs))


def _ranks_write(rows: list[RankedRow]) -> None:
    """The rows' new ranks. One change can move the rank of most rows of its tabs (thousands, each with its list
    of tied ranks); Django's bulk_update builds a CASE branch per row and column in Python (about 1 s for 3,600
    rows), so PostgreSQL gets one UPDATE from arrays instead."""
    if connection.vendor != "postgresql":
        BoardRow.objects.bulk_update(
            [
                BoardRow(pk=pk, rank=rank, rank_low=low, rank_high=high, tied_with=tied)
                for pk, rank, low, high, tied in rows
            ],
            ["rank", "rank_low", "rank_high", "tied_with"],
            batch_size=500,
        )
        return
    # The rows as one JSON document (one parameter for psycopg2 to quote and PostgreSQL to parse, where one
    # array per column quotes each row's list of tied ranks as a string of its own).
    for first in range(0, len(rows), 5000):
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {BoardRow._meta.db_table} AS row"  # noqa: S608 (the table's name, from the model)
                " SET rank = (new.row->>1)::integer, rank_low = (new.row->>2)::integer,"
                " rank_high = (new.row->>3)::integer, tied_with = new.row->4"
                " FROM jsonb_array_elements(%s::jsonb) AS new(row) WHERE row.id = (new.row->>0)::bigint",
                [json.dumps(rows[first : first + 5000])],
            )


def _ranked_rows(submission_id: int) -> dict[Tab, tuple[int, list[float]]]:
    """The submission's comparable rows by tab: what its tabs' ranks depend on (its seeds' figures, and its
    place among the rows, which the bootstrap's draws follow)."""
    rows = BoardRow.objects.filter(entry__submission_id=submission_id, board=Entry.Board.COMPARABLE)
    return {
        (tier, excluding): (pk, figures)
        for pk, tier, excluding, figures in rows.values_list("pk", "tier", "excluding_leaky", "per_seed")
    }


def board_version_bump() -> None:
    """Every cached page and export of the board is stale from now on."""
    if not BoardState.objects.filter(pk=1).update(version=F("version") + 1, refreshed_at=timezone.now()):
        BoardState.objects.get_or_create(pk=1, defaults={"version": 1, "refreshed_at": timezone.now()})


def board_refresh(*, submission_ids: Iterable[int] = (), cause: dict | None = None) -> None:
    """Rebuild these entries, rank again the tabs in which a ranked row of theirs came, went or changed (the
    other tabs' ranks do not depend on them), and bump the board's version. `cause` goes to the history."""
    tabs: set[Tab] = set()
    for submission_id in submission_ids:
        before = _ranked_rows(submission_id)
        entry_refresh(submission_id=submission_id, cause=cause)
        after = _ranked_rows(submission_id)
        tabs |= {tab for tab in before.keys() | after.keys() if before.get(tab) != after.get(tab)}
    ranks_refresh(tabs=tabs)
    board_version_bump()


REBUILD_CAUSE = {"kind": "rebuild", "reason": "the board was rebuilt from what grading stored"}


def board_rebuild() -> int:
    """Every entry from scratch (after a change to the aggregation or the known-issue list); the count.
    An entry whose figures come out different is an event of the board's history (kind `rebuild`)."""
    published = list(Submission.objects.filter(status=Submission.Status.PUBLISHED).values_list("pk", flat=True))
    listed = set(Entry.objects.values_list("submission_id", flat=True))
    for submission_id in sorted(listed - set(published)):  # each removal recorded, like any other
        entry_refresh(submission_id=submission_id, cause=REBUILD_CAUSE)
    for submission_id in published:
        entry_refresh(submission_id=submission_id, cause=REBUILD_CAUSE)
    ranks_refresh()
    board_version_bump()
    return len(published)
