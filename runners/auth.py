"""`Authorization: Worker <key>`: a GPU worker's own token. request.user stays anonymous (a worker is no
account and can reach nothing of a team's); request.auth is the GpuWorker."""

from typing import Any

from django.contrib.auth.models import AnonymousUser
from rest_framework import exceptions, permissions
from rest_framework.request import Request

from portal.accounts.authentication import HashedKeyAuthentication, HashedKeyScheme
from runners.models import GpuWorker


class WorkerTokenAuthentication(HashedKeyAuthentication):
    keyword = "Worker"

    def malformed(self, request: Request, parts: list[str]) -> exceptions.AuthenticationFailed:
        return exceptions.AuthenticationFailed(
            "Malformed worker header: send 'Authorization: Worker <key>' with the key "
            "'manage.py issue_worker_token' printed."
        )

    def authenticate_hash(self, request: Request, key_hash: str) -> tuple[Any, Any]:
        worker = GpuWorker.objects.filter(token_hash=key_hash).first()
        if worker is None:
            raise exceptions.AuthenticationFailed(
                "Unknown worker token: an operator issues one with issue_worker_token."
            )
        if worker.revoked_at is not None:
            raise exceptions.AuthenticationFailed(f"The token of worker {worker.name} was revoked.")
        return AnonymousUser(), worker


class IsWorker(permissions.BasePermission):
    message = "This endpoint is for GPU workers: send 'Authorization: Worker <key>'."

    def has_permission(self, request: Request, view: object) -> bool:
        return isinstance(request.auth, GpuWorker)


class WorkerTokenScheme(HashedKeyScheme):
    target_class = WorkerTokenAuthentication
    name = "WorkerAuth"
    description = "`Worker <key>`; an operator issues keys with `manage.py issue_worker_token --name NAME`."
