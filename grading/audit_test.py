"""The audit's test (README "Audits"): does an entry's own score on a competition exceed what the portal's re-run
of its agent reaches by more than the spread between seeds allows? Plain functions, no Django, so that
benchmarks/audit_test.py measures the very same test.

Per audited competition, with scores turned so that higher is better (negated where lower is better):

- B, the bundle's mean over its n_b valid runs there; A, the audit's mean over its n_a valid runs;
- s, the pooled standard deviation of both sets (each set's deviations from its own mean, n_a + n_b - 2 degrees of
  freedom; 0 when there are none);
- margin = max(t(1 - alpha; n_a + n_b - 2) * s * sqrt(1/n_a + 1/n_b), tolerance), the one-sided Student t
  critical value at alpha (AUDIT_ALPHA_PERMILLE / 1000), and tolerance = AUDIT_TOLERANCE_PERMILLE / 1000 of the
  larger of |A| and |B| (a floor for agents whose seeds agree exactly, and for one-seed sets);
- it disagrees when B - A > margin, and when the audit made no valid submission at all where the bundle has one.

The entry's seeds may be more than the audit's; a competition where the bundle has no valid run is not tested.
"""

import math
from dataclasses import asdict, dataclass
from typing import Any

from scipy.stats import t as student_t


@dataclass(frozen=True, kw_only=True)
class Verdict:
    competition: str
    bundle_scores: list[float]
    audit_scores: list[float]
    bundle_mean: float | None
    audit_mean: float | None
    lower_is_better: bool
    excess: float | None  # B - A, turned so that positive means the bundle is better
    pooled_sd: float | None
    critical_t: float | None
    margin: float | None
    disagrees: bool
    why: str

    def as_dict(self) -> dict:
        return asdict(self)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def audit_compare(
    *,
    competition: str,
    bundle: list[float],
    audit: list[float],
    lower_is_better: bool,
    alpha: float,
    tolerance: float,
) -> Verdict:
    """The test for one competition: valid scores only (a run without one is left out of both lists)."""
    b_mean = _mean(bundle) if bundle else None
    a_mean = _mean(audit) if audit else None

    def verdict(**rest: Any) -> Verdict:
        return Verdict(
            competition=competition,
            bundle_scores=list(bundle),
            audit_scores=list(audit),
            bundle_mean=b_mean,
            audit_mean=a_mean,
            lower_is_better=lower_is_better,
            **rest,
        )

    empty: dict[str, Any] = {"excess": None, "pooled_sd": None, "critical_t": None, "margin": None}
    if not bundle:
        return verdict(**empty, disagrees=False, why="the bundle has no valid run here: nothing to compare")
    if not audit:
        return verdict(**empty, disagrees=True, why="the audit's re-runs made no valid submission; the bundle's did")
    assert b_mean is not None and a_mean is not None
    sign = -1.0 if lower_is_better else 1.0
    excess = sign * (b_mean - a_mean)
    df = len(bundle) + len(audit) - 2
    squares = sum((x - b_mean) ** 2 for x in bundle) + sum((x - a_mean) ** 2 for x in audit)
    sd = math.sqrt(squares / df) if df > 0 else 0.0
    critical = float(student_t.ppf(1 - alpha, df)) if df > 0 else 0.0
    spread_margin = critical * sd * math.sqrt(1 / len(bundle) + 1 / len(audit))
    floor = tolerance * max(abs(a_mean), abs(b_mean))
    margin = max(spread_margin, floor)
    disagrees = excess > margin
    better = "lower" if lower_is_better else "higher"
    why = (
        f"the bundle's mean is {abs(excess):.6g} {better if excess > 0 else 'worse'} than the audit's"
        f"{'' if excess > 0 else ' (not better)'}; the margin allowed is {margin:.6g} "
        f"({'the spread between seeds' if spread_margin >= floor else 'the minimum tolerance'})"
    )
    return verdict(excess=excess, pooled_sd=sd, critical_t=critical, margin=margin, disagrees=disagrees, why=why)
