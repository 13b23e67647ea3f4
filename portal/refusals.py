"""A request refused for a reason its sender can act on. Services raise it (or a subclass that names where it
comes from); the API's one exception handler (portal/api/exception_handler.py) answers it with its status and
{"error": {"code", "message", "details"}}, and the HTML views turn it into a message or a 403/404."""

from collections.abc import Mapping
from typing import Any


class Refused(Exception):
    """status is the HTTP status to answer; code, message and details go to the client. field names the
    offending input, and is then details["field"] too."""

    def __init__(
        self, *, status: int, code: str, message: str, details: Mapping[str, Any] | None = None, field: str = ""
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field
        self.details: dict[str, Any] = {"field": field} if field else {}
        self.details.update(details or {})
