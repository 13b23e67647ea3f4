from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading.engine.aggregation import format_mean_sem
from grading.services.mlebench_import import ImportRefused, mlebench_import


class Command(BaseCommand):
    help = (
        "Import an MLE-bench board from a checkout of its repository (runs/ and "
        "runs/run_group_experiments.csv) as published, report-only entries, one per row of ENTRIES.csv. "
        "Running it twice changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="The MLE-bench checkout (the folder that holds runs/)")
        parser.add_argument(
            "--entries",
            type=Path,
            required=True,
            help="CSV: experiment_id,agent,llms,date,runtime_hours,source_url,notes "
            "(llms separated by ';', date YYYY-MM-DD)",
        )

    def handle(self, *args: Any, path: Path, entries: Path, **options: Any) -> None:
        try:
            results = mlebench_import(checkout=path, entries=entries)
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        for result in results:
            complete, padded = (result.aggregates["all"][kind] for kind in ("complete", "padded"))
            self.stdout.write(
                f"{result.action:9} {result.experiment_id} ({result.agent}): submission "
                f"{result.submission_id}, {result.status}, {result.runs} runs; any medal, all: "
                f"complete {_figure(complete)}, padded {_figure(padded)}"
            )
            for warning in result.warnings:
                self.stdout.write(f"          warning: {warning}")
        actions = ("created", "updated", "unchanged")
        self.stdout.write(", ".join(f"{sum(r.action == a for r in results)} {a}" for a in actions) + ".")


def _figure(agg: dict | None) -> str:
    return f"{format_mean_sem(agg)} % over {agg['seeds']} seed(s)" if agg else "none (no seed qualifies)"
