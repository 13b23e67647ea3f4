"""What the board's pages, exports and API read of a board row: typed views made by the selectors
(leaderboard/selectors/board.py) from the stored rows, so that every reader is checked by mypy; they are
turned into JSON in one place, leaderboard/exports.py's ``api_row``.

Plain dataclasses (no Django): a cached page pickles them, and a template reads their fields as it read keys.
"""

from dataclasses import dataclass, field
from typing import Any

# In the keys of cached pages: a page cached by an earlier release (another shape of row) is never read back.
READ_MODEL_VERSION = "rows-3"


@dataclass(frozen=True)
class TierCell:
    """A tier's figure as a row shows it: any-medal mean ± SEM over the seeds of the aggregate it uses."""

    text: str  # "mean ± sem"
    seeds: int
    padded: bool  # the padded aggregate (missing runs counted as failures), not the complete one
    mean: float
    sem: float


@dataclass
class RowView:
    """One row of a board view: its entry's identity and transparency columns, its figure in the view's tier,
    its rank there (comparable rows), and each tier's figure as a cell."""

    entry_id: int
    submission_id: int
    board: str
    comparable: bool
    rank: int | None
    tier: str  # the tab's tier, or on the overview the headline tier the row stands for
    tier_label: str
    rank_low: int | None
    rank_high: int | None
    tied_with: list[int]  # ranks of the comparable rows statistically tied with it
    tied_text: str  # those ranks as "#2–4, #7"
    agent: str
    agent_version: str
    team: str
    llms: list[str]
    date: str  # ISO
    runtime_hours: float | None
    hardware: dict[str, Any]
    hardware_text: str
    internet_access: bool | None
    open_source: bool | None
    source_url: str
    source_link: str | None  # what a page links to: an http(s) address, else nothing
    benchmark_version: str
    test_set_info: str
    resources: str
    verified: str
    verified_label: str
    level: str  # the entry's evidence level (leaderboard/levels.py)
    padded: bool  # some tier's figure of the entry uses the padded aggregate
    uses: str  # "complete" or "padded": the aggregate of the view's tier
    seeds: int
    any_medal: dict[str, float]  # {"mean", "sem"} in the view's tier
    cells: dict[str, TierCell | None]  # per tier; None where the tier was not run
    tiers: dict[str, dict[str, Any]]  # per tier run: the aggregate shown (every measure), with "padded" and "uses"
    footnotes: list[str]
    url: str
    # Set by the page: each footnote's number on the page, the marks the row shows, how many more there are.
    footnote_numbers: list[int] = field(default_factory=list)
    footnote_marks: list[tuple[int, str]] = field(default_factory=list)
    footnotes_more: int = 0
