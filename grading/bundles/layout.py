"""What an extracted bundle holds: run groups, their runs, metadata and the team's own grading reports.

The layout is MLE-bench's ``runs/`` folder (MECHANICS (h)) under a manifest:

    manifest.json
    runs/<run_group>/metadata.json                     optional
    runs/<run_group>/*grading_report*.json             optional, at most one per group (as in MLE-bench)
    runs/<run_group>/<competition_id>_<uuid>/          a run: submission/submission.csv, run.log, logs/, code/

Anything else is ignored but listed, so the entry page can show what was not looked at. One wrapping
folder (an archive of ``bundle/`` rather than of its contents) is accepted, since that is how most people
make archives.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grading.bundles.errors import BundleError, show_value
from grading.bundles.manifest import MAX_SEED
from grading.engine import safe_json

MAX_METADATA_BYTES = 16 * 1024 * 1024  # metadata.json lists one small object per run
_REPORT_PATTERN = "*grading_report*.json"
_SHOWN = 10  # how many offending names a message lists before "and N more"


@dataclass(frozen=True, kw_only=True)
class BundleRun:
    run_group: str
    # The run folder's name, "<competition_id>_<uuid>": MLE-bench keys metadata.json's "runs" by it.
    run_id: str
    competition_id: str
    path: Path
    submission: Path | None  # None: the run made no submission
    run_log: Path | None
    logs: tuple[str, ...]  # relative to the run folder, e.g. "logs/agent.log"
    code: tuple[str, ...]
    metadata: Mapping[str, Any] | None  # this run's entry in the group's metadata.json
    metadata_seed: int | None


@dataclass(frozen=True, kw_only=True)
class RunGroup:
    name: str
    path: Path
    metadata: Mapping[str, Any] | None
    grading_report: Path | None
    runs: tuple[BundleRun, ...]


@dataclass(frozen=True, kw_only=True)
class BundleLayout:
    root: Path  # the folder that holds manifest.json
    manifest: Path
    run_groups: tuple[RunGroup, ...]
    ignored: tuple[str, ...]  # files not looked at, relative to root

    @property
    def runs(self) -> tuple[BundleRun, ...]:
        return tuple(run for group in self.run_groups for run in group.runs)

    @property
    def report_only(self) -> bool:
        """Only grading reports, no runs: accepted, but nothing can be re-graded, so never comparable."""
        return not self.runs


def discover_layout(*, root: Path, known_competition_ids: Collection[str]) -> BundleLayout:
    """Map an extracted bundle, refusing what cannot be graded as MLE-bench would."""
    root = _bundle_root(Path(root))
    ignored = [
        path
        for entry in sorted(os.scandir(root), key=lambda e: e.name)
        if entry.name not in ("manifest.json", "runs")
        for path in _files(Path(entry.path), relative_to=root)
    ]
    runs_dir = root / "runs"
    if not runs_dir.is_dir() or runs_dir.is_symlink():
        raise BundleError("no_runs", "the bundle has no runs/ folder next to manifest.json")
    groups: list[RunGroup] = []
    bad_names: list[str] = []
    unknown: list[BundleRun] = []
    for entry in sorted(os.scandir(runs_dir), key=lambda e: e.name):
        if not entry.is_dir(follow_symlinks=False):
            ignored.append(f"runs/{entry.name}")
            continue
        group = _run_group(Path(entry.path), ignored=ignored, bad_names=bad_names)
        groups.append(group)
        unknown += [run for run in group.runs if run.competition_id not in known_competition_ids]
    if bad_names:
        raise BundleError(
            "bad_run_directory",
            f"not run directories (named <competition_id>_<run_id>): {_listing(bad_names)}",
            {"folders": bad_names},
        )
    if unknown:
        ids = sorted({run.competition_id for run in unknown})
        raise BundleError(
            "unknown_competition",
            f"runs for competitions this portal does not know: {_listing(ids)} "
            f"(in {_listing([f'runs/{run.run_group}/{run.run_id}' for run in unknown])})",
            {"competition_ids": ids},
        )
    if not groups:
        raise BundleError("no_runs", "runs/ holds no run group (runs/<run_group>/<competition_id>_<run_id>/)")
    return BundleLayout(
        root=root, manifest=root / "manifest.json", run_groups=tuple(groups), ignored=tuple(sorted(ignored))
    )


def _bundle_root(root: Path) -> Path:
    if (root / "manifest.json").is_file():
        return root
    entries = sorted(os.scandir(root), key=lambda e: e.name)
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False):
        inner = Path(entries[0].path)
        if (inner / "manifest.json").is_file():
            return inner
    found = ", ".join(entry.name for entry in entries[:_SHOWN]) or "nothing"
    raise BundleError(
        "manifest_missing",
        f"manifest.json is missing at the top of the bundle (found: {found}); put it next to runs/",
    )


def _run_group(path: Path, *, ignored: list[str], bad_names: list[str]) -> RunGroup:
    where = f"runs/{path.name}"
    metadata = None
    reports, runs = [], []
    entries = sorted(os.scandir(path), key=lambda e: e.name)
    for entry in entries:
        if entry.name == "metadata.json" and entry.is_file(follow_symlinks=False):
            metadata = _metadata(Path(entry.path), where=f"{where}/metadata.json")
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            if fnmatch.fnmatchcase(entry.name, _REPORT_PATTERN):
                reports.append(Path(entry.path))
            elif entry.name != "metadata.json":
                ignored.append(f"{where}/{entry.name}")
        elif entry.is_dir(follow_symlinks=False):
            competition_id, _, suffix = entry.name.rpartition("_")
            if not competition_id or not suffix:
                bad_names.append(f"{where}/{entry.name}")
                continue
            runs.append(
                _run(
                    Path(entry.path),
                    group=path.name,
                    competition_id=competition_id,
                    metadata=metadata,
                    ignored=ignored,
                )
            )
        else:
            ignored.append(f"{where}/{entry.name}")
    if len(reports) > 1:
        names = [report.name for report in reports]
        raise BundleError(
            "multiple_grading_reports",
            f"{where} holds {len(reports)} grading reports ({_listing(names)}); MLE-bench allows one per "
            "run group: keep one, or split the runs into several run groups",
            {"run_group": path.name, "reports": names},
        )
    if not runs and not reports:
        raise BundleError(
            "no_runs",
            f"{where} holds no run directories (<competition_id>_<run_id>/) and no *grading_report*.json",
            {"run_group": path.name},
        )
    return RunGroup(
        name=path.name,
        path=path,
        metadata=metadata,
        grading_report=reports[0] if reports else None,
        runs=tuple(runs),
    )


def _run(
    path: Path, *, group: str, competition_id: str, metadata: Mapping[str, Any] | None, ignored: list[str]
) -> BundleRun:
    submission = path / "submission" / "submission.csv"
    run_log = path / "run.log"
    logs, code = [], []
    for file in _files(path, relative_to=path):
        if file.startswith("logs/"):
            logs.append(file)
        elif file.startswith("code/"):
            code.append(file)
        elif file not in ("submission/submission.csv", "run.log"):
            ignored.append(f"runs/{group}/{path.name}/{file}")
    entry = ((metadata or {}).get("runs") or {}).get(path.name)
    return BundleRun(
        run_group=group,
        run_id=path.name,
        competition_id=competition_id,
        path=path,
        submission=submission if _is_file(submission) else None,
        run_log=run_log if _is_file(run_log) else None,
        logs=tuple(logs),
        code=tuple(code),
        metadata=entry,
        metadata_seed=entry.get("seed") if entry else None,
    )


def _metadata(path: Path, *, where: str) -> Mapping[str, Any]:
    def invalid(why: str) -> BundleError:
        return BundleError("metadata_invalid", f"{where}: {why}", {"file": where})

    if path.stat().st_size > MAX_METADATA_BYTES:
        raise invalid("larger than 16 MiB; MLE-bench writes one small entry per run")
    try:
        data = safe_json.loads(path.read_bytes())
    except safe_json.UnsafeJson as exc:
        message = f"{where} {exc}" if exc.path is None else f"{where}: {exc}"
        raise BundleError("metadata_invalid", message, {"file": where, "key": exc.path}) from None
    if not isinstance(data, dict):
        raise invalid("must hold a JSON object like {run_group, created_at, runs: {run_id: {...}}}")
    runs = data.get("runs")
    if runs is None:
        return data
    if not isinstance(runs, dict) or not all(isinstance(entry, dict) for entry in runs.values()):
        raise invalid("'runs' must be an object of {run_id: {...}}")
    for run_id, entry in runs.items():
        seed = entry.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
            raise invalid(f"'runs.{run_id}.seed' must be a whole number from 0 to {MAX_SEED}; got {show_value(seed)}")
    return data


def _files(path: Path, *, relative_to: Path) -> list[str]:
    """Regular files under ``path`` (or ``path`` itself), as sorted POSIX paths; links are not followed."""
    if path.is_symlink() or path.is_file():
        return [path.relative_to(relative_to).as_posix()]
    found = []
    for folder, dirs, names in os.walk(path):
        dirs.sort()
        found += [(Path(folder) / name).relative_to(relative_to).as_posix() for name in sorted(names)]
    return sorted(found)


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"
