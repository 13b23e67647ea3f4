"""The random audit's test (grading/audit_test.py, README "Audits"): its false-alarm rate on honest re-runs and its
power against selected seeds and against numbers the agent cannot reach, by simulation:

    .venv/bin/python benchmarks/audit_test.py [--trials 4000] [--alpha-permille 10] [--tolerance-permille 20]
        [--audit-seeds 2] [--competitions 2] [--json]

Each competition's score per seed is drawn from Normal(mean, sd), higher is better (the test turns lower-is-better
scores round first, so nothing is lost). The example agent (runners/agents/example-agent) has no randomness at
all: it predicts the training data's column means or modes, so its seeds agree exactly (sd 0; the hosted
end-to-end test and tests/runners/test_audit_end_to_end.py see the same score on every seed). Its row is the
first; the others give the same test agents whose seeds spread by 1 %, 3 % and 5 % of the mean, as LLM agents'
do.

Scenarios, per agent, with the audit re-running AUDIT_SEEDS seeds of each of k competitions:

- honest: the bundle holds 3 seeds drawn like the audit's (the false-alarm rate);
- best 3 of 10: the team ran 10 seeds and uploaded the best 3 by score on each competition (the power);
- unreachable +x %: the bundle's 3 seeds come from a mean x % above what the agent reaches (the power).

An entry is flagged when any of its k audited competitions disagrees; both rates are per entry.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grading.audit_test import audit_compare  # noqa: E402

MEAN = 0.8
SPREADS = (0.0, 0.01, 0.03, 0.05)  # sd as a share of the mean; 0: the example agent
INFLATIONS = (0.01, 0.03, 0.05, 0.10, 0.25)


def _flagged(bundle: np.ndarray, audit: np.ndarray, *, alpha: float, tolerance: float) -> bool:
    return any(
        audit_compare(
            competition=str(c),
            bundle=list(map(float, bundle[c])),
            audit=list(map(float, audit[c])),
            lower_is_better=False,
            alpha=alpha,
            tolerance=tolerance,
        ).disagrees
        for c in range(bundle.shape[0])
    )


def rates(args: argparse.Namespace) -> list[dict]:
    rng = np.random.default_rng(20261206)
    alpha, tolerance = args.alpha_permille / 1000, args.tolerance_permille / 1000
    k, n_audit = args.competitions, args.audit_seeds
    rows = []
    for spread in SPREADS:
        sd = spread * MEAN

        def draw(n: int, shift: float = 0.0, sd: float = sd) -> np.ndarray:
            return rng.normal(MEAN * (1 + shift), sd, size=(k, n)) if sd else np.full((k, n), MEAN * (1 + shift))

        counts = {"honest": 0, "best 3 of 10": 0, **{f"unreachable +{x:.0%}": 0 for x in INFLATIONS}}
        for _ in range(args.trials):
            audit = draw(n_audit)
            counts["honest"] += _flagged(draw(3), audit, alpha=alpha, tolerance=tolerance)
            best = np.sort(draw(10), axis=1)[:, -3:]
            counts["best 3 of 10"] += _flagged(best, audit, alpha=alpha, tolerance=tolerance)
            for x in INFLATIONS:
                counts[f"unreachable +{x:.0%}"] += _flagged(draw(3, x), audit, alpha=alpha, tolerance=tolerance)
        scenarios = {name: count / args.trials for name, count in counts.items()}
        rows.append(
            {
                "agent": "example agent (sd 0)" if spread == 0 else f"sd {spread:.0%} of the mean",
                "sd_share": spread,
                **scenarios,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--alpha-permille", type=int, default=10)
    parser.add_argument("--tolerance-permille", type=int, default=20)
    parser.add_argument("--audit-seeds", type=int, default=2)
    parser.add_argument("--competitions", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = rates(args)
    if args.json:
        print(json.dumps({"settings": vars(args), "rows": rows}, indent=2))
        return
    print(
        f"alpha {args.alpha_permille / 1000:g}, tolerance {args.tolerance_permille / 1000:g}, k {args.competitions} "
        f"competitions x {args.audit_seeds} audit seeds, bundle 3 seeds, {args.trials} simulated entries per cell; "
        "share of entries flagged:"
    )
    names = [name for name in rows[0] if name not in ("agent", "sd_share")]
    width = max(len(row["agent"]) for row in rows)
    print(f"{'agent':<{width}}  " + "  ".join(f"{name:>16}" for name in names))
    for row in rows:
        print(f"{row['agent']:<{width}}  " + "  ".join(f"{row[name]:>16.3f}" for name in names))


if __name__ == "__main__":
    main()
