"""A real Celery worker whose grading first sleeps TEST_GRADING_DELAY seconds, so a test can kill it mid-run.

The tests start it as `python -m tests.grading.slow_worker -A portal worker ...`; only the delay is fake.
The patch is made before the worker forks its pool, so every pool process grades slowly.
"""

import os
import sys
import time


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from grading.services import pipeline

    grade_run_file, delay = pipeline.grade_run_file, float(os.environ["TEST_GRADING_DELAY"])

    def slow_grade_run_file(**kwargs):
        time.sleep(delay)
        return grade_run_file(**kwargs)

    pipeline.grade_run_file = slow_grade_run_file
    from celery.__main__ import main as celery

    sys.argv = ["celery", *sys.argv[1:]]
    celery()


if __name__ == "__main__":
    main()
