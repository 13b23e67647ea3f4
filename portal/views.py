"""Project-wide pages: health, home, and the error pages (JSON under /api/), with DEBUG on or off."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import Resolver404

from portal.accounts.selectors import is_maintainer
from portal.api.exception_handler import json_error_response
from portal.health import health_report, worker_processes


def healthz(request: HttpRequest) -> JsonResponse:
    """Each part's state; 503 naming the parts that are down. Any answer at all means the web server is up."""
    report = health_report()
    response = JsonResponse(report.as_dict(), status=503 if report.down else 200)
    response["Cache-Control"] = "no-store"
    return response


def status_page(request: HttpRequest) -> HttpResponse:
    """/healthz for people; maintainers also see each grading worker process."""
    report = health_report()
    context = {
        "report": report,
        "parts": [(part, part.as_dict()) for part in report.parts],
        "processes": worker_processes() if is_maintainer(request.user) else None,
    }
    return render(request, "status.html", context)


def home(request: HttpRequest) -> HttpResponse:
    return redirect("leaderboard")


def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers and feed readers ask for whatever a page links: the static icon (its
    hashed, long-cached name once collected)."""
    return redirect(static("favicon.ico"), permanent=True)


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = "The server could not accept this request (a malformed request, or one for another host name)."
    if _wants_json(request):
        return json_error_response(400, "bad_request", message)
    # Without the request: one refused by a middleware (a wrong Host header) lacks what the base layout reads.
    return HttpResponse(render_to_string("errors/400.html", {"message": message}), status=400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    # Our PermissionDenied messages are written for the person refused ("Only maintainers can re-grade.").
    message = str(exception) if exception and str(exception) else "Your account may not open this page."
    if _wants_json(request):
        return json_error_response(403, "permission_denied", message)
    return render(request, "errors/403.html", {"message": message}, status=403)


def too_many_requests(request: HttpRequest) -> HttpResponse:
    """allauth's answer when a login, signup or password reset comes too often from one address."""
    return render(request, "errors/429.html", status=429)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
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
