"""Greedy matching of predictions to ground truth within groups, vectorised where nothing competes.

Both SIIM-COVID-19 and Kuzushiji match greedily: items are taken in a fixed order, and each takes the best
(or first) still-free partner among its candidates. When no partner is a candidate of two items, nothing
competes and every item with a candidate is matched: that is decided for all groups at once. Only groups
where some partner is wanted twice are replayed item by item, which real submissions rarely need.
"""

from __future__ import annotations

import numpy as np


def greedy_match(
    item: np.ndarray,
    partner: np.ndarray,
    preference: np.ndarray,
    item_group: np.ndarray,
    n_items: int,
) -> np.ndarray:
    """Whether each item gets a partner, processing items in index order.

    ``item[k], partner[k]`` is a candidate pair (both global indices; an item's index is its position in
    the processing order, groups are independent), ``preference[k]`` how much the item wants that partner:
    an item takes the free candidate with the highest preference, the lowest partner index on a tie.
    """
    matched = np.zeros(n_items, dtype=bool)
    if not len(item):
        return matched
    wanted_by = np.bincount(partner)
    contested_partner = wanted_by[partner] > 1
    contested_groups = np.unique(item_group[item[contested_partner]])
    replay = np.isin(item_group[item], contested_groups)
    matched[np.unique(item[~replay])] = True
    if replay.any():
        _replay(item[replay], partner[replay], preference[replay], matched)
    return matched


def _replay(item: np.ndarray, partner: np.ndarray, preference: np.ndarray, matched: np.ndarray) -> None:
    order = np.lexsort((partner, -preference, item))
    taken: set[int] = set()
    current, done = -1, False
    for i, p in zip(item[order].tolist(), partner[order].tolist()):
        if i != current:
            current, done = i, False
        if done or p in taken:
            continue
        taken.add(p)
        matched[i] = True
        done = True
