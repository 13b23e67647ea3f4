import pytest

from portal.tasks import ping


@pytest.mark.worker
def test_a_task_runs_on_a_real_worker_process_through_redis(celery_worker):
    result = ping.delay("hello")
    body = result.get(timeout=30)
    assert body["echo"] == "hello"
    assert body["grading_threads"] == 1  # GRADING_THREADS, applied in each pool process
    assert "ping" in celery_worker.output()  # the worker's own log shows it received the task
