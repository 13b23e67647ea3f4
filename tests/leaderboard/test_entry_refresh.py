"""Board rows recomputed from what grading stored: which aggregate a cell uses, padding marked, footnotes,
the known-leaky switch, the verified badge, and entries leaving the board when unpublished."""

import pytest

from competitions.models import KnownIssue
from competitions.selectors import current_benchmark
from grading.models import Flag, Run, Submission
from leaderboard import services
from leaderboard.models import BoardRow, Entry
from tests.leaderboard.builders import entry, report, split_members

pytestmark = pytest.mark.django_db


def row(submission, tier="low", excluding_leaky=False) -> BoardRow:
    return BoardRow.objects.get(entry__submission=submission, tier=tier, excluding_leaky=excluding_leaky)


def test_a_complete_entry_uses_the_complete_aggregate_with_hand_computed_mean_and_sem(team):
    low = split_members("low")  # 22 competitions
    submission = entry(team, medals={0: low[:2], 1: low[:4], 2: low[:3]})
    shown = row(submission)
    # Per seed 2/22, 4/22, 3/22 → 9.0909, 18.1818, 13.6364 %: mean 13.6364, SEM = sd(ddof=1)/√3 = 2.6243.
    assert len(low) == 22
    assert shown.uses == "complete" and shown.seeds == 3
    assert shown.any_medal_mean == pytest.approx(300 / 22)
    assert shown.any_medal_sem == pytest.approx(((100 / 22) ** 2 * 2 / 2) ** 0.5 / 3**0.5)
    assert shown.per_seed == pytest.approx([200 / 22, 400 / 22, 300 / 22])
    assert shown.rank == 1 and shown.rank_low == 1 and shown.rank_high == 1
    board_entry = Entry.objects.get(submission=submission)
    assert board_entry.board == "comparable" and board_entry.verified == "regraded" and not board_entry.padded


def test_an_entry_with_one_seed_has_sem_zero(team):
    low = split_members("low")
    submission = entry(team, seeds=1, medals={0: low[:11]}, comparable=False)
    shown = row(submission)
    assert (shown.seeds, shown.any_medal_mean, shown.any_medal_sem) == (1, 50.0, 0.0)
    assert shown.rank is None  # only comparable rows are ranked


def test_without_a_complete_seed_the_padded_aggregate_is_used_marked_and_footnoted(team):
    low = split_members("low")
    # low[0] has a run in seed 0 only, low[1] in seed 1 only: no seed is complete; padding counts the missing
    # runs as failures over the 3 seeds the other competitions have.
    submission = entry(
        team,
        medals={0: low[:1], 1: low[1:3], 2: []},
        comparable=False,
        missing=[(low[0], 1), (low[0], 2), (low[1], 0), (low[1], 2)],
    )
    shown = row(submission)
    assert shown.uses == "padded" and shown.seeds == 3
    assert shown.any_medal_mean == pytest.approx((100 / 22 + 200 / 22 + 0) / 3)
    board_entry = Entry.objects.get(submission=submission)
    assert board_entry.padded
    assert any("pads missing runs with failures over 3 seed(s)" in note for note in board_entry.footnotes)
    assert board_entry.tiers["low"]["all"]["complete"] is None


def test_the_leaky_switch_recomputes_over_the_split_without_the_known_leaky_competitions(team):
    low = split_members("low")
    shipped = set(KnownIssue.objects.filter(kind=KnownIssue.Kind.LEAK).values_list("competition_slug", flat=True))
    leaky, clean = [c for c in low if c not in shipped][:2]
    KnownIssue.objects.create(
        benchmark=current_benchmark(),
        competition_slug=leaky,
        kind=KnownIssue.Kind.LEAK,
        description="labels in the test file names",
    )
    remaining = 22 - len(shipped & set(low)) - 1
    submission = entry(team, medals={seed: [leaky, clean] for seed in range(3)})
    assert row(submission).any_medal_mean == pytest.approx(200 / 22)
    without = row(submission, excluding_leaky=True)
    assert without.any_medal_mean == pytest.approx(100 / remaining)  # one medal over the competitions left
    assert Entry.objects.get(submission=submission).tiers["low"]["excluding_leaky"]["competitions"] == remaining


def test_footnotes_come_from_the_comparability_verdict_and_from_decided_and_serious_flags(team, maintainer):
    submission = entry(team, comparable=False, refresh=False)
    Submission.objects.filter(pk=submission.pk).update(
        comparability={
            "comparable": False,
            "reasons": ["a maintainer marked non-comparable the entry: tuned on the test set"],
            "tiers": {"low": {"comparable": False, "reasons": ["2 complete seed(s) in low; at least 3 are needed"]}},
        }
    )
    Flag.objects.create(
        submission=submission,
        code="known_leaky_competition",
        severity="warning",
        key="x",
        message="x: 3 medal(s) on a competition with a known test-label leak.",
    )
    Flag.objects.create(
        submission=submission,
        code="score_mismatch",
        severity="blocking",
        key="y",
        message="m",
        decision="accept",
        resolution="rounding in the team's grader",
    )
    Flag.objects.create(
        submission=submission, code="nonstandard_resources", severity="info", key="undeclared", message="not declared"
    )
    services.board_refresh(submission_ids=[submission.pk])
    notes = Entry.objects.get(submission=submission).footnotes
    assert "Non-comparable: a maintainer marked non-comparable the entry: tuned on the test set." in notes
    assert "Non-comparable in Low (Lite): 2 complete seed(s) in low; at least 3 are needed." in notes
    assert "Known leaky competition: x: 3 medal(s) on a competition with a known test-label leak." in notes
    assert "Accepted by a maintainer: rounding in the team's grader (score_mismatch (y))." in notes
    assert not any("not declared" in note for note in notes)  # info flags stay on the entry page
    assert Entry.objects.get(submission=submission).resources == "undeclared"


def test_transparency_columns_come_from_the_manifest_and_the_checks(team):
    submission = entry(
        team,
        manifest={
            "disclosures": {"test_set_feedback": True},
            "internet_access": False,
            "llms": ["o1-preview", "gpt-4o"],
        },
    )
    board_entry = Entry.objects.get(submission=submission)
    assert board_entry.test_set_info == "declared"
    assert board_entry.internet_access is False and board_entry.llms_text == "o1-preview; gpt-4o"
    assert board_entry.hardware_text == "1 × A10 24 GB · 36 vCPU · 440 GB RAM"
    assert board_entry.resources == "reference" and board_entry.open_source is True


def test_hosted_regraded_and_self_reported_entries_get_their_badges(team):
    hosted = entry(team, origin=Submission.Origin.HOSTED)
    report_only = entry(team, report_only=True, comparable=False)
    imported = entry(
        team, origin=Submission.Origin.IMPORT, report_only=True, comparable=False, manifest={"date": "2024-10-10"}
    )
    assert Entry.objects.get(submission=hosted).verified == "hosted"
    assert Entry.objects.get(submission=report_only).verified == "self_reported"
    imported_entry = Entry.objects.get(submission=imported)
    assert imported_entry.verified == "self_reported" and imported_entry.date.isoformat() == "2024-10-10"
    assert any("imported from the existing MLE-bench board" in n for n in imported_entry.footnotes)
    # A report-only entry's figures are its claims (the builder claims what it would re-grade).
    assert row(report_only).seeds == 3


def test_an_entry_that_is_no_longer_published_leaves_the_board_and_the_ranks_close_up(team):
    low = split_members("low")
    first = entry(team, medals={s: low[:5] for s in range(3)})
    second = entry(team, medals={s: low[:2] for s in range(3)})
    assert row(second).rank == 2
    Submission.objects.filter(pk=first.pk).update(status=Submission.Status.GRADING)
    services.board_refresh(submission_ids=[first.pk])
    assert not Entry.objects.filter(submission=first).exists()
    assert row(second).rank == 1


def test_refreshing_twice_changes_nothing(team):
    submission = entry(team)
    before = list(BoardRow.objects.filter(entry__submission=submission).order_by("pk").values())
    services.board_refresh(submission_ids=[submission.pk])
    assert list(BoardRow.objects.filter(entry__submission=submission).order_by("pk").values()) == before
    assert Entry.objects.filter(submission=submission).count() == 1


def test_the_rebuild_command_recomputes_every_entry_and_drops_stale_ones(team):
    from io import StringIO

    from django.core.management import call_command

    kept = entry(team)
    gone = entry(team)
    Submission.objects.filter(pk=gone.pk).update(status=Submission.Status.REJECTED)
    BoardRow.objects.filter(entry__submission=kept).delete()
    out = StringIO()
    call_command("rebuild_leaderboard", stdout=out)
    assert "from 1 published submission(s)" in out.getvalue()
    assert BoardRow.objects.filter(entry__submission=kept).count() == 2  # low, with and without leaky ones
    assert not Entry.objects.filter(submission=gone).exists()


def test_an_entrys_refresh_reads_its_runs_in_one_query_however_many_there_are(team, django_assert_max_num_queries):
    submission = entry(team, split="split75", refresh=False)  # 225 runs
    # None per run (225 of them); the board's history adds a constant few when the state changed (its last
    # state, the writer's lock, the event, the head; the first one also makes the board's state row).
    with django_assert_max_num_queries(28):
        services.entry_refresh(submission_id=submission.pk)
    assert BoardRow.objects.filter(entry__submission=submission).count() == 8


def _ranked_tabs(monkeypatch) -> list[int]:
    """Records the number of rows of each tab ranked."""
    ranked: list[int] = []
    real = services.tab_ranks

    def recording(per_seed, **kwargs):
        ranked.append(len(per_seed))
        return real(per_seed, **kwargs)

    monkeypatch.setattr(services, "tab_ranks", recording)
    return ranked


def test_a_refresh_ranks_again_only_the_tabs_whose_rows_it_changed(team, monkeypatch):
    low = split_members("low")
    lite = entry(team, medals={s: low[:2] for s in range(3)})
    full = entry(team, split="split75", medals={s: low[:1] for s in range(3)})
    ranked = _ranked_tabs(monkeypatch)
    services.board_refresh(submission_ids=[lite.pk])
    assert ranked == []  # nothing it ranks on changed: every rank stays as it is
    Run.objects.filter(submission=lite, competition__slug=low[5], seed=0).update(
        regraded=report(medal="gold"), any_medal=True
    )
    services.board_refresh(submission_ids=[lite.pk])
    assert ranked == [2, 2]  # the Lite tab with and without the leaky competitions, not the 1-row others
    assert row(lite).rank == 1 and row(full).rank == 2
    assert BoardRow.objects.get(entry__submission=full, tier="all", excluding_leaky=False).rank == 1


def test_an_entry_leaving_the_comparable_board_ranks_its_tabs_again(team, monkeypatch):
    low = split_members("low")
    first = entry(team, medals={s: low[:5] for s in range(3)})
    second = entry(team, medals={s: low[:2] for s in range(3)})
    ranked = _ranked_tabs(monkeypatch)
    Submission.objects.filter(pk=first.pk).update(comparability={"comparable": False, "reasons": ["a test reason"]})
    services.board_refresh(submission_ids=[first.pk])
    assert ranked == [1, 1]
    assert row(second).rank == 1 and row(first).rank is None and row(first).tied_with == []


def test_the_outcomes_read_in_one_query_are_those_of_each_run_read_whole(team):
    """grading.selectors.submission_outcomes picks the aggregation's fields out of each report in the database:
    the same outcomes as run_outcome on the whole run, for a report lacking a field, one with medals unknown,
    an empty one and a team's own claims."""
    from grading.selectors import run_outcome, submission_outcomes

    low = split_members("low")
    submission = entry(team, medals={0: low[:3], 1: low[:1], 2: []}, refresh=False)
    runs = list(Run.objects.filter(submission=submission).select_related("competition").order_by("pk"))
    lacking, unknown, empty = runs[0], runs[1], runs[2]
    Run.objects.filter(pk=lacking.pk).update(
        regraded={k: v for k, v in lacking.regraded.items() if k != "medals_known"},
        claimed={"gold_medal": True, "submission_exists": True},
    )
    Run.objects.filter(pk=unknown.pk).update(regraded={**unknown.regraded, "medals_known": False, "gold_medal": None})
    Run.objects.filter(pk=empty.pk).update(regraded={})
    runs = list(Run.objects.filter(submission=submission).select_related("competition"))
    for claimed in (False, True):
        whole = sorted((run_outcome(run, claimed=claimed) for run in runs), key=repr)
        picked = sorted(submission_outcomes(submission_id=submission.pk, claimed=claimed), key=repr)
        assert picked == whole
    unknown_outcome = next(
        o
        for o in submission_outcomes(submission_id=submission.pk)
        if (o.competition_id, o.seed) == (unknown.competition.slug, unknown.seed)
    )
    assert unknown_outcome.medals_known is False and unknown_outcome.gold is False


@pytest.mark.parametrize(
    ("origin", "level"),
    [
        (Submission.Origin.UPLOAD, "reported"),
        (Submission.Origin.IMPORT, "reported"),
        (Submission.Origin.HOSTED, "verified"),
    ],
)
def test_the_entry_stores_its_evidence_level_by_origin(team, origin, level):
    submission = entry(team, origin=origin, report_only=origin == Submission.Origin.IMPORT)
    assert Entry.objects.get(submission=submission).evidence_level == level


def test_a_registered_upload_is_registered_until_a_run_lacks_the_nonce(team):
    from django.utils import timezone

    from grading.models import Registration

    registration = Registration.objects.create(
        team=team,
        agent_name="Agent",
        agent_version="1",
        split="low",
        seeds=3,
        nonce="n" * 32,
        deadline=timezone.now(),
    )
    submission = entry(team)
    Submission.objects.filter(pk=submission.pk).update(registration=registration)
    services.board_refresh(submission_ids=[submission.pk])
    assert Entry.objects.get(submission=submission).evidence_level == "registered"
    Flag.objects.create(submission=submission, code="registration", key="no_nonce", severity="blocking", message="x")
    services.board_refresh(submission_ids=[submission.pk])
    assert Entry.objects.get(submission=submission).evidence_level == "reported"
