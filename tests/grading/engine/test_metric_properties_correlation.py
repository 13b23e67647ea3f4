"""Kendall tau of orders (AI4Code) against SciPy: the one correlation metric computed by hand.

Spearman and Pearson call SciPy themselves and the Matthews correlation is checked with the class-label
family; ``kendall_tau_orders`` counts inversions with a vectorised merge sort
(``grading/engine/graders/correlation/kendall.py``) and pools them over notebooks. For one notebook of
distinct cells that is ``scipy.stats.kendalltau``; over several, the pooled
``1 - 4 * inversions / sum(n * (n - 1))`` of the reference, checked here with a brute-force count.
"""

from itertools import combinations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import kendalltau

from tests.grading.engine.metric_inputs import PROPERTY, assert_close, grade, ids, table


@st.composite
def notebook(draw):
    cells = [f"c{i:x}" for i in range(draw(st.integers(2, 40)))]
    return cells, draw(st.permutations(cells))


def score(truth: list[list[str]], predicted: list[list[str]]) -> float:
    submission = table({"id": ids(len(truth)), "cell_order": [" ".join(p) for p in predicted]})
    answers = table({"id": ids(len(truth)), "cell_order": [" ".join(t) for t in truth]})
    return grade("kendall_tau_orders", submission, answers, id_column="id", order_column="cell_order")


@PROPERTY
@given(notebook())
def test_one_notebook_scores_scipy_kendall_tau(case):
    truth, predicted = case
    ranks = [truth.index(cell) for cell in predicted]
    assert_close(score([truth], [predicted]), kendalltau(np.arange(len(ranks)), ranks).statistic)


@PROPERTY
@given(st.lists(notebook(), min_size=1, max_size=6))
def test_notebooks_are_pooled_by_inversions(cases):
    inversions = 0
    pairs = 0
    for truth, predicted in cases:
        ranks = [truth.index(cell) for cell in predicted]
        inversions += sum(1 for i, j in combinations(range(len(ranks)), 2) if ranks[i] > ranks[j])
        pairs += len(ranks) * (len(ranks) - 1)
    assert_close(score([t for t, _ in cases], [p for _, p in cases]), 1 - 4 * inversions / pairs)
