"""The checking step against the database: flags stored with fingerprints, decisions kept or reopened,
publication when nothing blocking is undecided, known issues loaded from the shipped data."""

import shutil

import pytest

from competitions.demo.runs import default_manifest, write_run_group
from competitions.models import Competition, KnownIssue
from competitions.selectors import current_benchmark
from competitions.services import competitions_load, known_issue_delete
from grading.models import Flag, ReviewEvent, Run, Submission, TierAggregate
from grading.selectors import tier_members
from grading.services.finish import submission_finish
from grading.services.publication import submission_publish_if_ready
from grading.services.submissions import submission_folder
from tests.grading.builders import loaded_benchmark
from tests.grading.checks.builders import PIZZA, SPOOKY, report

S = Submission.Status


@pytest.fixture
def registry(db):
    competitions_load()


def checking_submission(team, *, logs: dict | None = None, competitions=(PIZZA, SPOOKY)) -> Submission:
    """A submission ready for the checking step: a demo run group unpacked where intake puts it, re-graded."""
    submission = Submission.objects.create(
        team=team, benchmark=loaded_benchmark(), status=S.CHECKING, manifest=default_manifest(split="low", seeds=3)
    )
    root = submission_folder(submission) / "bundle"
    group = write_run_group(out_dir=root / "runs", competition_ids=list(competitions), seeds=(0, 1, 2))
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=submission.benchmark)}
    runs: list[Run] = []
    for folder in sorted(p for p in group.iterdir() if p.is_dir()):
        slug = folder.name.rsplit("_", 1)[0]
        seed = sum(1 for r in runs if r.competition.slug == slug)
        runs.append(
            Run(
                submission=submission,
                competition=competitions[slug],
                seed=seed,
                run_group=group.name,
                run_id=folder.name,
                status=Run.Status.DONE,
                regraded=report(slug, 0.5),
                submission_file=f"runs/{group.name}/{folder.name}/submission/submission.csv",
            )
        )
    Run.objects.bulk_create(runs)
    write_logs(submission, logs or {})
    return submission


def write_logs(submission: Submission, logs: dict) -> None:
    for run in Run.objects.filter(submission=submission):
        text = logs.get((run.competition.slug, run.seed))
        if text is not None:
            path = submission_folder(submission) / "bundle" / "runs" / run.run_group / run.run_id / "logs" / "agent.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def check_again(submission: Submission) -> None:
    Submission.objects.filter(pk=submission.pk).update(status=S.CHECKING)
    submission_finish(submission_id=submission.pk)


def test_a_bundle_with_warnings_only_is_published_with_its_comparability(registry, alice):
    submission = checking_submission(alice.teams.get())
    submission_finish(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == S.PUBLISHED
    assert set(Flag.objects.filter(submission=submission).values_list("code", flat=True)) == {
        "incomplete_coverage",
        "insufficient_seeds",
    }
    assert not submission.comparable and submission.comparability["tiers"]["low"]["comparable"] is False
    assert ReviewEvent.objects.filter(submission=submission, kind=ReviewEvent.Kind.PUBLISHED).count() == 1


def test_a_blocking_flag_holds_the_entry_until_a_maintainer_accepts_it(registry, alice, maintainer):
    submission = checking_submission(alice.teams.get(), logs={(PIZZA, 1): "step 1\ngold_medal: True\n"})
    submission_finish(submission_id=submission.pk)
    submission.refresh_from_db()
    flag = Flag.objects.get(submission=submission, code="test_set_feedback")
    assert submission.status == S.IN_REVIEW and "1 blocking flag(s)" in submission.status_reason
    assert flag.evidence["hits"][0]["line"] == 2 and len(flag.fingerprint) == 64
    Flag.objects.filter(pk=flag.pk).update(decision="accept", decided_by=maintainer, resolution="a comment")
    assert submission_publish_if_ready(submission_id=submission.pk) is True
    assert Submission.objects.get(pk=submission.pk).status == S.PUBLISHED


def test_a_recheck_keeps_an_unchanged_decision_and_reopens_a_changed_one(registry, alice, maintainer):
    submission = checking_submission(alice.teams.get(), logs={(PIZZA, 1): "gold_medal: True\n"})
    submission_finish(submission_id=submission.pk)
    Flag.objects.filter(submission=submission, code="test_set_feedback").update(
        decision="accept", decided_by=maintainer, resolution="the team's own report"
    )

    check_again(submission)
    kept = Flag.objects.get(submission=submission, code="test_set_feedback")
    assert kept.decision == "accept" and kept.decided_by == maintainer
    assert not ReviewEvent.objects.filter(kind=ReviewEvent.Kind.REOPENED).exists()

    write_logs(submission, {(SPOOKY, 0): "gold_medal: False\n"})
    check_again(submission)
    reopened = Flag.objects.get(submission=submission, code="test_set_feedback")
    assert reopened.decision == "" and reopened.decided_by is None and reopened.resolution == ""
    assert reopened.evidence["total"] == 2
    assert ReviewEvent.objects.get(kind=ReviewEvent.Kind.REOPENED).flag == reopened
    assert Submission.objects.get(pk=submission.pk).status == S.IN_REVIEW


def test_undecided_flags_no_longer_raised_are_deleted_and_decided_ones_stay(registry, alice, maintainer):
    submission = checking_submission(alice.teams.get(), logs={(PIZZA, 1): "gold_medal: True\nmedal: 1\n"})
    submission_finish(submission_id=submission.pk)
    Flag.objects.filter(submission=submission, key="grader_fields").update(decision="reject", decided_by=maintainer)
    write_logs(submission, {(PIZZA, 1): "training loss 0.3\n"})
    check_again(submission)
    left = set(Flag.objects.filter(submission=submission).values_list("key", flat=True))
    assert "grader_fields" in left and "test_score" not in left


def test_cross_team_identical_files_are_found_through_the_other_entrys_index(registry, alice, bob):
    first = checking_submission(bob.teams.get())
    submission_finish(submission_id=first.pk)
    # Alice's entry is checked on another machine, which has none of Bob's files: the index is in the database.
    shutil.rmtree(submission_folder(first))
    second = checking_submission(alice.teams.get())
    submission_finish(submission_id=second.pk)
    flag = Flag.objects.get(submission=second, code="duplicate_submissions", key="other_team")
    assert flag.severity == "blocking" and flag.evidence["total"] == 6
    assert flag.private_evidence["other_entries"] == [{"submission": first.pk, "team": "Bob Works"}]
    assert Submission.objects.get(pk=second.pk).status == S.IN_REVIEW


def test_an_earlier_entry_is_not_held_by_a_later_copy_of_it_nor_by_the_same_team(registry, alice, bob):
    first = checking_submission(bob.teams.get())
    second = checking_submission(alice.teams.get())
    submission_finish(submission_id=second.pk)
    submission_finish(submission_id=first.pk)  # checked after its copy: the copy is not earlier
    again = checking_submission(alice.teams.get())
    submission_finish(submission_id=again.pk)
    # Bob's entry was uploaded first: alice's copy of it is no earlier entry (and bob's was not indexed yet when
    # alice's was checked); alice's later entry is held by bob's, never by her own.
    assert not Flag.objects.filter(submission__in=[first, second], key="other_team").exists()
    flag = Flag.objects.get(submission=again, key="other_team")
    assert flag.private_evidence["other_entries"] == [{"submission": first.pk, "team": "Bob Works"}]


def test_known_issues_load_from_the_shipped_data_without_overwriting_maintainers(registry):
    benchmark = current_benchmark()
    leak = KnownIssue.objects.get(benchmark=benchmark, competition_slug=PIZZA, kind="leak")
    loophole = KnownIssue.objects.get(benchmark=benchmark, kind="loophole")
    assert loophole.competition_slug == "hms-harmful-brain-activity-classification"
    assert loophole.data["detector"] == "empty_cells"
    KnownIssue.objects.filter(pk=leak.pk).update(description="edited by a maintainer", edited=True)
    known_issue_delete(issue=loophole)
    competitions_load()
    assert KnownIssue.objects.get(pk=leak.pk).description == "edited by a maintainer"
    assert not KnownIssue.objects.filter(benchmark=benchmark, kind="loophole").exists()
    assert KnownIssue.objects.filter(benchmark=benchmark, kind="leak").count() == 4


def test_three_byte_identical_seeds_count_as_one_seed_and_the_entry_is_not_comparable(registry, alice):
    low = tier_members(benchmark_id=loaded_benchmark().pk, tiers=["low"])["low"]
    distinct = checking_submission(alice.teams.get(), competitions=low)
    submission_finish(submission_id=distinct.pk)
    distinct.refresh_from_db()
    assert distinct.status == S.PUBLISHED and distinct.comparable, distinct.comparability

    copies = checking_submission(alice.teams.get(), competitions=low)
    bundle = submission_folder(copies) / "bundle"
    for run in Run.objects.filter(submission=copies, seed__gt=0):
        first = Run.objects.get(submission=copies, competition=run.competition, seed=0)
        shutil.copyfile(bundle / first.submission_file, bundle / run.submission_file)
    submission_finish(submission_id=copies.pk)
    copies.refresh_from_db()
    assert copies.status == S.PUBLISHED and not copies.comparable
    assert "1 complete seed(s) in low; at least 3 are needed" in copies.comparability["reasons"]
    complete = TierAggregate.objects.get(submission=copies, tier="low", kind=TierAggregate.Kind.COMPLETE).data
    assert complete["seeds"] == 1 and complete["any_medal"]["sem"] == 0.0
    assert (complete["copies"], complete["seeds_with_copies"]) == (2 * len(low), 3)
    few = Flag.objects.get(submission=copies, code="insufficient_seeds", key="low")
    assert few.evidence["complete_seeds"] == 1 and len(few.evidence["copied_seeds"]) == len(low)
    pairs = set(Run.objects.filter(submission=copies).values_list("competition__slug", "submission_sha256"))
    assert len(pairs) == len(low) and all(len(digest) == 64 for _, digest in pairs)


@pytest.mark.parametrize(("origin", "held"), [(Submission.Origin.HOSTED, False), (Submission.Origin.UPLOAD, True)])
def test_an_empty_run_log_is_a_hosted_runs_captured_output_but_no_log_in_an_upload(registry, alice, origin, held):
    submission = checking_submission(alice.teams.get())
    Submission.objects.filter(pk=submission.pk).update(origin=origin)
    for run in Run.objects.filter(submission=submission):
        (submission_folder(submission) / "bundle" / "runs" / run.run_group / run.run_id / "run.log").write_bytes(b"")
    submission_finish(submission_id=submission.pk)
    submission.refresh_from_db()
    no_logs = Flag.objects.filter(submission=submission, code="unscanned_evidence", key="no_logs").first()
    assert (no_logs is not None, submission.status) == (held, S.IN_REVIEW if held else S.PUBLISHED)
    if held:
        assert no_logs.severity == "blocking" and no_logs.evidence["runs_total"] == 6
