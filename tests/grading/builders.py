"""Small builders of submissions being graded, for the scheduler's and the watchdog's tests."""

from shutil import copyfile

from competitions.models import Competition
from competitions.selectors import current_benchmark
from grading.models import Run, Submission
from grading.services.submissions import submission_folder


def grading_submission(team, *, runs: int, status: str = Submission.Status.GRADING) -> Submission:
    """A submission being graded, with `runs` pending runs (no files: they grade as invalid)."""
    benchmark = current_benchmark()
    submission = Submission.objects.create(team=team, benchmark=benchmark, status=status, progress_total=runs)
    competitions = list(Competition.objects.filter(benchmark=benchmark).order_by("slug"))
    Run.objects.bulk_create(
        Run(submission=submission, competition=competitions[i % len(competitions)], seed=i // len(competitions),
            run_group="group", run_id=f"run_{i}")
        for i in range(runs)
    )
    return submission


def lite_submission(team, run_dirs) -> Submission:
    """A submission being graded whose runs are real submission files of the Lite run group."""
    benchmark = current_benchmark()
    submission = Submission.objects.create(team=team, benchmark=benchmark, status=Submission.Status.GRADING,
                                           progress_total=len(run_dirs))
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark)}
    seeds: dict[str, int] = {}
    runs = []
    for run_dir in run_dirs:
        slug = run_dir.name.rsplit("_", 1)[0]
        member = f"runs/{run_dir.parent.name}/{run_dir.name}/submission/submission.csv"
        target = submission_folder(submission) / "bundle" / member
        target.parent.mkdir(parents=True, exist_ok=True)
        copyfile(run_dir / "submission" / "submission.csv", target)
        seeds[slug] = seeds.get(slug, -1) + 1
        runs.append(Run(submission=submission, competition=competitions[slug], seed=seeds[slug],
                        run_group=run_dir.parent.name, run_id=run_dir.name, submission_file=member))
    Run.objects.bulk_create(runs)
    return submission


TEST_SET_FEEDBACK_EVIDENCE = {
    "hits": [{"file": "runs/group/spooky_0/logs/agent.log", "line": 41,
              "excerpt": ["step 12: validating", "leaderboard says: test accuracy 0.91, silver medal", "retrying"]}],
}


def flagged_submission(team, *, status: str = Submission.Status.IN_REVIEW, flags=None, user=None) -> Submission:
    """A graded submission waiting for review, with one run and the given flags (default: one blocking
    test_set_feedback flag with a log excerpt as evidence)."""
    from grading.models import Flag

    benchmark = current_benchmark()
    submission = Submission.objects.create(team=team, created_by=user, benchmark=benchmark, status=status,
                                           progress_done=1, progress_total=1,
                                           manifest={"agent": {"name": "Agent X"}, "benchmark": {"split": "low"}})
    Run.objects.create(submission=submission, competition=Competition.objects.get(slug="spooky-author-identification"),
                       seed=0, run_group="group", run_id="spooky_0", status=Run.Status.DONE,
                       claimed={"score": 0.2, "gold_medal": True}, regraded={"score": 0.45, "gold_medal": False,
                                                                            "gold_threshold": 0.2, "reason": None})
    for spec in flags if flags is not None else [{"code": "test_set_feedback", "severity": "blocking",
                                                   "evidence": TEST_SET_FEEDBACK_EVIDENCE}]:
        Flag.objects.create(submission=submission, key=spec.get("key", "bundle"), tiers=spec.get("tiers", ["low"]),
                            message=spec.get("message", f"{spec['code']} seen in the logs."), code=spec["code"],
                            severity=spec["severity"], evidence=spec.get("evidence", {}))
    return submission
