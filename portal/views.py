"""Project-wide pages: health, home, and the error pages (JSON under /api/), with DEBUG on or off."""

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import Resolver404

from portal.api.exception_handler import json_error_response
from portal.celery import app as celery_app


def _database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return f"down: {type(exc).__name__}: {exc}".strip()[:300]
    return "ok"


def _broker_status() -> str:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            # The filesystem transport "connects" without touching disk; opening a channel does.
            _ = conn.default_channel
    except Exception as exc:
        return f"down: {type(exc).__name__}: {exc}".strip()[:300]
    return "ok"


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database_status(), "broker": _broker_status()}
    healthy = all(value == "ok" for value in checks.values())
    body: dict[str, object] = {"status": "ok" if healthy else "unavailable", "checks": checks}
    if not healthy:
        body["down"] = [name for name, value in checks.items() if value != "ok"]
    return JsonResponse(body, status=200 if healthy else 503)


def home(request: HttpRequest) -> HttpResponse:
    return redirect("leaderboard")


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception=None) -> HttpResponse:
    message = "The server could not accept this request (a malformed request, or one for another host name)."
    if _wants_json(request):
        return json_error_response(400, "bad_request", message)
    # Without the request: one refused by a middleware (a wrong Host header) lacks what the base layout reads.
    return HttpResponse(render_to_string("errors/400.html", {"message": message}), status=400)


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    # Our PermissionDenied messages are written for the person refused ("Only maintainers can re-grade.").
    message = str(exception) if exception and str(exception) else "Your account may not open this page."
    if _wants_json(request):
        return json_error_response(403, "permission_denied", message)
    return render(request, "errors/403.html", {"message": message}, status=403)


def too_many_requests(request: HttpRequest) -> HttpResponse:
    """allauth's answer when a login, signup or password reset comes too often from one address."""
    return render(request, "errors/429.html", status=429)


def page_not_found(request: HttpRequest, exception=None) -> HttpResponse:
    if _wants_json(request):
        return json_error_response(404, "not_found", f"No API endpoint at {request.path}; see /api/docs/.")
    # A URL that matched nothing says so without echoing the path; our own 404s carry a message for people.
    message = "" if isinstance(exception, Resolver404) or not exception else str(exception)
    return render(request, "errors/404.html", {"message": message}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        return json_error_response(500, "server_error", "The server failed on this request; it was logged.")
    return render(request, "errors/500.html", status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = (
        "The form's security token (CSRF) is missing or stale. Reload the page and send the form again; "
        "API clients authenticate with 'Authorization: Token <key>' instead of a session."
    )
    if _wants_json(request):
        return json_error_response(403, "csrf_failed", message)
    return render(request, "errors/403_csrf.html", {"message": message, "reason": reason}, status=403)
