"""The team's own grading reports in a bundle, read into claims per run.

A report is the team's word, not the evidence: only the submissions decide what is graded. So a report
that cannot be read, or whose fields do not fit MLE-bench's format (a null threshold, an unknown key, a
wrong type), never refuses the bundle. Each entry that can be read becomes the claim of the run it names
(by the run id in its ``submission_path``, else the next unmatched run of its competition), and every
problem is kept with the file it is in, for a flag a maintainer reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from grading.bundles.layout import BundleLayout, RunGroup
from grading.engine import safe_json
from grading.engine.report import REPORT_FIELDS, TOTAL_FIELDS
from grading.engine.report_parser import (
    MalformedReport,
    load_report_json,
    parse_competition_report,
    parse_totals,
)

MAX_REPORT_BYTES: Final = 64 * 1024 * 1024  # 75 competitions x many seeds is a few hundred KiB
MAX_PROBLEMS_KEPT: Final = 20  # per report file; the count of all of them is kept too
_KNOWN_FIELDS: Final = frozenset(REPORT_FIELDS) | {"reason", "medals_known"}  # the portal's own reports


@dataclass(frozen=True, kw_only=True)
class ReportProblems:
    file: str  # relative to the bundle root, e.g. "runs/<group>/grading_report.json"
    problems: tuple[str, ...]  # the first MAX_PROBLEMS_KEPT, each naming its JSON path
    total: int


@dataclass(frozen=True, kw_only=True)
class Claims:
    by_run: Mapping[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (run_group, run_id)
    # Report entries per competition, matched to a run or not: more entries than runs is padding.
    entries_per_competition: Mapping[str, int] = field(default_factory=dict)
    problems: tuple[ReportProblems, ...] = ()


def read_claims(*, layout: BundleLayout) -> Claims:
    by_run: dict[tuple[str, str], dict[str, Any]] = {}
    entries: Counter[str] = Counter()
    problems: list[ReportProblems] = []
    for group in layout.run_groups:
        if group.grading_report is None:
            continue
        found: list[str] = []
        _read_group(group, by_run=by_run, entries=entries, problems=found)
        if found:
            problems.append(
                ReportProblems(
                    file=group.grading_report.relative_to(layout.root).as_posix(),
                    problems=tuple(found[:MAX_PROBLEMS_KEPT]),
                    total=len(found),
                )
            )
    return Claims(by_run=by_run, entries_per_competition=dict(entries), problems=tuple(problems))


def _read_group(
    group: RunGroup,
    *,
    by_run: dict[tuple[str, str], dict[str, Any]],
    entries: Counter[str],
    problems: list[str],
) -> None:
    assert group.grading_report is not None
    if group.grading_report.stat().st_size > MAX_REPORT_BYTES:
        problems.append(f"the report is larger than {MAX_REPORT_BYTES // 2**20} MiB and was not read")
        return
    try:
        obj = load_report_json(group.grading_report.read_bytes())
    except MalformedReport as exc:
        problems.append(str(exc))
        return
    items = _items(obj, problems)
    if isinstance(obj, Mapping) and "competition_reports" in obj:
        try:
            parse_totals(obj)  # kept as claimed; only their shape is checked here
        except MalformedReport as exc:
            problems.append(str(exc))
    is_group = isinstance(obj, Mapping) and "competition_reports" in obj
    unknown_top = sorted(set(obj) - {"competition_reports", *TOTAL_FIELDS}) if is_group else []
    if unknown_top:
        problems.append(f"unknown key(s) at the top of the report: {', '.join(map(repr, unknown_top[:10]))}")
    by_id = {run.run_id: run for run in group.runs}
    unmatched: dict[str, list[dict[str, Any]]] = {}
    for where, item in items:
        competition_id = item.get("competition_id") if isinstance(item, Mapping) else None
        if isinstance(competition_id, str) and competition_id:
            entries[competition_id] += 1
        try:
            report = parse_competition_report(item, where=where)
        except MalformedReport as exc:
            problems.append(str(exc))
            continue
        unknown = sorted(set(item) - _KNOWN_FIELDS)
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(map(repr, unknown[:10]))}")
        claim = safe_json.storable_report(report.to_dict(with_reason=False))
        run_id = next((rid for rid in by_id if rid in claim["submission_path"]), None)
        if run_id is not None and (group.name, run_id) not in by_run:
            by_run[(group.name, run_id)] = claim
        else:
            unmatched.setdefault(report.competition_id, []).append(claim)
    for run in sorted(group.runs, key=lambda r: r.run_id):
        if (group.name, run.run_id) not in by_run and unmatched.get(run.competition_id):
            by_run[(group.name, run.run_id)] = unmatched[run.competition_id].pop(0)


def _items(obj: Any, problems: list[str]) -> Iterable[tuple[str, Any]]:
    if isinstance(obj, Mapping) and "competition_reports" in obj:
        reports = obj["competition_reports"]
        if isinstance(reports, list):
            return [(f"competition_reports[{i}]", item) for i, item in enumerate(reports)]
        problems.append("competition_reports: expected a list of competition reports")
        return []
    if isinstance(obj, Mapping) and "competition_id" in obj:
        return [("report", obj)]  # one competition's report, as MLE-bench's grade-sample writes
    problems.append("the report has neither 'competition_reports' nor 'competition_id'")
    return []
