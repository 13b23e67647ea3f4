"""Reading an MLE-bench checkout's board: ENTRIES.csv, ``runs/run_group_experiments.csv`` and the run groups'
grading reports, into one plan per experiment. Framework-free; grading/services/mlebench_import.py writes it.

Seeds are formed exactly as MLE-bench's ``experiments/aggregate_grading_reports.py`` forms them (MECHANICS
(e)): the experiment's run groups in sorted order, one top-level ``*grading_report*.json`` each (a group
without one is skipped with a warning, two are an error), the report paths sorted, each file's entries
stable-sorted by competition id; seed *i* of a competition is its *i*-th entry in that read order. So the
aggregation's complete figure is MLE-bench's default (the first min-count seeds) and its padded figure
``--pad-missing`` (max-count seeds, missing slots failing).

Every problem is collected, each naming its file and where in it, and ImportRefused lists them all: an
operator fixes a checkout in one pass, and nothing is written until everything reads.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from grading.bundles.claims import MAX_REPORT_BYTES
from grading.bundles.manifest import MAX_LIST_ITEMS, MAX_RUNTIME_HOURS, NAME_TEXT, NOTES_TEXT, URL_TEXT
from grading.engine.aggregation import AGGREGATION_VERSION
from grading.engine.report_parser import MalformedReport, load_report_json, parse_competition_report
from grading.engine.safe_json import storable_report

ENTRY_COLUMNS: Final = ("experiment_id", "agent", "llms", "date", "runtime_hours", "source_url", "notes")
RUN_GROUP_CSV: Final = "runs/run_group_experiments.csv"
REPORT_GLOB: Final = "*grading_report*.json"
# Part of the content hash: a change of how entries are built makes the next import update them.
IMPORTER_VERSION: Final = "1"
MAX_ID_CHARS: Final = 200  # an entry's external id
MAX_NAME_CHARS: Final = 300  # a stored run group or run id
MAX_PROBLEMS_SHOWN: Final = 30
_LFS_POINTER: Final = b"version https://git-lfs.github.com/spec/"
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


class ImportRefused(ValueError):
    """What stops the import, one problem a line, each naming its file and where in it."""


@dataclass(frozen=True, kw_only=True)
class EntryRow:
    experiment_id: str
    agent: str
    llms: tuple[str, ...]
    date: str  # YYYY-MM-DD
    runtime_hours: float | None
    source_url: str
    notes: str
    line: int


@dataclass(frozen=True, kw_only=True)
class ImportedRun:
    competition_id: str
    seed: int
    run_group: str
    run_id: str
    claimed: dict[str, Any]  # the report's entry, as a JSON column holds it


@dataclass(frozen=True, kw_only=True)
class ExperimentPlan:
    """One experiment as read and checked, ready to be written."""

    entry: EntryRow
    run_groups: tuple[str, ...]  # as listed, sorted
    reports: tuple[str, ...]  # relative to the checkout, in read order
    runs: tuple[ImportedRun, ...]
    entries_per_competition: Mapping[str, int]
    warnings: tuple[str, ...]
    content_sha256: str  # of everything the entry is made from: unchanged means nothing to write


def import_plans(
    *, checkout: Path, entries: Path, registry: Collection[str], members: Mapping[str, Sequence[str]]
) -> list[ExperimentPlan]:
    """Read and check everything the import needs, in ENTRIES.csv's row order; ImportRefused lists every
    problem. ``registry`` is the competition ids that count, ``members`` each tier's (both in the hash)."""
    problems: list[str] = []
    known = frozenset(registry)
    rows = entries_read(path=entries, problems=problems)
    groups = run_groups_read(checkout=checkout, problems=problems)
    plans = []
    for row in rows:
        if groups is None:
            break  # without the run groups no row can be checked; _text_read has listed why
        listed = groups.get(row.experiment_id)
        if listed is None:
            problems.append(
                f"{entries} line {row.line}, column experiment_id: {row.experiment_id!r} is not "
                f"in {RUN_GROUP_CSV}; list its run groups there or correct the id"
            )
            continue
        plan = experiment_plan(
            checkout=checkout, entry=row, listed=listed, registry=known, members=members, problems=problems
        )
        if plan is not None:
            plans.append(plan)
    if problems:
        shown = problems[:MAX_PROBLEMS_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more problem(s)")
        raise ImportRefused("Nothing was imported:\n" + "\n".join(f"- {problem}" for problem in shown))
    return plans


# --- ENTRIES.csv ------------------------------------------------------------------------------------------


def entries_read(*, path: Path, problems: list[str]) -> list[EntryRow]:
    """ENTRIES.csv's rows, strictly: its exact header, then one experiment a row. Problems name the line
    (where the row starts) and the column."""
    text = _text_read(path=path, shown=str(path), problems=problems)
    if text is None:
        return []
    reader = csv.reader(text.splitlines(keepends=True))
    header = next(reader, None)
    if header is None or tuple(name.strip() for name in header) != ENTRY_COLUMNS:
        problems.append(
            f"{path} line 1: the header must be exactly {','.join(ENTRY_COLUMNS)}; "
            f"got {','.join(header) if header else 'an empty file'}"
        )
        return []
    rows: list[EntryRow] = []
    seen: dict[str, int] = {}
    line = reader.line_num
    while True:
        try:
            values = next(reader, None)
        except csv.Error as exc:
            problems.append(f"{path} line {reader.line_num}: not readable as CSV ({exc})")
            break
        if values is None:
            break
        start, line = line + 1, reader.line_num
        where = f"{path} line {start}"
        if not any(value.strip() for value in values):
            continue
        if len(values) != len(ENTRY_COLUMNS):
            problems.append(
                f"{where}: expected {len(ENTRY_COLUMNS)} values ({','.join(ENTRY_COLUMNS)}), got "
                f"{len(values)}; quote a value that holds a comma"
            )
            continue
        named = dict(zip(ENTRY_COLUMNS, (value.strip() for value in values), strict=True))
        row = _entry_row(named, where=where, line=start, problems=problems)
        if row is None:
            continue
        if row.experiment_id in seen:
            problems.append(
                f"{where}, column experiment_id: {row.experiment_id!r} is already on line "
                f"{seen[row.experiment_id]}; give each experiment one row"
            )
            continue
        seen[row.experiment_id] = start
        rows.append(row)
    if not rows and not problems:
        problems.append(f"{path} has no rows below its header; add one row per experiment to import")
    return rows


def _entry_row(values: dict[str, str], *, where: str, line: int, problems: list[str]) -> EntryRow | None:
    found: list[str] = []

    def bad(column: str, why: str) -> None:
        found.append(f"{where}, column {column}: {why}")

    def too_long(column: str, most: int) -> None:
        bad(column, f"has {len(values[column])} characters; at most {most} are allowed")

    if not values["experiment_id"]:
        bad("experiment_id", f"is empty; give the experiment's id in {RUN_GROUP_CSV}")
    elif len(values["experiment_id"]) > MAX_ID_CHARS:
        too_long("experiment_id", MAX_ID_CHARS)
    if not values["agent"]:
        bad("agent", "is empty; give the agent's name as the board should show it")
    elif len(values["agent"]) > NAME_TEXT:
        too_long("agent", NAME_TEXT)
    llms = tuple(name.strip() for name in values["llms"].split(";") if name.strip())
    if len(llms) > MAX_LIST_ITEMS or any(len(name) > NAME_TEXT for name in llms):
        bad("llms", f"list at most {MAX_LIST_ITEMS} names of at most {NAME_TEXT} characters, separated by ';'")
    if not _is_iso_date(values["date"]):
        bad("date", f"{values['date']!r} is not a date; write it as YYYY-MM-DD (ISO 8601), e.g. 2024-10-09")
    runtime = None
    try:
        runtime = _runtime_hours(values["runtime_hours"])
    except ValueError:
        bad(
            "runtime_hours",
            f"{values['runtime_hours']!r} is not a number of hours from 0 to "
            f"{MAX_RUNTIME_HOURS:g}; write e.g. 24 or 0.5, or leave it empty when unknown",
        )
    url = values["source_url"]
    if url and not _is_http_url(url):
        bad(
            "source_url",
            f"{url!r} is not an http:// or https:// address; give e.g. https://github.com/you/agent, or leave it empty",
        )
    if len(values["notes"]) > NOTES_TEXT:
        too_long("notes", NOTES_TEXT)
    problems.extend(found)
    if found:
        return None
    return EntryRow(
        experiment_id=values["experiment_id"],
        agent=values["agent"],
        llms=llms,
        date=values["date"],
        runtime_hours=runtime,
        source_url=url,
        notes=values["notes"],
        line=line,
    )


def _is_iso_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _runtime_hours(text: str) -> float | None:
    """The hours, None when empty; ValueError when not a number from 0 to MAX_RUNTIME_HOURS."""
    if not text:
        return None
    hours = float(text)
    if not (math.isfinite(hours) and 0 <= hours <= MAX_RUNTIME_HOURS):
        raise ValueError(text)
    return hours


def _is_http_url(text: str) -> bool:
    if len(text) > URL_TEXT or any(c.isspace() or ord(c) < 32 for c in text):
        return False
    parsed = urlsplit(text)
    return parsed.scheme.lower() in ("http", "https") and bool(parsed.hostname)


# --- runs/run_group_experiments.csv and the reports -------------------------------------------------------


def run_groups_read(*, checkout: Path, problems: list[str]) -> dict[str, list[tuple[str, int]]] | None:
    """Each experiment's run groups with their line, read as MLE-bench reads the file (blank lines and lines
    starting with the header's word skipped, split at the first comma, both sides stripped)."""
    text = _text_read(path=checkout / RUN_GROUP_CSV, shown=RUN_GROUP_CSV, problems=problems)
    if text is None:
        return None
    groups: dict[str, list[tuple[str, int]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("experiment_id"):
            continue
        experiment, comma, group = line.strip().partition(",")
        experiment, group = experiment.strip(), group.strip()
        where = f"{RUN_GROUP_CSV} line {number}"
        if not comma or not experiment or not group:
            problems.append(f"{where}: expected experiment_id,run_group; got {line.strip()!r}")
        elif group in (".", "..") or "/" in group or "\\" in group or len(group) > MAX_NAME_CHARS:
            problems.append(f"{where}: {group!r} is not the name of a run group folder in runs/")
        else:
            groups.setdefault(experiment, []).append((group, number))
    return groups


def experiment_plan(
    *,
    checkout: Path,
    entry: EntryRow,
    listed: Sequence[tuple[str, int]],
    registry: frozenset[str],
    members: Mapping[str, Sequence[str]],
    problems: list[str],
) -> ExperimentPlan | None:
    """Read one experiment's reports in MLE-bench's order and number its seeds; None after a problem."""
    warnings: list[str] = []
    found_before = len(problems)
    run_groups, reports = _report_paths(
        checkout=checkout, entry=entry, listed=listed, warnings=warnings, problems=problems
    )
    digests: list[list[str]] = []
    runs: list[ImportedRun] = []
    counts: dict[str, int] = {}
    unknown: set[str] = set()
    for relative, group in reports:
        data = _report_bytes(path=checkout / relative, checkout=checkout, shown=relative, problems=problems)
        if data is None:
            continue
        digests.append([relative, hashlib.sha256(data).hexdigest()])
        used: set[str] = set()
        for index, item in _report_items(data=data, shown=relative, problems=problems):
            competition_id = str(item["competition_id"])
            if competition_id not in registry:
                unknown.add(competition_id)
                continue
            try:
                report = parse_competition_report(item, where=f"competition_reports[{index}]")
            except MalformedReport as exc:
                problems.append(f"{relative}: {exc}")
                continue
            seed = counts.get(competition_id, 0)
            counts[competition_id] = seed + 1
            run_id = _run_id(
                submission_path=report.submission_path, competition_id=competition_id, index=index, used=used
            )
            runs.append(
                ImportedRun(
                    competition_id=competition_id,
                    seed=seed,
                    run_group=group,
                    run_id=run_id,
                    claimed=storable_report(report.to_dict(with_reason=False)),
                )
            )
    if unknown:
        names = sorted(unknown)
        warnings.append(
            f"{len(names)} competition(s) not in the registry were skipped: "
            + ", ".join(names[:20])
            + (" ..." if len(names) > 20 else "")
        )
    if len(problems) > found_before:
        return None
    content = {
        "importer": IMPORTER_VERSION,
        "aggregation": AGGREGATION_VERSION,
        "entry": _entry_fields(entry),
        "run_groups": run_groups,
        "reports": digests,
        "registry": sorted(registry),
        "tiers": {tier: list(slugs) for tier, slugs in members.items()},
    }
    return ExperimentPlan(
        entry=entry,
        run_groups=tuple(run_groups),
        reports=tuple(relative for relative, _ in reports),
        runs=tuple(runs),
        entries_per_competition=dict(counts),
        warnings=tuple(warnings),
        content_sha256=hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest(),
    )


def _report_paths(
    *, checkout: Path, entry: EntryRow, listed: Sequence[tuple[str, int]], warnings: list[str], problems: list[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The experiment's run groups, sorted, and its reports as (path relative to the checkout, run group) in
    MLE-bench's read order: one top-level report per group, the paths sorted."""
    first_line: dict[str, int] = {}
    for group, number in listed:
        if group in first_line:
            warnings.append(
                f"run group {group} is listed twice in {RUN_GROUP_CSV} (lines "
                f"{first_line[group]} and {number}); its report is read once"
            )
        first_line.setdefault(group, number)
    run_groups = sorted(first_line)
    reports: list[tuple[str, str]] = []
    refused = False
    for group in run_groups:
        folder = checkout / "runs" / group
        if not folder.is_dir():
            warnings.append(f"run group folder runs/{group} is missing; skipped")
            continue
        files = sorted(path for path in folder.glob(REPORT_GLOB) if path.is_file())
        if not files:
            warnings.append(f"runs/{group} has no {REPORT_GLOB}; skipped")
        elif len(files) > 1:
            refused = True
            names = ", ".join(path.name for path in files)
            problems.append(
                f"runs/{group} holds {len(files)} grading reports ({names}); MLE-bench reads "
                "exactly one per run group: move the others out of the folder"
            )
        else:
            reports.append((f"runs/{group}/{files[0].name}", group))
    if not reports and not refused:
        problems.append(
            f"experiment {entry.experiment_id}: none of its run groups ({', '.join(run_groups)}) "
            "has a grading report; add the reports or remove its row from ENTRIES.csv"
        )
    # MLE-bench sorts the report paths too: not the group order when one group's name starts another's.
    return run_groups, sorted(reports)


def _report_items(*, data: bytes, shown: str, problems: list[str]) -> list[tuple[int, Mapping[str, Any]]]:
    """A report's entries with their index in the file, stable-sorted by competition id as MLE-bench does."""
    try:
        obj = load_report_json(data)
    except MalformedReport as exc:
        problems.append(f"{shown}: {exc}")
        return []
    items = obj.get("competition_reports") if isinstance(obj, Mapping) else None
    if not isinstance(items, list):
        problems.append(
            f"{shown}: expected a run group's grading report, an object with a "
            "'competition_reports' list, as mlebench grade writes it"
        )
        return []
    entries = []
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and "competition_id" in item:
            entries.append((index, item))
        else:
            problems.append(
                f"{shown}: competition_reports[{index}] is not a competition report (an object with a competition_id)"
            )
    return sorted(entries, key=lambda pair: str(pair[1]["competition_id"]))


def _run_id(*, submission_path: str, competition_id: str, index: int, used: set[str]) -> str:
    """The run id in ``.../<run_id>/submission/submission.csv`` (MLE-bench's ``<competition_id>_<uuid>``),
    else one made from the entry's place in its file; unique within the run group."""
    parts = [part for part in re.split(r"[\\/]+", submission_path) if part]
    run_id = parts[-3] if len(parts) >= 3 and parts[-2:] == ["submission", "submission.csv"] else ""
    if not run_id.startswith(f"{competition_id}_") or len(run_id) > MAX_NAME_CHARS or run_id in used:
        run_id = f"{competition_id}_report{index}"
        while run_id in used:
            run_id += "x"
    used.add(run_id)
    return run_id


def _text_read(*, path: Path, shown: str, problems: list[str]) -> str | None:
    if not path.is_file():
        problems.append(f"{shown} is missing (looked for {path})")
        return None
    data = path.read_bytes()
    if data.startswith(_LFS_POINTER):
        problems.append(f"{shown} is a Git LFS pointer, not the file: run 'git lfs pull' in the checkout")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start})")
        return None


def _report_bytes(*, path: Path, checkout: Path, shown: str, problems: list[str]) -> bytes | None:
    if not path.resolve().is_relative_to(checkout.resolve()):
        problems.append(f"{shown} links outside the checkout; copy the report into runs/ instead")
        return None
    if path.stat().st_size > MAX_REPORT_BYTES:
        problems.append(f"{shown} is larger than {MAX_REPORT_BYTES // 2**20} MiB, far more than a run group's report")
        return None
    data = path.read_bytes()
    if data.startswith(_LFS_POINTER):
        problems.append(f"{shown} is a Git LFS pointer, not the report: run 'git lfs pull' in the checkout")
        return None
    return data


def _entry_fields(entry: EntryRow) -> dict[str, Any]:
    return {
        "experiment_id": entry.experiment_id,
        "agent": entry.agent,
        "llms": list(entry.llms),
        "date": entry.date,
        "runtime_hours": entry.runtime_hours,
        "source_url": entry.source_url,
        "notes": entry.notes,
    }
