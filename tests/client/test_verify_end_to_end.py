"""mleportal verify end to end (issue 22): a Lite entry of three seeds graded by the pipeline and published, a
live portal, and from a clean folder only the one-file client run by a virtualenv that holds the engine's wheel
(pip-installed, no Django, no portal): the evidence's files, every aggregate and rank, every submission re-graded
with the reader's own MLE-bench data, and the board's history, all checked in one command.

The hostile case is the one only --data can see: an operator who changes a stored re-grade (a gold medal the
submission never earned, or, where the run earned one, a gold medal taken away), recomputes the stored aggregates
from it and lets the board follow. The evidence then agrees with itself and with the API, its hashes are right and
the history records the change, but the submission re-graded from the user's own answers does not give that
medal record.
"""

import shutil
import subprocess
from pathlib import Path

from grading.engine.aggregation import aggregate
from grading.engine.tiers import tiers_of_split
from grading.models import Run, TierAggregate
from grading.selectors import run_outcome, tier_members
from leaderboard import services
from tests.client.test_verify import CLIENT, rows


def verify(python: Path, folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "-I", "mleportal.py", "verify", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )


def clean_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "clean"
    folder.mkdir()
    shutil.copyfile(CLIENT, folder / "mleportal.py")
    return folder


def test_a_published_entry_verifies_from_a_clean_folder_with_only_the_client_and_the_wheel(
    live_server, lite_entry, engine_venv, mlebench_data, tmp_path
):
    address = f"{live_server.url}/leaderboard/entries/{lite_entry.pk}/"

    done = verify(engine_venv, clean_folder(tmp_path), address, "--data", str(mlebench_data), "--history")

    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(done.stdout)
    assert {result for result, _ in found.values()} == {"ok"}, done.stdout
    regraded = [what for what in found if what.startswith("--data: ") and "seed(s), every field" in found[what][1]]
    assert len(regraded) == 22, done.stdout  # every Lite competition re-graded here, report by report
    assert found["low, all competitions: figures"][0] == "ok"
    assert found["history head"][0] == "ok"
    assert "0 differ, 0 could not be checked" in done.stdout
    assert "history head: " in done.stdout and "keep it" in done.stdout


def test_a_medal_record_the_server_changed_is_caught_by_the_users_own_data(
    live_server, lite_entry, engine_venv, mlebench_data, tmp_path
):
    runs = Run.objects.filter(submission=lite_entry.submission, regraded__valid_submission=True)
    # The demo agent at this quality earns gold on most runs: a run without one gets a gold it never earned, else
    # a gold run loses it. Either way the stored record differs from what the submission earns.
    run = (runs.filter(regraded__gold_medal=False) or runs).select_related("competition").first()
    assert run is not None
    report = dict(run.regraded)
    if report["gold_medal"]:
        report.update(gold_medal=False, silver_medal=False, bronze_medal=False, any_medal=False)
    else:
        report.update(gold_medal=True, any_medal=True, above_median=True)
    # The tamperer's edit, made consistent: the stored aggregates recomputed from it, and the board refreshed.
    Run.objects.filter(pk=run.pk).update(regraded=report)
    submission = lite_entry.submission
    runs = Run.objects.filter(submission=submission).select_related("competition")
    outcomes = [run_outcome(each) for each in runs]
    for tier, split in tier_members(
        benchmark_id=submission.benchmark_id, tiers=tiers_of_split(submission.split)
    ).items():
        for kind in TierAggregate.Kind:
            padded = kind == TierAggregate.Kind.PADDED
            TierAggregate.objects.filter(submission=submission, tier=tier, kind=kind).update(
                data=aggregate(outcomes, split=split, padded=padded)
            )
    services.board_refresh(submission_ids=[submission.pk])
    address = f"{live_server.url}/leaderboard/entries/{lite_entry.pk}/"
    folder = clean_folder(tmp_path)

    without_data = verify(engine_venv, folder, address, "--history")
    with_data = verify(engine_venv, folder, address, "--data", str(mlebench_data))

    # The evidence, the API and the history all tell the same (tampered) story...
    assert without_data.returncode == 0, without_data.stdout + without_data.stderr
    # ...which the submission, re-graded from the user's own answers, does not.
    assert with_data.returncode == 1, with_data.stdout + with_data.stderr
    differing = {what: detail for what, (result, detail) in rows(with_data.stdout).items() if result == "differs"}
    assert any(run.competition.slug in what and "gold_medal" in detail for what, detail in differing.items()), (
        with_data.stdout
    )
