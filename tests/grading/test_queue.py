"""grading/queue.py sends tasks by name: each name is a task the worker knows, routed as before."""

from grading import queue
from portal.celery import app


def test_each_task_the_queue_sends_is_registered_under_its_name():
    app.loader.import_default_modules()
    for name in (queue.VALIDATE_SUBMISSION, queue.GRADE_RUN, queue.FINISH_SUBMISSION):
        assert name in app.tasks


def test_grading_runs_go_to_the_grading_queue_and_steps_to_the_default_one():
    assert app.amqp.router.route({}, queue.GRADE_RUN)["queue"].name == "grading"
    assert app.amqp.router.route({}, queue.FINISH_SUBMISSION)["queue"].name == app.conf.task_default_queue
