"""`Authorization: Worker <key>`: a GPU worker's own token. request.user stays anonymous (a worker is no
account and can reach nothing of a team's); request.auth is the GpuWorker."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from portal.accounts.keys import hash_key, looks_like_key
from runners.models import GpuWorker


class WorkerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Worker"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        parts = header.split()
        if not parts or parts[0] != self.keyword:
            return None
        if len(parts) != 2 or not looks_like_key(parts[1]):
            raise exceptions.AuthenticationFailed(
                "Malformed worker header: send 'Authorization: Worker <key>' with the key "
                "'manage.py issue_worker_token' printed."
            )
        worker = GpuWorker.objects.filter(token_hash=hash_key(parts[1])).first()
        if worker is None:
            raise exceptions.AuthenticationFailed(
                "Unknown worker token: an operator issues one with issue_worker_token."
            )
        if worker.revoked_at is not None:
            raise exceptions.AuthenticationFailed(f"The token of worker {worker.name} was revoked.")
        from django.contrib.auth.models import AnonymousUser

        return AnonymousUser(), worker

    def authenticate_header(self, request) -> str:
        return self.keyword


class IsWorker(permissions.BasePermission):
    message = "This endpoint is for GPU workers: send 'Authorization: Worker <key>'."

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, GpuWorker)


class WorkerTokenScheme(OpenApiAuthenticationExtension):
    target_class = WorkerTokenAuthentication
    name = "WorkerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Worker <key>`; an operator issues keys with `manage.py issue_worker_token --name NAME`.",
        }
