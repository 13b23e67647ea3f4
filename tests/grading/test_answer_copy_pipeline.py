"""answer_copy through the pipeline: the re-grade measures each scored file against the private answers and
stores only counts; the checking step holds an entry whose file is the answers for review."""

import pytest

from competitions.demo.csvio import write_csv
from competitions.demo.runs import pack_answers
from competitions.demo.specs import spec_for
from grading.models import Flag, Run, Submission
from grading.services import finish, pipeline
from grading.services.submissions import submission_bundle_root

TEXT = "text-normalization-challenge-english-language"


@pytest.fixture
def graded(registry_with_packs, alice, lite_bundle, lite_packs, monkeypatch, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading import queue
    from grading.services.intake import submission_create

    def grade(*, copy: bool) -> Submission:
        upload = SimpleUploadedFile("lite.tar.gz", lite_bundle.read_bytes())
        submission = submission_create(team=alice.teams.get(), user=alice, upload=upload)
        with django_capture_on_commit_callbacks():
            pipeline.submission_validate(submission_id=submission.pk)
        if copy:
            run = Run.objects.get(submission=submission, competition__slug=TEXT, seed=0)
            answers = pack_answers(lite_packs)(TEXT)
            path = submission_bundle_root(submission) / run.submission_file
            columns = list(reversed(spec_for(TEXT).public_columns))  # reordered, and rows shuffled
            write_csv(answers[columns].sample(frac=1.0, random_state=0), path, quoting=spec_for(TEXT).csv_quoting)
        monkeypatch.setattr(queue, "send", lambda task, pk: None)
        with django_capture_on_commit_callbacks(execute=True):
            for run in Run.objects.filter(submission=submission):
                pipeline.run_grade(run_id=run.pk)
        finish.submission_finish(submission_id=submission.pk)
        submission.refresh_from_db()
        return submission

    return grade


def test_the_honest_lite_run_raises_no_answer_copy_and_every_scored_file_was_measured(graded):
    submission = graded(copy=False)
    assert not Flag.objects.filter(submission=submission, code="answer_copy").exists()
    measured = Run.objects.filter(submission=submission, valid_submission=True).values_list(
        "answer_agreement", flat=True
    )
    assert measured and all(m is not None for m in measured)
    lows = [m["agreement_low"] for m in measured if m["measured"]]
    assert len(lows) >= 15 * 3 and max(lows) < 0.92


def test_a_file_that_is_the_answers_holds_the_entry_for_review_with_counts_only(graded):
    submission = graded(copy=True)
    flag = Flag.objects.get(submission=submission, code="answer_copy", key=f"{TEXT}/seed-0")
    assert (flag.severity, flag.decision) == ("blocking", "")
    entry = Flag.objects.get(submission=submission, code="answer_copy", key="entry")
    assert entry.severity == "blocking" and entry.evidence["held"] == [f"{TEXT}/seed-0"]
    assert set(Flag.objects.filter(submission=submission, code="answer_copy").values_list("key", flat=True)) == {
        f"{TEXT}/seed-0",
        "entry",
    }
    assert flag.evidence["rows"] == flag.evidence["rows_agree"] == flag.evidence["rows_exact"] == 300
    assert flag.evidence["beyond_best"] is True and flag.evidence["agreement_low"] >= 0.92
    assert submission.status == Submission.Status.IN_REVIEW and not submission.comparable
    stored = Run.objects.get(submission=submission, competition__slug=TEXT, seed=0).answer_agreement
    assert set(stored) >= {"rows", "rows_agree", "rows_exact", "agreement", "agreement_low", "chance"}
    assert all(isinstance(v, (int, float, bool, dict)) for k, v in stored.items() if k != "reason")
