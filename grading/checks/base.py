"""What every check returns, and the re-graded run the score checks compare."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FlagData:
    code: str
    severity: str  # "blocking", "warning" or "info"
    key: str  # what the flag is about, unique per code (e.g. competition/seed)
    message: str
    tiers: list[str] = field(default_factory=list)
    evidence: dict = field(default_factory=dict)  # public: shown wherever the flag is
    # Maintainer-only: what names other teams' unpublished work (the review pages, never the entry or its API)
    private: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GradedRun:
    competition_id: str
    seed: int
    run_path: str  # "runs/<run_group>/<run_id>", relative to the bundle root
    has_file: bool
    claimed: dict | None
    regraded: dict
    submission_sha256: str = ""  # of its submission.csv; empty without one (copies across seeds count once)
