"""The re-grading pipeline: validating → grading → checking → in_review | published.

Every step is safe to run twice: work is claimed by conditional updates, results are keyed by unique
constraints, and the step that finishes a submission runs once because only one caller wins its claim.
"""

import logging
from collections import Counter

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from competitions.models import Competition
from competitions.selectors import NotGradable
from grading.bundles.errors import BundleError
from grading.bundles.layout import discover_layout
from grading.bundles.manifest import load_manifest
from grading.bundles.seeds import assign_seeds
from grading.engine import GRADER_VERSION
from grading.engine.report_parser import MalformedReport, parse_grading_report
from grading.models import Run, Submission
from grading.services.grade_file import grade_file
from grading.services.submissions import (
    submission_bundle_root,
    submission_files_delete,
    submission_transition,
)

logger = logging.getLogger(__name__)
S = Submission.Status


def _claimed_reports(layout) -> tuple[dict[tuple[str, str], dict], Counter]:
    """The team's own report entries by (run_group, run_id), matched by the path they name, else by order."""
    matched: dict[tuple[str, str], dict] = {}
    claimed_ids: Counter = Counter()
    for group in layout.run_groups:
        if group.grading_report is None:
            continue
        try:
            report = parse_grading_report(group.grading_report.read_bytes())
        except MalformedReport as exc:
            raise BundleError("bad_grading_report", f"runs/{group.name}/{group.grading_report.name}: {exc}") from None
        unmatched: dict[str, list[dict]] = {}
        by_id = {run.run_id: run for run in group.runs}
        for entry in report.competition_reports:
            data = entry.to_dict(with_reason=False)
            claimed_ids[data["competition_id"]] += 1
            run_id = next((rid for rid in by_id if rid in str(data.get("submission_path") or "")), None)
            if run_id is not None and (group.name, run_id) not in matched:
                matched[(group.name, run_id)] = data
            else:
                unmatched.setdefault(data["competition_id"], []).append(data)
        for run in sorted(group.runs, key=lambda r: r.run_id):
            if (group.name, run.run_id) not in matched and unmatched.get(run.competition_id):
                matched[(group.name, run.run_id)] = unmatched[run.competition_id].pop(0)
    return matched, claimed_ids


def _queue_order(runs: list[Run], root) -> list[int]:
    """Run ids in the order their grading is queued: biggest competitions first, each one's seeds together.

    With several workers the submission is done when the last run is: a big file queued last keeps one worker
    busy while the others wait, so the largest submissions go first and the small ones fill in at the end.
    The seeds of a competition stay next to each other, so a worker often finds its answers still loaded.
    """
    sizes: dict[int, int] = {}
    for run in runs:
        try:
            size = (root / run.submission_file).stat().st_size if run.submission_file else 0
        except OSError:  # its grading will say what is wrong with the file; the order only needs a number
            size = 0
        sizes[run.competition_id] = max(sizes.get(run.competition_id, 0), size)
    ordered = sorted(runs, key=lambda run: (-sizes[run.competition_id], run.competition_id, run.seed, run.pk))
    return [run.pk for run in ordered]


def submission_validate(*, submission_id: int) -> None:
    """Turn the extracted bundle into runs with seeds and the team's claims, then queue their grading."""
    if not submission_transition(submission_id=submission_id, to=S.VALIDATING, expected=(S.RECEIVED,)):
        return
    submission = Submission.objects.select_related("benchmark").get(pk=submission_id)
    root = submission_bundle_root(submission)
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=submission.benchmark)}
    try:
        layout = discover_layout(root=root, known_competition_ids=competitions.keys())
        manifest = load_manifest(path=layout.manifest)
        seeds = {(s.run_group, s.run_id): s.seed for s in assign_seeds(runs=layout.runs, manifest_seeds=manifest.run_seeds)}
        claimed, _ = _claimed_reports(layout)
    except BundleError as exc:
        submission_reject(submission_id=submission_id, reason=exc.message)
        return
    runs = [
        Run(
            submission=submission,
            competition=competitions[run.competition_id],
            seed=seeds[(run.run_group, run.run_id)],
            run_group=run.run_group,
            run_id=run.run_id,
            submission_file=str(run.submission.relative_to(layout.root)) if run.submission else "",
            claimed=claimed.get((run.run_group, run.run_id)),
        )
        for run in layout.runs
    ]
    from grading.tasks import finish_submission, grade_run

    with transaction.atomic():
        Run.objects.filter(submission=submission).delete()  # a repeated validation starts over
        created = Run.objects.bulk_create(runs)
        Submission.objects.filter(pk=submission_id).update(progress_total=len(created), progress_done=0)
        if created:
            submission_transition(submission_id=submission_id, to=S.GRADING, expected=(S.VALIDATING,))
            ids = _queue_order(list(Run.objects.filter(submission=submission)), root)
            transaction.on_commit(lambda: [grade_run.delay(pk) for pk in ids])
        else:
            submission_transition(submission_id=submission_id, to=S.CHECKING, expected=(S.VALIDATING,))
            transaction.on_commit(lambda: finish_submission.delay(submission_id))


def submission_reject(*, submission_id: int, reason: str) -> None:
    """Refuse a bundle after intake: no runs, no files beyond the row that says why."""
    with transaction.atomic():
        Run.objects.filter(submission_id=submission_id).delete()
        if submission_transition(submission_id=submission_id, to=S.REJECTED, reason=reason):
            submission = Submission.objects.get(pk=submission_id)
            transaction.on_commit(lambda: submission_files_delete(submission))


def invalid_run_report(run: Run, reason: str) -> dict:
    return {
        "competition_id": run.competition.slug, "score": None,
        "gold_threshold": run.competition.gold_threshold, "silver_threshold": run.competition.silver_threshold,
        "bronze_threshold": run.competition.bronze_threshold, "median_threshold": run.competition.median_threshold,
        "any_medal": False, "gold_medal": False, "silver_medal": False, "bronze_medal": False, "above_median": False,
        "submission_exists": bool(run.submission_file), "valid_submission": False,
        "is_lower_better": run.competition.is_lower_better, "created_at": timezone.now().isoformat(),
        "submission_path": run.submission_file or "None", "reason": reason,
    }


def run_grade(*, run_id: int) -> None:
    """Grade one run. Twice is harmless: the first result to land is kept, the second changes nothing."""
    run = Run.objects.select_related("submission", "competition__pack").filter(pk=run_id).first()
    if run is None:
        return
    if run.status != Run.Status.DONE:
        Run.objects.filter(pk=run_id).exclude(status=Run.Status.DONE).update(
            status=Run.Status.GRADING, attempts=F("attempts") + 1, claimed_at=timezone.now()
        )
        path = submission_bundle_root(run.submission) / run.submission_file if run.submission_file else None
        try:
            report = grade_file(competition=run.competition, submission_path=path,
                                display_path=run.submission_file or None).to_dict(with_reason=True)
        except NotGradable as exc:
            report = invalid_run_report(run, str(exc))
        _run_record(run, report)
    submission_maybe_finish(submission_id=run.submission_id)


def _run_record(run: Run, report: dict) -> None:
    """Store a run's result unless one already landed, and count it once."""
    with transaction.atomic():
        landed = Run.objects.filter(pk=run.pk).exclude(status=Run.Status.DONE).update(
            status=Run.Status.DONE, regraded=report, score=report["score"],
            valid_submission=report["valid_submission"], any_medal=report["any_medal"],
            graded_at=timezone.now(), grader_version=GRADER_VERSION,
        )
        if landed:
            Submission.objects.filter(pk=run.submission_id).update(progress_done=F("progress_done") + 1)


def run_give_up(*, run_id: int, reason: str) -> None:
    """Record a run that cannot be graded (too slow, its worker lost too often) as invalid, with the reason."""
    run = Run.objects.select_related("competition").filter(pk=run_id).exclude(status=Run.Status.DONE).first()
    if run is None:
        return
    _run_record(run, invalid_run_report(run, reason))
    submission_maybe_finish(submission_id=run.submission_id)


def submission_maybe_finish(*, submission_id: int) -> None:
    if Run.objects.filter(submission_id=submission_id).exclude(status=Run.Status.DONE).exists():
        return
    if submission_transition(submission_id=submission_id, to=S.CHECKING, expected=(S.GRADING,)):
        from grading.tasks import finish_submission

        transaction.on_commit(lambda: finish_submission.delay(submission_id))


def submission_fail(*, submission_id: int, reason: str) -> None:
    submission_transition(submission_id=submission_id, to=S.FAILED, reason=reason,
                          expected=(S.RECEIVED, S.VALIDATING, S.GRADING, S.CHECKING))
