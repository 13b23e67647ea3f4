from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competitions.demo.catalog import split_ids
from competitions.demo.runs import write_run_group
from competitions.demo.solutions import STYLES
from portal.demo_entries import LEAK_QUALITY, SPLIT, DemoEntriesUnavailable, leaky_competitions, lite_answers, qualities


class Command(BaseCommand):
    help = (
        "Write a simulated agent's Lite run group (MLE-bench's runs/<run_group>/ layout) against this portal's "
        "synthetic packs, ready for the client's make-bundle: the 'try it in two minutes' recipe of the README."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, type=Path, help="folder to write the run group into")
        parser.add_argument(
            "--quality",
            type=float,
            default=0.7,
            help="share of rows the agent gets right (0-1); above about 0.8 the checks rightly warn of implausible "
            "scores",
        )
        parser.add_argument("--seeds", type=int, default=3, help="runs per competition (default 3)")
        parser.add_argument("--first-seed", type=int, default=0, help="the agent's first seed (default 0)")
        parser.add_argument("--style", default="starter", choices=sorted(STYLES), help="the code the runs leave")

    def handle(
        self, *args: Any, out: Path, quality: float, seeds: int, first_seed: int, style: str, **options: Any
    ) -> None:
        if not 0 <= quality <= 1:
            raise CommandError(f"--quality {quality}: use a share between 0 and 1")
        if not 1 <= seeds <= 20:
            raise CommandError(f"--seeds {seeds}: use 1 to 20 runs per competition")
        if first_seed < 0:
            raise CommandError(f"--first-seed {first_seed}: use 0 or more")
        ids = split_ids(SPLIT)
        try:
            answers = lite_answers(ids)
        except DemoEntriesUnavailable as exc:
            raise CommandError(f"{exc}; start the portal once with ./scripts/run, which installs them") from None
        leaky = leaky_competitions(ids)
        group = write_run_group(
            out_dir=out,
            competition_ids=ids,
            seeds=range(first_seed, first_seed + seeds),
            quality=qualities(level=quality, key="make_demo_run", ids=ids, leaky=leaky, jitter=0, top=1.0),
            answers=answers,
            style=style,
        )
        self.stdout.write(f"Wrote {len(ids)} competitions x {seeds} seeds (quality {quality}) to {group}")
        if leaky:
            self.stdout.write(
                f"Quality {min(quality, LEAK_QUALITY)} on {', '.join(sorted(leaky))}: a known test-label leak, "
                "where an honest agent does not medal"
            )
        self.stdout.write(
            "Next: python3 client/mleportal.py make-bundle "
            f"{out} --out my-agent.tar.gz --agent-name 'My agent' --split low --seeds {seeds} "
            "--runtime-hours 24 --gpu A10:24:1 --vcpus 36 --ram-gb 440 --benchmark-commit 783b15af "
            "--benchmark-version v1 --no-internet-access --closed-source --llm none"
        )
