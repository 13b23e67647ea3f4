"""The portal's own error pages, with DEBUG on as well (scripts/run's default).

With DEBUG on, Django answers a 404 with a page that lists every URL pattern, and an error (or a suspicious
request, such as one for another host name) with the traceback, the request and the settings, to whoever
asked. Here visitors get the pages a production portal shows instead (JSON under /api/); the traceback still
goes to the log, which Django writes either way.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.safestring import SafeString
from django.views.debug import ExceptionReporter

from portal import views


class _DebugPageWithheld(ExceptionReporter):
    """Takes the place of Django's DEBUG error page for one request, and marks it for the middleware."""

    def __init__(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(request, *args, **kwargs)
        if request is not None:
            request.debug_page_withheld = True  # type: ignore[attr-defined]

    def get_traceback_html(self) -> SafeString:
        return SafeString("")

    def get_traceback_text(self) -> SafeString:
        return SafeString("")


class PublicErrorPagesMiddleware:
    """First in MIDDLEWARE, so that an error raised in any other middleware is covered too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not settings.DEBUG:
            return self.get_response(request)  # Django's handlers (portal/urls.py) apply by themselves
        request.exception_reporter_class = _DebugPageWithheld
        response = self.get_response(request)
        if getattr(request, "debug_page_withheld", False):
            return views.server_error(request) if response.status_code >= 500 else views.bad_request(request)
        if response.status_code == 404 and request.resolver_match is None:
            return views.page_not_found(request)  # no URL pattern matched (a view's 404 is handled below)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if settings.DEBUG and isinstance(exception, Http404):
            return views.page_not_found(request, exception)
        return None


class PermissionsPolicyMiddleware:
    """Permissions-Policy, which Django's SecurityMiddleware does not send: PERMISSIONS_POLICY, or none when empty."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.PERMISSIONS_POLICY and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = settings.PERMISSIONS_POLICY
        return response
