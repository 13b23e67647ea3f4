"""Small builders of submissions being graded, for the scheduler's and the watchdog's tests."""

from shutil import copyfile
from typing import Any

from competitions.models import Benchmark, Competition
from competitions.selectors import current_benchmark
from grading.models import Run, Submission
from grading.services.submissions import submission_folder


def loaded_benchmark() -> Benchmark:
    """The current benchmark, which the tests using these builders have loaded."""
    benchmark = current_benchmark()
    assert benchmark is not None, "no benchmark is loaded: use the registry fixture"
    return benchmark


def grading_submission(team, *, runs: int, status: str = Submission.Status.GRADING) -> Submission:
    """A submission being graded, with `runs` pending runs (no files: they grade as invalid)."""
    benchmark = loaded_benchmark()
    submission = Submission.objects.create(team=team, benchmark=benchmark, status=status, progress_total=runs)
    competitions = list(Competition.objects.filter(benchmark=benchmark).order_by("slug"))
    Run.objects.bulk_create(
        Run(
            submission=submission,
            competition=competitions[i % len(competitions)],
            seed=i // len(competitions),
            run_group="group",
            run_id=f"run_{i}",
        )
        for i in range(runs)
    )
    return submission


def lite_submission(team, run_dirs) -> Submission:
    """A submission being graded whose runs are real submission files of the Lite run group."""
    benchmark = loaded_benchmark()
    submission = Submission.objects.create(
        team=team, benchmark=benchmark, status=Submission.Status.GRADING, progress_total=len(run_dirs)
    )
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
        runs.append(
            Run(
                submission=submission,
                competition=competitions[slug],
                seed=seeds[slug],
                run_group=run_dir.parent.name,
                run_id=run_dir.name,
                submission_file=member,
            )
        )
    Run.objects.bulk_create(runs)
    return submission


TEST_SET_FEEDBACK_EVIDENCE = {
    "hits": [
        {
            "file": "runs/group/spooky_0/logs/agent.log",
            "line": 41,
            # The scanner's shape (grading/checks/scan/): numbered lines, the match's place in the hit line.
            "excerpt": [
                "40: step 12: validating",
                "41: leaderboard says: test accuracy 0.91, silver medal",
                "42: retrying",
            ],
            "match": [38, 50],
        }
    ],
}


def flagged_submission(
    team, *, status: str = Submission.Status.IN_REVIEW, flags: list[dict[str, Any]] | None = None, user=None
) -> Submission:
    """A graded submission waiting for review, with one run and the given flags (default: one blocking
    test_set_feedback flag with a log excerpt as evidence)."""
    from grading.models import Flag

    benchmark = loaded_benchmark()
    submission = Submission.objects.create(
        team=team,
        created_by=user,
        benchmark=benchmark,
        status=status,
        progress_done=1,
        progress_total=1,
        manifest={"agent": {"name": "Agent X"}, "benchmark": {"split": "low"}},
    )
    Run.objects.create(
        submission=submission,
        competition=Competition.objects.get(slug="spooky-author-identification"),
        seed=0,
        run_group="group",
        run_id="spooky_0",
        status=Run.Status.DONE,
        claimed={"score": 0.2, "gold_medal": True},
        regraded={"score": 0.45, "gold_medal": False, "gold_threshold": 0.2, "reason": None},
    )
    default: list[dict[str, Any]] = [
        {"code": "test_set_feedback", "severity": "blocking", "evidence": TEST_SET_FEEDBACK_EVIDENCE}
    ]
    for spec in flags if flags is not None else default:
        Flag.objects.create(
            submission=submission,
            key=spec.get("key", "bundle"),
            tiers=spec.get("tiers", ["low"]),
            message=spec.get("message", f"{spec['code']} seen in the logs."),
            code=spec["code"],
            severity=spec["severity"],
            evidence=spec.get("evidence", {}),
        )
    return submission


def reported_submission(team, *, status: str = Submission.Status.IN_REVIEW) -> Submission:
    """A graded submission whose two runs hold complete reports: a silver medal, and an invalid file with
    its reason."""
    from grading.engine.report import CompetitionReport

    benchmark = loaded_benchmark()
    submission = Submission.objects.create(
        team=team, benchmark=benchmark, status=status, progress_done=2, progress_total=2
    )
    spooky = Competition.objects.get(slug="spooky-author-identification")
    common: dict[str, Any] = {
        "competition_id": spooky.slug,
        "gold_threshold": 0.16506,
        "silver_threshold": 0.26996,
        "bronze_threshold": 0.29381,
        "median_threshold": 0.418785,
        "is_lower_better": True,
        "created_at": "2024-08-01T10:00:00",
        "gold_medal": False,
        "bronze_medal": False,
    }
    reports = [
        CompetitionReport(
            **common,
            score=0.2512,
            any_medal=True,
            silver_medal=True,
            above_median=True,
            submission_exists=True,
            valid_submission=True,
            submission_path="runs/g/spooky_0/submission.csv",
        ),
        CompetitionReport(
            **common,
            score=None,
            any_medal=False,
            silver_medal=False,
            above_median=False,
            submission_exists=True,
            valid_submission=False,
            submission_path="runs/g/spooky_1/submission.csv",
            reason="column 'EAP' has 1 value that is not a number, e.g. 'x' in row 2 (id 'id1')",
        ),
    ]
    for seed, report in enumerate(reports):
        Run.objects.create(
            submission=submission,
            competition=spooky,
            seed=seed,
            run_group="g",
            run_id=f"spooky_{seed}",
            status=Run.Status.DONE,
            regraded=report.to_dict(with_reason=True),
        )
    return submission
