"""A real Celery worker in which one competition's grader raises an error of ours, so a test can see what one
run's fault does to a submission (tests/grading/test_grading_errors.py).

The tests start it as `python -m tests.grading.faulty_worker -A portal worker ...` with TEST_GRADER_FAILS_ON
naming the competitions, each as `slug` (every grading fails) or `slug:N` (the first N gradings in this process).
Only the grader is fake: it raises AnswersProblem, the engine's error for answers that do not fit their grader,
which grading lets through as ours (any other exception of a grader makes the file invalid, as in MLE-bench).
Its message quotes an answer, as a real one may; the tests check that it is shown nowhere. The patch is made
before the worker forks its pool, and the tests run the worker with one pool process, so the count holds.
"""

import os
import sys

LEAKED_ANSWER = "id_000123 is 0.73105"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from grading.engine.errors import AnswersProblem
    from grading.engine.registry import GraderRef, register
    from grading.services import grade_file as grade_file_module

    # "slug" fails every time, "slug:N" the first N times.
    left: dict[str, int | None] = {}
    for item in os.environ["TEST_GRADER_FAILS_ON"].split(","):
        slug, _, times = item.partition(":")
        left[slug] = int(times) if times else None
    real_setup = grade_file_module.grading_setup

    @register("test-broken-grader")
    def broken(submission, answers, *, slug: str, real: str, **params):
        if left[slug] is None or left[slug] > 0:  # type: ignore[operator]
            if left[slug] is not None:
                left[slug] -= 1  # type: ignore[operator]
            raise AnswersProblem(f"the answers do not fit the grader: {LEAKED_ANSWER}")
        from grading.engine.registry import run_grader

        return run_grader(GraderRef(real, params), submission, answers)

    def setup(competition):
        answers, grader, medals = real_setup(competition)
        if competition.slug in left:
            grader = GraderRef("test-broken-grader", {**grader.params, "slug": competition.slug, "real": grader.name})
        return answers, grader, medals

    grade_file_module.grading_setup = setup
    from celery.__main__ import main as celery

    sys.argv = ["celery", *sys.argv[1:]]
    celery()


if __name__ == "__main__":
    main()
