"""The capability that lets a worker claim one attempt of one hosted task.

Only the queue message of that attempt carries it: an HMAC of the task id and the attempt with a key of the
server's (SECRET_KEY, under a purpose of its own). A worker token alone therefore takes no task; a worker
that was sent the message of attempt 1 cannot claim attempt 2 after the watchdog queued it again; and a
message queued before capabilities existed is simply refused (the watchdog queues such tasks again).
"""

from django.utils.crypto import constant_time_compare, salted_hmac

PURPOSE = "runners.hosted-task-claim"


def task_capability(*, task_id: int, attempt: int) -> str:
    return salted_hmac(PURPOSE, f"{task_id}:{attempt}", algorithm="sha256").hexdigest()


def capability_matches(*, task_id: int, attempt: int, capability: object) -> bool:
    return isinstance(capability, str) and constant_time_compare(
        capability, task_capability(task_id=task_id, attempt=attempt)
    )
