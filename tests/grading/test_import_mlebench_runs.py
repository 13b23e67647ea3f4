"""manage.py import_mlebench_runs: an MLE-bench checkout's experiments become published, report-only entries
whose figures are MLE-bench's own aggregation (its seed order, its --pad-missing), imported once."""

import json
import math
import statistics
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from competitions.services import competitions_load
from competitions.shipped import read_benchmark
from grading.engine.aggregation import AGGREGATION_VERSION
from grading.models import ReviewEvent, Run, Submission, TierAggregate
from grading.services.mlebench_import import IMPORT_TEAM_NAME
from portal.accounts.models import Membership, Team
from tests.conftest import persona
from tests.grading.mlebench_checkout import (
    REPORT_NAME,
    no_submission_entry,
    report_entry,
    split,
    write_entries,
    write_report,
    write_run_groups,
)

ALL, LOW, MEDIUM, HIGH = split("split75"), split("low"), split("medium"), split("high")
X = "spooky-author-identification"  # low: four reports, two of them in one file
Y = HIGH[0]  # high: two reports
OTHERS = [c for c in ALL if c not in (X, Y)]
AIDE_A, AIDE_B, AIDE_C = "2024-09-01_run-group_aide", "2024-09-02_run-group_aide", "2024-09-03_run-group_aide"
MLAB, MLAB_MISSING, MLAB_EMPTY = (f"2024-10-0{day}_run-group_mlab" for day in (1, 2, 3))
AIDE_URL = "https://github.com/WecoAI/aideml"
X_FIRST, X_SECOND = f"{X}_ffffffff", f"{X}_00000000"  # in that order in AIDE_B's report


def percent(count: int, tier_size: int = 75) -> float:
    return count / tier_size * 100


def sem(values: list[float]) -> float:
    return statistics.stdev(values) / len(values) ** 0.5


@pytest.fixture(scope="session")
def shipped():
    return read_benchmark()


@pytest.fixture
def registry(db, shipped):
    competitions_load(shipped=shipped)


def aide_b_entries() -> list[dict]:
    """Every competition, 9 golds, and X twice (gold first, then nothing), in no particular order: the stable
    sort by competition keeps X's two entries in file order, though the first one's run id sorts last."""
    entries = [
        report_entry(c, run_group=AIDE_B, medal="gold" if c in OTHERS[10:19] else None) for c in reversed(OTHERS)
    ]
    entries.insert(5, report_entry(X, run_group=AIDE_B, run_id=X_FIRST, medal="gold", score=0.1))
    entries.insert(40, report_entry(Y, run_group=AIDE_B))
    entries.insert(60, report_entry(X, run_group=AIDE_B, run_id=X_SECOND, score=0.9))
    return entries


def mlab_entries(*, bronze_on_aerial: bool = False) -> list[dict]:
    return [
        report_entry(X, run_group=MLAB, medal="gold"),
        report_entry(LOW[0], run_group=MLAB, medal="bronze" if bronze_on_aerial else None),
        no_submission_entry(LOW[1]),
        report_entry(LOW[2], run_group=MLAB, score=math.nan),
    ]  # MLE-bench writes NaN


@pytest.fixture
def checkout(tmp_path) -> Path:
    """Two experiments. aide-o1, three run groups (listed out of order):
      A: all 75 once (6 medals, 3 invalid) and an unknown competition;
      B: all 75 once (10 medals with X's first entry) and X's second entry (no medal);
      C: all but Y (3 bronzes, X silver).
    So X has 4 reports, Y 2, the others 3; any-medal counts per seed are 6, 10, 3 (C and X's second) and 1
    (X). mlab-gpt4o: one report of 4 low competitions (one gold, one NaN score), a run group folder missing
    and one without a report.
    """
    root = tmp_path / "mle-bench"
    write_report(
        root,
        AIDE_A,
        [
            report_entry(
                c,
                run_group=AIDE_A,
                medal=("gold", "gold", "silver", "silver", "bronze", "bronze")[i] if i < 6 else None,
                valid=i < 70,
            )
            for i, c in enumerate(OTHERS)
        ]
        + [
            report_entry(X, run_group=AIDE_A),
            report_entry(Y, run_group=AIDE_A),
            report_entry("not-a-competition", run_group=AIDE_A, medal="gold"),
        ],
    )
    write_report(root, AIDE_B, aide_b_entries())
    write_report(
        root,
        AIDE_C,
        [report_entry(c, run_group=AIDE_C, medal="bronze" if c in OTHERS[20:23] else None) for c in OTHERS]
        + [report_entry(X, run_group=AIDE_C, medal="silver")],
    )
    write_report(root, MLAB, mlab_entries())
    write_report(
        root,
        f"{MLAB_EMPTY}/hourly",
        [report_entry(X, run_group=MLAB_EMPTY, medal="gold")],
        name="grading_report_0.json",
    )  # below the run group folder: MLE-bench does not read it
    write_run_groups(
        root,
        [
            ("aide-o1", AIDE_C),
            ("aide-o1", AIDE_A),
            ("aide-o1", AIDE_B),
            ("mlab-gpt4o", MLAB),
            ("mlab-gpt4o", MLAB_MISSING),
            ("mlab-gpt4o", MLAB_EMPTY),
            ("other", "2024-11-01_x"),
        ],
    )
    write_entries(
        tmp_path / "entries.csv",
        [
            [
                "aide-o1",
                "AIDE",
                "o1-preview; gpt-4o",
                "2024-10-09",
                "24",
                AIDE_URL,
                "From the MLE-bench paper, with pass@1",
            ],
            ["mlab-gpt4o", "MLAB", "gpt-4o", "2024-10-09", "", "", ""],
        ],
    )
    return root


def run_import(checkout: Path, entries: Path | None = None) -> str:
    out = StringIO()
    entries = entries or checkout.parent / "entries.csv"
    call_command("import_mlebench_runs", str(checkout), "--entries", str(entries), stdout=out)
    return out.getvalue()


def entry(experiment_id: str) -> Submission:
    return Submission.objects.get(origin=Submission.Origin.IMPORT, external_id=experiment_id)


def agg(submission: Submission, tier: str, kind: str) -> dict | None:
    return TierAggregate.objects.get(submission=submission, tier=tier, kind=kind).data


def test_each_experiment_becomes_a_published_non_comparable_report_only_entry(registry, checkout):
    out = run_import(checkout)

    aide, mlab = entry("aide-o1"), entry("mlab-gpt4o")
    for submission in (aide, mlab):
        assert submission.status == Submission.Status.PUBLISHED
        assert submission.comparable is False
        assert submission.report_only is True
        assert submission.team.name == IMPORT_TEAM_NAME
        assert submission.aggregation_version == AGGREGATION_VERSION
        assert any("not re-graded" in reason for reason in submission.comparability["reasons"])
        assert list(submission.review_events.values_list("kind", flat=True)) == [ReviewEvent.Kind.PUBLISHED]
        assert not submission.flags.exists()
    assert Team.objects.filter(name=IMPORT_TEAM_NAME).count() == 1
    assert aide.runs.count() == 75 + 76 + 74 and mlab.runs.count() == 4
    assert set(aide.runs.values_list("status", "submission_file", "regraded")) == {("done", "", None)}
    assert TierAggregate.objects.filter(submission=aide).count() == 8
    assert set(TierAggregate.objects.values_list("version", flat=True)) == {AGGREGATION_VERSION}
    assert "created   aide-o1 (AIDE)" in out and "created   mlab-gpt4o (MLAB)" in out
    assert "2 created, 0 updated, 0 unchanged." in out


def test_the_manifest_is_what_the_board_reads(registry, checkout):
    run_import(checkout)

    aide = entry("aide-o1").manifest
    assert aide["schema"] == "bundle-v1"
    assert aide["agent"] == {"name": "AIDE", "source_url": AIDE_URL, "open_source": True}
    assert aide["llms"] == ["o1-preview", "gpt-4o"]
    assert aide["benchmark"]["split"] == "split75" and aide["benchmark"]["name"]
    assert aide["runtime_hours"] == 24.0 and aide["date"] == "2024-10-09"
    assert aide["notes"] == "From the MLE-bench paper, with pass@1"
    imported = aide["imported"]
    assert imported["from"] == "mle-bench runs" and imported["experiment_id"] == "aide-o1"
    assert imported["run_groups"] == [AIDE_A, AIDE_B, AIDE_C]
    assert imported["reports"] == [f"runs/{group}/{REPORT_NAME}" for group in (AIDE_A, AIDE_B, AIDE_C)]
    assert len(imported["content_sha256"]) == 64
    mlab = entry("mlab-gpt4o").manifest
    assert mlab["agent"] == {"name": "MLAB", "open_source": False}
    assert "runtime_hours" not in mlab and mlab["notes"] == ""
    assert mlab["imported"]["run_groups"] == [MLAB, MLAB_MISSING, MLAB_EMPTY]
    assert mlab["imported"]["reports"] == [f"runs/{MLAB}/{REPORT_NAME}"]


def test_seeds_follow_the_sorted_report_paths_and_a_stable_sort_by_competition(registry, checkout):
    run_import(checkout)

    x_runs = list(entry("aide-o1").runs.filter(competition__slug=X).order_by("seed"))
    assert [(r.seed, r.run_group) for r in x_runs] == [(0, AIDE_A), (1, AIDE_B), (2, AIDE_B), (3, AIDE_C)]
    assert [r.run_id for r in x_runs[1:3]] == [X_FIRST, X_SECOND]
    assert [r.claimed["gold_medal"] for r in x_runs] == [False, True, False, False]
    assert x_runs[3].claimed["silver_medal"] is True
    assert x_runs[1].claimed["score"] == 0.1
    assert list(entry("aide-o1").runs.filter(competition__slug=Y).values_list("seed", "run_group")) == [
        (0, AIDE_A),
        (1, AIDE_B),
    ]
    # A run without a submission path in MLE-bench's layout gets an id from its place in the report.
    mlab = {run.competition.slug: run for run in entry("mlab-gpt4o").runs.select_related("competition")}
    assert mlab[LOW[1]].run_id == f"{LOW[1]}_report2" and mlab[LOW[1]].claimed["submission_exists"] is False
    assert mlab[LOW[0]].run_id.startswith(f"{LOW[0]}_") and mlab[LOW[0]].run_group == MLAB
    # A NaN score is stored as PostgreSQL can hold it, and still counts as a valid submission.
    assert mlab[LOW[2]].claimed["score"] is None and mlab[LOW[2]].claimed["score_is_nan"] is True


def test_the_figures_are_mle_benchs_complete_and_padded_aggregates(registry, checkout):
    run_import(checkout)
    aide = entry("aide-o1")

    # Complete: the first min-count seeds (Y has 2): 6 and 10 medals of 75.
    complete = agg(aide, "all", "complete")
    assert complete["seeds"] == 2
    assert complete["any_medal"]["mean"] == pytest.approx((percent(6) + percent(10)) / 2)  # 10.667
    assert complete["any_medal"]["sem"] == pytest.approx(sem([percent(6), percent(10)]))  # 2.667
    assert complete["any_medal"]["sem"] == pytest.approx(2.6666667)
    assert complete["gold"]["mean"] == pytest.approx((percent(2) + percent(10)) / 2)
    assert complete["valid_submission"]["mean"] == pytest.approx((percent(72) + percent(75)) / 2)  # 98
    assert complete["valid_submission"]["sem"] == pytest.approx(2.0)

    # Padded: max-count seeds (X has 4); seed 2 lacks Y and seed 3 has only X, the missing slots failing.
    padded = agg(aide, "all", "padded")
    per_seed = [percent(6), percent(10), percent(3), percent(1)]
    assert padded["seeds"] == 4
    assert padded["any_medal"]["mean"] == pytest.approx(statistics.mean(per_seed))  # 6.667
    assert padded["any_medal"]["sem"] == pytest.approx(sem(per_seed))  # 2.611
    assert padded["any_medal"]["sem"] == pytest.approx(2.6105200)  # sqrt(46 / 3) * 4 / 3 / 2
    assert padded["submission_exists"]["mean"] == pytest.approx(
        statistics.mean([percent(75), percent(75), percent(74), percent(1)])
    )

    # Per tier, seeds count over the tier's own competitions: X (low) has 4, Y (high) 2, the others 3.
    seeds = {
        (tier, kind): (agg(aide, tier, kind) or {}).get("seeds")
        for tier in ("low", "medium", "high")
        for kind in ("complete", "padded")
    }
    assert seeds == {
        ("low", "complete"): 3,
        ("low", "padded"): 4,
        ("medium", "complete"): 3,
        ("medium", "padded"): 3,
        ("high", "complete"): 2,
        ("high", "padded"): 3,
    }
    low_padded = agg(aide, "low", "padded")
    assert low_padded["any_medal"]["mean"] == pytest.approx(
        statistics.mean(
            [
                percent(sum(c in LOW for c in OTHERS[:6]), 22),
                percent(sum(c in LOW for c in OTHERS[10:19]) + 1, 22),
                percent(sum(c in LOW for c in OTHERS[20:23]), 22),
                percent(1, 22),
            ]
        )
    )

    # mlab-gpt4o ran 4 competitions once: no complete seed anywhere; padded, one seed of one gold.
    mlab = entry("mlab-gpt4o")
    assert agg(mlab, "all", "complete") is None and agg(mlab, "low", "complete") is None
    assert agg(mlab, "all", "padded")["any_medal"] == pytest.approx(
        {"mean": percent(1), "sem": 0.0, "ci_low": percent(1), "ci_high": percent(1)}
    )
    assert agg(mlab, "low", "padded")["any_medal"]["mean"] == pytest.approx(percent(1, 22))
    assert agg(mlab, "low", "padded")["valid_submission"]["mean"] == pytest.approx(percent(3, 22))
    assert agg(mlab, "high", "padded") is None


def test_the_summary_prints_figures_and_warnings(registry, checkout):
    out = run_import(checkout)

    assert "aide-o1 (AIDE): submission" in out and "225 runs" in out
    assert "complete 10.7 ± 2.7 % over 2 seed(s), padded 6.7 ± 2.6 % over 4 seed(s)" in out
    assert "complete none (no seed qualifies), padded 1.3 ± 0.0 % over 1 seed(s)" in out
    assert "1 competition(s) not in the registry were skipped: not-a-competition" in out
    assert f"run group folder runs/{MLAB_MISSING} is missing; skipped" in out
    assert f"runs/{MLAB_EMPTY} has no *grading_report*.json; skipped" in out


def _snapshot() -> dict:
    return {
        "submissions": list(
            Submission.objects.order_by("pk").values_list(
                "pk", "status", "status_changed_at", "manifest", "comparability"
            )
        ),
        "runs": list(Run.objects.order_by("pk").values_list("pk", "seed", "claimed")),
        "aggregates": list(TierAggregate.objects.order_by("pk").values_list("pk", "data")),
        "events": list(ReviewEvent.objects.order_by("pk").values_list("pk", "created_at")),
        "teams": list(Team.objects.order_by("pk").values_list("pk", "created_at")),
    }


def test_running_it_twice_changes_nothing(registry, checkout):
    run_import(checkout)
    before = _snapshot()

    out = run_import(checkout)

    assert _snapshot() == before
    assert "unchanged aide-o1" in out and "unchanged mlab-gpt4o" in out
    assert "0 created, 0 updated, 2 unchanged." in out
    assert "complete 10.7 ± 2.7 %" in out  # the figures are still shown


def test_a_changed_report_updates_its_entry_in_place(registry, checkout):
    run_import(checkout)
    mlab, aide_runs = entry("mlab-gpt4o"), list(entry("aide-o1").runs.values_list("pk", flat=True))
    old_runs = set(mlab.runs.values_list("pk", flat=True))
    write_report(checkout, MLAB, mlab_entries(bronze_on_aerial=True))

    out = run_import(checkout)

    updated = entry("mlab-gpt4o")
    assert updated.pk == mlab.pk and Submission.objects.count() == 2
    assert updated.status == Submission.Status.PUBLISHED and updated.comparable is False
    assert updated.manifest["imported"]["content_sha256"] != mlab.manifest["imported"]["content_sha256"]
    assert updated.runs.count() == 4 and not old_runs & set(updated.runs.values_list("pk", flat=True))
    assert updated.runs.get(competition__slug=LOW[0]).claimed["bronze_medal"] is True
    assert agg(updated, "all", "padded")["any_medal"]["mean"] == pytest.approx(percent(2))
    assert TierAggregate.objects.filter(submission=updated).count() == 8
    assert updated.review_events.count() == 1  # still published, once
    assert list(entry("aide-o1").runs.values_list("pk", flat=True)) == aide_runs
    assert "updated   mlab-gpt4o" in out and "unchanged aide-o1" in out


def test_a_changed_entry_row_updates_its_manifest(registry, checkout):
    run_import(checkout)
    entries = checkout.parent / "entries.csv"
    entries.write_text(entries.read_text().replace("2024-10-09,,,", "2024-10-09,12.5,,"))

    out = run_import(checkout)

    assert entry("mlab-gpt4o").manifest["runtime_hours"] == 12.5
    assert "updated   mlab-gpt4o" in out and "unchanged aide-o1" in out


def _break_date(root: Path) -> str:
    entries = root.parent / "entries.csv"
    entries.write_text(entries.read_text().replace("MLAB,gpt-4o,2024-10-09", "MLAB,gpt-4o,09/10/2024"))
    return "entries.csv line 3, column date: '09/10/2024' is not a date; write it as YYYY-MM-DD"


def _negative_runtime(root: Path) -> str:
    entries = root.parent / "entries.csv"
    entries.write_text(entries.read_text().replace(",24,", ",-3,"))
    return "entries.csv line 2, column runtime_hours: '-3' is not a number of hours"


def _bad_header(root: Path) -> str:
    entries = root.parent / "entries.csv"
    entries.write_text(entries.read_text().replace("runtime_hours", "hours", 1))
    return "entries.csv line 1: the header must be exactly experiment_id,agent,llms,date,runtime_hours"


def _unknown_experiment(root: Path) -> str:
    entries = root.parent / "entries.csv"
    entries.write_text(entries.read_text() + "aide-o3,AIDE,o3,2025-01-01,,,\n")
    return "entries.csv line 4, column experiment_id: 'aide-o3' is not in runs/run_group_experiments.csv"


def _two_reports(root: Path) -> str:
    write_report(root, AIDE_B, aide_b_entries(), name="grading_report_2.json")
    return f"runs/{AIDE_B} holds 2 grading reports"


def _malformed_json(root: Path) -> str:
    (root / "runs" / AIDE_C / REPORT_NAME).write_text('{"competition_reports": [')
    return f"runs/{AIDE_C}/{REPORT_NAME}: the report is not valid JSON"


def _malformed_entry(root: Path) -> str:
    path = root / "runs" / MLAB / REPORT_NAME
    report = json.loads(path.read_text())
    report["competition_reports"][0]["gold_medal"] = "yes"
    path.write_text(json.dumps(report))
    return f"runs/{MLAB}/{REPORT_NAME}: competition_reports[0].gold_medal: expected true or false"


def _lfs_pointer(root: Path) -> str:
    (root / "runs" / "run_group_experiments.csv").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:7dbb44ef\nsize 5011\n"
    )
    return "runs/run_group_experiments.csv is a Git LFS pointer, not the file: run 'git lfs pull'"


@pytest.mark.parametrize(
    "spoil",
    [
        _break_date,
        _negative_runtime,
        _bad_header,
        _unknown_experiment,
        _two_reports,
        _malformed_json,
        _malformed_entry,
        _lfs_pointer,
    ],
)
def test_a_problem_refuses_the_import_and_writes_nothing(registry, checkout, spoil):
    expected = spoil(checkout)

    with pytest.raises(CommandError) as error:
        run_import(checkout)

    assert expected in str(error.value)
    assert not Submission.objects.exists() and not Run.objects.exists() and not TierAggregate.objects.exists()
    assert not ReviewEvent.objects.exists() and not Team.objects.filter(name=IMPORT_TEAM_NAME).exists()


def test_every_problem_is_listed_at_once(registry, checkout):
    _break_date(checkout)
    _two_reports(checkout)

    with pytest.raises(CommandError) as error:
        run_import(checkout)

    assert "line 3, column date" in str(error.value) and f"runs/{AIDE_B} holds 2" in str(error.value)


def test_a_refused_reimport_leaves_the_first_import_as_it_was(registry, checkout):
    run_import(checkout)
    before = _snapshot()
    write_report(checkout, MLAB, mlab_entries(bronze_on_aerial=True))
    _malformed_json(checkout)

    with pytest.raises(CommandError):
        run_import(checkout)

    assert _snapshot() == before


def test_it_refuses_a_team_of_that_name_with_members(registry, checkout):
    # Teams cannot choose the name (parentheses), but an administrator could give the team members.
    team = Team.objects.create(name=IMPORT_TEAM_NAME)
    Membership.objects.create(team=team, user=persona("alice"))

    with pytest.raises(CommandError, match="has members"):
        run_import(checkout)

    assert not Submission.objects.exists()


def test_an_imported_experiment_is_listed_on_the_non_comparable_board_as_self_reported(registry, checkout, client):
    from leaderboard.models import Entry
    from leaderboard.services import IMPORTED_NOTE, board_refresh

    run_import(checkout)
    aide = entry("aide-o1")
    board_refresh(submission_ids=[aide.pk])  # what the worker does after the import commits
    board_entry = Entry.objects.get(submission=aide)
    assert board_entry.board == "non_comparable" and board_entry.verified == "self_reported"
    assert IMPORTED_NOTE in board_entry.footnotes
    row = client.get("/api/v1/leaderboard/?board=non_comparable&tier=all").json()["rows"][0]
    assert row["agent"] == "AIDE" and row["uses"] == "complete" and row["tiers"]["all"]["seeds"] == 2
    assert row["tiers"]["all"]["any_medal"]["mean"] == pytest.approx((percent(6) + percent(10)) / 2)
    assert client.get("/api/v1/leaderboard/?board=comparable&tier=all").json()["rows"] == []


def test_a_re_grade_leaves_an_imported_entry_alone(registry, checkout):
    from grading.services.regrade import submission_regrade, submissions_regrade_all

    run_import(checkout)
    aide = entry("aide-o1")
    assert submission_regrade(submission_id=aide.pk) is False
    assert submissions_regrade_all() == 0
    assert entry("aide-o1").status == Submission.Status.PUBLISHED
