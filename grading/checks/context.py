"""Everything the checks read, as plain data: the bundle's parsed parts, the re-grade, the board's facts.

The checking step (grading/services/finish.py) builds a CheckContext from the database and the unpacked
bundle; tests build one from a run group written in code. Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from grading.bundles.manifest import Manifest
from grading.checks.base import GradedRun
from grading.checks.fingerprint import Content, SeedCopy, UnreadableSubmission, content_of
from grading.checks.patterns import all_patterns
from grading.checks.scan import ScanResult, scan_files, walk_files
from grading.checks.scan.unwrap import DEFAULT_LIMITS, Limits
from grading.engine.hashing import file_sha256

CODE_SUFFIXES = frozenset({".py", ".sh", ".r", ".jl"})


@dataclass(frozen=True, kw_only=True)
class CheckSettings:
    """The thresholds of the checks (Django settings CHECK_*, read by the checking step)."""

    scan_max_hits: int = 5  # hits shown per pattern; the total is always counted
    scan_context_lines: int = 2
    scan_max_line_bytes: int = 65536
    scan_max_bytes: int = 32 * 1024**3  # read per submission, every file of its runs (decoded)
    implausible_margin: float = 1.0  # beyond gold by this many (gold - median) spreads
    perfect_tolerance: float = 1e-4
    code_similarity: float = 0.9  # difflib ratio from which two teams' code for a competition is near-identical
    code_compare_chars: int = 50_000  # of each run's code, normalised, kept for cross-team comparison
    runtime_tolerance: float = 0.1  # a run may exceed the declared runtime by this share before it is flagged
    answer_copy_agreement: float = 0.92  # answer_copy: the lower bound of the chance-corrected row agreement
    unwrap_limits: Limits = DEFAULT_LIMITS  # what one file may unpack to (archive bombs)
    answer_copy_exact: float = 0.02  # answer_copy: share of cells equal to the answer to the bit, beyond chance
    answer_copy_error_ratio: float = 0.5  # answer_copy: an honest model errs at least this share of its own forecast
    answer_copy_confidence: float = 0.999  # answer_copy: the confidence of every statistical judgement


@dataclass(frozen=True, kw_only=True)
class RunFiles:
    """One run of the bundle: where its files are and what was claimed and re-graded for it."""

    competition_id: str
    seed: int
    run_path: str  # "runs/<run_group>/<run_id>"
    folder: Path | None  # on disk; None when the files are gone
    submission: Path | None
    claimed: dict | None = None
    regraded: dict = field(default_factory=dict)
    grading_error: str = ""  # the server failed to grade it (ours): no re-grade, and no claim to compare with it

    agreement: Mapping[str, Any] | None = None  # measured against the private answers while grading

    @property
    def key(self) -> str:
        return f"{self.competition_id}/seed-{self.seed}"

    def graded_with(self, *, submission_sha256: str = "") -> GradedRun:
        return GradedRun(
            competition_id=self.competition_id,
            seed=self.seed,
            run_path=self.run_path,
            has_file=self.submission is not None,
            claimed=self.claimed,
            regraded=self.regraded,
            submission_sha256=submission_sha256,
        )

    @property
    def graded(self) -> GradedRun:
        return self.graded_with()

    def log_files(self) -> list[Path]:
        if self.folder is None:
            return []
        run_log = self.folder / "run.log"
        found = [run_log] if run_log.is_file() else []
        return found + (walk_files(self.folder / "logs") if (self.folder / "logs").is_dir() else [])

    def code_files(self) -> list[Path]:
        if self.folder is None or not (self.folder / "code").is_dir():
            return []
        return walk_files(self.folder / "code")

    def other_files(self) -> list[Path]:
        """The run folder's files beside run.log, logs/, code/ and the scored submission (notes, caches, ...)."""
        if self.folder is None:
            return []
        known = {self.folder / "run.log", self.submission}
        inside = (self.folder / "logs", self.folder / "code")
        return [p for p in walk_files(self.folder) if p not in known and not any(p.is_relative_to(d) for d in inside)]

    def has_log(self, *, hosted: bool = False) -> bool:
        """Whether the run has a log to read: a run.log or a file under logs/ with something in it. A hosted
        run's run.log is the worker's capture of the agent's output, there even when the agent printed nothing."""
        if self.folder is None:
            return False
        run_log = self.folder / "run.log"
        if run_log.is_file() and (hosted or run_log.stat().st_size > 0):
            return True
        return any(path.stat().st_size > 0 for path in self.log_files() if path != run_log)


def _copy_of(
    seed: int, digest: str, content: Content | None, kept: list[tuple[RunFiles, str, Content | None]]
) -> tuple[SeedCopy, str] | None:
    """The earlier distinct file this one copies, and the key it is counted by; None: a distinct run."""
    for run, other_digest, _ in kept:
        if digest == other_digest:
            return SeedCopy(seed=seed, of=run.seed, how="identical"), other_digest
    if content is None:
        return None
    for run, other_digest, other in kept:
        if other is None:
            continue
        if other.fingerprint == content.fingerprint:
            return SeedCopy(seed=seed, of=run.seed, how="normalised"), other_digest
        if content.near_duplicate_of(other):
            equal, rows = content.equal_rows(other), max(len(content.rows), len(other.rows))
            return SeedCopy(seed=seed, of=run.seed, how="near", rows_equal=equal, rows=rows), other_digest
    return None


@dataclass(frozen=True, kw_only=True)
class CompetitionFacts:
    slug: str
    answers_file: str = ""  # e.g. "prepared/private/test.csv"
    higher_is_better: bool = True
    is_lower_better: bool | None = None  # from the leaderboard in force
    gold_threshold: float | None = None
    median_threshold: float | None = None
    leaderboard_best: float | None = None
    submission_columns: tuple[str, ...] = ()
    id_column: str = ""


@dataclass(frozen=True, kw_only=True)
class KnownIssue:
    competition: str
    kind: str  # "leak", "loophole" or "other"
    description: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class OtherEntry:
    """Another team's earlier entry, as far as the index (duplicate_submissions.entry_index, stored by its
    checking step) holds what it shares with this one: the checking step looks our hashes up and builds one
    OtherEntry per entry that holds any of them; a test or a benchmark may pass the whole index."""

    submission_id: int
    team: str
    submissions: Mapping[str, str]  # normalised fingerprint (sha256 of an unparseable file) -> "competition/seed-N"
    code: Mapping[str, frozenset[int]] = field(default_factory=dict)  # competition -> winnowed code fingerprints
    logs: Mapping[str, str] = field(default_factory=dict)  # normalised log hash -> "competition/seed-N"


@dataclass(frozen=True, kw_only=True)
class RegistrationFacts:
    """The registration a bundle names (SPEC section 9): its competitions and seeds all count."""

    id: int
    nonce: str
    competitions: tuple[str, ...]
    seeds: int


@dataclass(frozen=True, kw_only=True)
class BoardVersion:
    name: str = "mle-bench"
    version: str = ""
    commit: str = ""


@dataclass(frozen=True, kw_only=True)
class CheckContext:
    manifest: Manifest | None
    runs: tuple[RunFiles, ...] = ()
    report_claims: Mapping[str, Any] = field(default_factory=dict)
    report_only: bool = False
    competitions: Mapping[str, CompetitionFacts] = field(default_factory=dict)
    tier_members: Mapping[str, list[str]] = field(default_factory=dict)
    known_issues: tuple[KnownIssue, ...] = ()
    board: BoardVersion = BoardVersion()
    other_entries: tuple[OtherEntry, ...] = ()
    settings: CheckSettings = CheckSettings()
    hosted: bool = False  # run by the portal's workers (their run.log is the captured output, even when empty)
    registration: RegistrationFacts | None = None
    # The team's lapsed registrations of this agent and version that no bundle named (grading.selectors.
    # unnamed_registrations): their registered seeds count as failures of this entry.
    unnamed_registrations: tuple[RegistrationFacts, ...] = ()
    cache: dict = field(default_factory=dict, compare=False, repr=False)  # what several checks compute once

    @property
    def graded(self) -> list[GradedRun]:
        """The runs as the score and seed checks see them, each with its submission's SHA-256."""
        keys = self.copy_keys()
        return [run.graded_with(submission_sha256=keys.get(run.key, "")) for run in self.runs]

    def copy_keys(self) -> dict[str, str]:
        """run key -> what copies across seeds are counted by: the SHA-256 of the earliest seed's file whose
        copy it is (byte-identical, identical once normalised, or a near-duplicate), else its own."""
        self._seed_copies()
        return self.cache["copy_keys"]

    def seed_copies(self) -> dict[str, SeedCopy]:
        """run key -> how its submission copies an earlier seed's of the same competition (copies only)."""
        self._seed_copies()
        return self.cache["seed_copies"]

    def content_fingerprints(self) -> dict[str, str]:
        """run key -> the normalised content's fingerprint of its submission (files that parse as CSV and
        predict more than one value: a constant file, a sample submission, is no one's own work)."""
        self._seed_copies()
        return self.cache["content_fingerprints"]

    def parsed_submissions(self) -> set[str]:
        """run keys whose submission parses as CSV (constant ones too)."""
        self._seed_copies()
        return self.cache["parsed_submissions"]

    def _seed_copies(self) -> None:
        if "seed_copies" in self.cache:
            return
        hashes = self.submission_hashes()
        keys: dict[str, str] = {}
        copies: dict[str, SeedCopy] = {}
        prints: dict[str, str] = {}
        parsed: set[str] = set()
        by_competition: dict[str, list[RunFiles]] = {}
        for run in sorted(self.runs, key=lambda r: (r.competition_id, r.seed)):
            if run.key in hashes and run.submission is not None:
                by_competition.setdefault(run.competition_id, []).append(run)
        for competition, runs in by_competition.items():
            facts = self.competitions.get(competition)
            id_column = facts.id_column if facts else ""
            kept: list[tuple[RunFiles, str, Content | None]] = []  # one per distinct file, lowest seed first
            for run in runs:
                digest = hashes[run.key]
                try:
                    content: Content | None = content_of(run.submission, id_column=id_column)  # type: ignore[arg-type]
                except (UnreadableSubmission, OSError):
                    content = None
                if content is not None:
                    parsed.add(run.key)
                    if not content.constant:
                        prints[run.key] = content.fingerprint
                found = _copy_of(run.seed, digest, content, kept)
                if found is None:
                    kept.append((run, digest, content))
                    keys[run.key] = digest
                else:
                    copies[run.key], keys[run.key] = found
        self.cache.update(seed_copies=copies, copy_keys=keys, content_fingerprints=prints, parsed_submissions=parsed)

    def submission_hashes(self) -> dict[str, str]:
        """run key ("competition/seed-N") -> SHA-256 of its submission file, computed once per context."""
        if "submission_hashes" not in self.cache:
            self.cache["submission_hashes"] = {
                run.key: file_sha256(run.submission)
                for run in self.runs
                if run.submission is not None and run.submission.is_file()
            }
        return self.cache["submission_hashes"]

    @property
    def seeds_declared(self) -> int:
        return int(self.manifest.seeds or 0) if self.manifest else 0

    def tiers_of(self, competition_id: str) -> list[str]:
        return [tier for tier, members in self.tier_members.items() if competition_id in members]

    def tiers_of_all(self, competition_ids: Iterable[str]) -> list[str]:
        wanted = set(competition_ids)
        return [tier for tier, members in self.tier_members.items() if wanted & set(members)]

    def files(self) -> list[tuple[str, Path, str]]:
        """(label relative to the bundle, path, "logs"|"code") for every file of every run but its scored
        submission: run.log and logs/, code/, then the rest (Python files read as code, the others as logs)."""
        found = []
        for run in self.runs:
            if run.folder is None:
                continue  # a run whose files are gone has no logs or code
            others = run.other_files()
            for kind, paths in (
                ("logs", run.log_files()),
                ("code", run.code_files()),
                ("code", [path for path in others if path.suffix.lower() in CODE_SUFFIXES]),
                ("logs", [path for path in others if path.suffix.lower() not in CODE_SUFFIXES]),
            ):
                for path in paths:
                    found.append((f"{run.run_path}/{path.relative_to(run.folder).as_posix()}", path, kind))
        return found

    @cached_property
    def scan(self) -> ScanResult:
        """One pass over every file of every run with every check's patterns (shared by the checks)."""
        s = self.settings
        return scan_files(
            self.files(),
            patterns=all_patterns(self),
            max_hits=s.scan_max_hits,
            context_lines=s.scan_context_lines,
            max_line_bytes=s.scan_max_line_bytes,
            max_bytes=s.scan_max_bytes,
            limits=s.unwrap_limits,
        )
