"""One JSON error shape for the whole API: {"error": {"code", "message", "details"}}."""

import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from portal.refusals import Refused


def error_body(code: str, message: str, details: dict | list | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            text = _first_message(value)
            return text if key == "non_field_errors" else f"{key}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Refused):
        set_rollback()
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status)
    if isinstance(exc, DjangoValidationError):
        invalid = exc.message_dict if hasattr(exc, "error_dict") else {"messages": exc.messages}
        exc = exceptions.ValidationError(detail=invalid)
        exc.default_code = "invalid"
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)

    response = exception_handler(exc, context)
    if response is None:
        return None  # an unexpected error: Django's 500 handling (and logging) applies

    assert isinstance(exc, exceptions.APIException), "DRF answers nothing else"
    details: Any
    if isinstance(exc, exceptions.ValidationError):
        code = getattr(exc, "error_code", "invalid")
        details = exc.detail if isinstance(exc.detail, dict) else {"messages": exc.detail}
        message = _first_message(exc.detail)
    else:
        codes = exc.get_codes()
        code = getattr(exc, "error_code", None) or (codes if isinstance(codes, str) else "error")
        details = getattr(exc, "details", {})
        message = _first_message(exc.detail)
        throttled_for = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
        if throttled_for is not None:
            # Rounded up, so that a client waiting this long is not refused again.
            wait = max(1, math.ceil(throttled_for))
            details = {"retry_after_seconds": wait}
            response["Retry-After"] = str(wait)
    response.data = error_body(code, message, details)
    return response


class ApiError(Refused):
    """A refusal raised by an API view itself (a services' refusal is a Refused of its own)."""

    def __init__(self, *, status_code: int, code: str, message: str, details: dict | None = None) -> None:
        super().__init__(status=status_code, code=code, message=message, details=details)


def json_error_response(status_code: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)
