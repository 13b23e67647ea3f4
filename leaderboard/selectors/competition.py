"""A competition's page: every published entry's runs on it, best medal first."""

from django.db.models import Case, F, JSONField, When
from django.http import Http404

from competitions.models import Competition
from grading.models import Run, Submission
from grading.selectors import picked_report, report_fields
from leaderboard.models import Entry
from leaderboard.selectors.entry import MEDALS, _medal

# What a competition page reads of a run's report: its score and what _medal looks at.
_SHOWN_KEYS = (
    "score",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "valid_submission",
    "submission_exists",
)


def competition_results(*, slug: str) -> tuple[Competition, list[dict]]:
    """Every published entry's runs on one competition, best medal first, against its thresholds."""
    competition = Competition.objects.filter(slug=slug).order_by("-benchmark_id").first()
    if competition is None:
        raise Http404(f"No competition {slug!r}.")
    # Plain rows for the runs, each with what the page shows of the one report its entry shows (the claim of a
    # self-reported entry, else the re-grade), and each entry once with only what the page shows of it (not the
    # submission's manifest or the entry's figures).
    source = Case(
        When(submission__board_entry__verified=Entry.Verified.SELF_REPORTED, then=F("claimed")),
        default=F("regraded"),
        output_field=JSONField(),
    )
    runs = list(
        Run.objects.filter(
            competition=competition,
            submission__status=Submission.Status.PUBLISHED,
            submission__board_entry__isnull=False,
        )
        .order_by("submission_id", "seed")
        .values_list("submission__board_entry", "seed", *report_fields(source, _SHOWN_KEYS))
    )
    entries = Entry.objects.only("agent", "team", "board", "verified").in_bulk({run[0] for run in runs})
    by_entry: dict[int, dict] = {}
    for entry_id, seed, *shown in runs:
        entry = entries.get(entry_id)
        if entry is None:  # removed since the first query
            continue
        report = picked_report(_SHOWN_KEYS, shown)
        row = by_entry.setdefault(entry.pk, {"entry": entry, "seeds": []})
        row["seeds"].append({"seed": seed, "score": report.get("score"), "medal": _medal(report)})
    order = {"gold": 0, "silver": 1, "bronze": 2, "above_median": 3, "valid": 4, "invalid": 5, "none": 6}
    rows = []
    for row in by_entry.values():
        medals = [seed["medal"] for seed in row["seeds"]]
        row["medal_share"] = sum(m in MEDALS for m in medals) / len(medals)
        row["best"] = min(medals, key=order.__getitem__)
        rows.append(row)
    rows.sort(key=lambda r: (-r["medal_share"], order[r["best"]], r["entry"].pk))
    return competition, rows
