from pathlib import Path
from typing import Any, Literal

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competitions.demo.catalog import split_ids
from competitions.demo.packs import make_demo_pack
from competitions.demo.runs import pack_answers, write_run_group


def _size(value: str) -> Literal["small", "full"] | int:
    if value == "small":
        return "small"
    if value == "full":
        return "full"
    try:
        rows = int(value)
    except ValueError:
        raise CommandError(f"--size {value!r}: use small, full or a number of rows") from None
    if rows < 10:
        raise CommandError("--size: at least 10 rows")
    return rows


class Command(BaseCommand):
    help = (
        "Write synthetic competition packs for a split (answers in the real formats, a sample submission, a "
        "simulated leaderboard graded by the real graders) and, with --quality, a simulated agent's run group."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--split", default="low", choices=["low", "medium", "high", "split75", "dev"])
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument("--size", default="small", help="small, full (the real test-set size) or a row count")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--layout", default="portal", choices=["portal", "mlebench"])
        parser.add_argument("--teams", type=int, default=300, help="Simulated teams per leaderboard")
        parser.add_argument("--competition", action="append", dest="competitions", help="Only these (repeatable)")
        parser.add_argument(
            "--quality", type=float, help="Also write a simulated agent's run group of this quality (0-1)"
        )
        parser.add_argument("--seeds", type=int, default=3, help="Seeds of the simulated agent's run group")

    def handle(
        self,
        *args: Any,
        split: str,
        out: Path,
        size: str,
        seed: int,
        layout: Literal["portal", "mlebench"],
        teams: int,
        competitions: list[str] | None,
        quality: float | None,
        seeds: int,
        **options: Any,
    ) -> None:
        rows = _size(size)
        if quality is not None and not 0 <= quality <= 1:
            raise CommandError("--quality must be between 0 and 1")
        try:
            ids = competitions or split_ids(split)
            make_demo_pack(
                out_dir=out, split=split, size=rows, seed=seed, layout=layout, competition_ids=ids, n_teams=teams
            )
        except (KeyError, ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Wrote {len(ids)} synthetic pack(s) to {out} ({layout} layout, size {rows}).")
        if quality is not None:
            group = write_run_group(
                out_dir=out / "runs",
                competition_ids=ids,
                seeds=range(seeds),
                quality=quality,
                answers=pack_answers(out) if layout == "portal" else None,
                size=rows,
                pack_seed=seed,
            )
            self.stdout.write(f"Wrote the simulated agent's run group (quality {quality}, {seeds} seeds): {group}")
