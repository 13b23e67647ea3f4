import socket

from celery import shared_task


@shared_task(name="portal.ping")
def ping(payload: str) -> dict:
    """Answer from a worker, naming it: used by health checks and tests of the worker path."""
    return {"echo": payload, "worker": socket.gethostname()}
