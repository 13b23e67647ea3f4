"""What the answer-copy measure adds to grading one run, on the biggest shapes.

    python benchmarks/answer_copy_speed.py [--rows 5851440] [--repeats 3]

Writes an ``id,value`` answers file and a submission of the same shape under benchmarks/out/ (git-ignored;
reused on later runs), the shape of denoising-dirty-documents, the largest number-per-row answers, once with
the answers' row order and once shuffled (ids matched by hashing), and grades the submission with the RMSE
grader with and without the measure (grading.engine.agreement). Prints the best time of each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out" / "answer_copy"
sys.path.insert(0, str(ROOT))


def files(rows: int) -> tuple[Path, Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    answers, same, shuffled = (OUT / f"{name}-{rows}.csv" for name in ("answers", "same-order", "shuffled"))
    if not answers.exists():
        rng = np.random.default_rng(0)
        frame = pd.DataFrame(
            {"id": [f"{i // 540 + 1}_{i % 540 + 1}_1" for i in range(rows)], "value": rng.random(rows)}
        )
        frame.to_csv(answers, index=False)
        honest = frame.assign(value=np.clip(frame.value + rng.normal(0, 0.1, rows), 0, 1))
        honest.to_csv(same, index=False)
        honest.sample(frac=1.0, random_state=1).to_csv(shuffled, index=False)
    return answers, same, shuffled


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_851_440)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from grading.engine import csvio
    from grading.engine.agreement import measure
    from grading.engine.registry import GraderRef
    from grading.engine.report import grade_submission

    def measured_too(submission: pd.DataFrame, answers: object) -> None:
        measure(submission, answers, id_column="id")

    answers_path, same, shuffled = files(args.rows)
    answers = csvio.load_answers(answers_path)
    grader = GraderRef("rmse", {"id_column": "id", "target_column": "value"})
    print(f"{args.rows:,} rows, best of {args.repeats}:")
    for label, path in (("same order", same), ("shuffled", shuffled)):
        for measured in (False, True):
            best = float("inf")
            for _ in range(args.repeats):
                started = time.perf_counter()
                grade_submission(
                    competition_id="denoising-dirty-documents",
                    submission_path=path,
                    answers_path=answers_path,
                    grader=grader,
                    leaderboard_scores=[0.1, 0.2, 0.3],
                    answers=answers,
                    inspect=measured_too if measured else None,
                )
                best = min(best, time.perf_counter() - started)
            print(f"  {label:10} {'grade + measure' if measured else 'grade':16} {best:6.2f} s")


if __name__ == "__main__":
    main()
