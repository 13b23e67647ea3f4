"""Reads of the board, one module per page: ``query`` (what a view asks for, from its URL), ``board`` (a board
page's rows as typed row views, leaderboard/read_models.py), ``figures`` (its plots), ``entry`` and
``competition`` (those pages). Cached per board version (bumped by every refresh).

The names below are the package's public interface; callers import them from here.
"""

from leaderboard.selectors.board import BoardPage, board_elsewhere, board_meta, board_page, board_stamp
from leaderboard.selectors.competition import competition_results
from leaderboard.selectors.entry import (
    EntryLevel,
    EntryRegistration,
    SeedMatrix,
    entry_get,
    entry_level,
    entry_level_facts,
    entry_matrix,
    entry_ranks,
    entry_rates,
    entry_registration,
    entry_registrations,
)
from leaderboard.selectors.figures import board_figures, board_points, medal_frequency
from leaderboard.selectors.query import (
    BOARD_LABELS,
    BOARDS,
    CACHE_SECONDS,
    HEADLINE_ORDER,
    MAX_PAGE_SIZE,
    OVERVIEW,
    PAGE_SIZE,
    RESOURCE_FILTERS,
    SORTS,
    TAB_CHOICES,
    TAB_LABELS,
    VERIFIED_FILTERS,
    BadQuery,
    BoardQuery,
    sort_link,
)

__all__ = [
    "EntryRegistration",
    "entry_registration",
    "entry_registrations",
    "BOARDS",
    "BOARD_LABELS",
    "CACHE_SECONDS",
    "HEADLINE_ORDER",
    "MAX_PAGE_SIZE",
    "OVERVIEW",
    "PAGE_SIZE",
    "RESOURCE_FILTERS",
    "SORTS",
    "TAB_CHOICES",
    "TAB_LABELS",
    "VERIFIED_FILTERS",
    "BadQuery",
    "BoardPage",
    "BoardQuery",
    "EntryLevel",
    "SeedMatrix",
    "board_elsewhere",
    "board_figures",
    "board_meta",
    "board_page",
    "board_points",
    "board_stamp",
    "competition_results",
    "entry_get",
    "entry_level",
    "entry_level_facts",
    "entry_matrix",
    "entry_ranks",
    "entry_rates",
    "medal_frequency",
    "sort_link",
]
