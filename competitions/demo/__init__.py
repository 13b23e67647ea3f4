"""Synthetic MLE-bench competition packs, a simulated agent, simulated leaderboards and run groups.

Real answers are Kaggle data that cannot be shipped, so demos, tests and benchmarks use packs whose files
have the real formats (names, columns, dtypes, id formats) and whose values are generated from a seed.
Framework-free: nothing here imports Django. Layouts are described in ``README.md`` beside this file.

    from competitions.demo import make_demo_pack, write_run_group
    make_demo_pack(out_dir=Path("packs"), split="low", size="small", seed=0)
    write_run_group(out_dir=Path("runs"), seeds=(0, 1, 2), quality=0.9)
"""

from competitions.demo.agent import Defect, answers_submission, simulate_submission, write_submission
from competitions.demo.answers import DemoAnswers, expected_rows, generate_answers
from competitions.demo.catalog import split_ids
from competitions.demo.leaderboard import grade, simulate_leaderboard, team_qualities
from competitions.demo.packs import make_demo_pack, pack_files, write_pack
from competitions.demo.reports import write_grading_report
from competitions.demo.runs import (
    default_manifest,
    pack_answers,
    run_group_name,
    run_id_for,
    write_run_bundle,
    write_run_group,
)
from competitions.demo.specs import SPECS

__all__ = [
    "SPECS",
    "Defect",
    "answers_submission",
    "DemoAnswers",
    "default_manifest",
    "expected_rows",
    "generate_answers",
    "grade",
    "make_demo_pack",
    "pack_answers",
    "pack_files",
    "run_group_name",
    "run_id_for",
    "simulate_leaderboard",
    "simulate_submission",
    "split_ids",
    "team_qualities",
    "write_grading_report",
    "write_pack",
    "write_run_bundle",
    "write_run_group",
    "write_submission",
]
