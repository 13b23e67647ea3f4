"""runners/queue.py sends the server-side task by name: the name is a task the portal's worker knows."""

from portal.celery import app
from runners import queue


def test_the_assembly_task_the_queue_sends_is_registered_under_its_name():
    app.loader.import_default_modules()
    assert queue.HOSTED_ASSEMBLE in app.tasks
    assert app.amqp.router.route({}, queue.HOSTED_ASSEMBLE)["queue"].name == app.conf.task_default_queue
