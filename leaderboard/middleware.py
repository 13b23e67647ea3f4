"""The head of the board's history on every API answer and every answer of the board (header
X-Board-History-Head: SEQ:HASH).

An answer cached per board version (the leaderboard API, the exports) and the history API set the head they
were made with; every other API answer, and an entry's and a competition's pages and evidence, get the head as
the request began, read before the view so that what the answer shows is at least as new as its head. The
board's own pages, cached per version and served with one query, show the head in the page instead.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from leaderboard.history import HISTORY_HEAD_HEADER, board_head

HEADED_PATHS = ("/api/", "/leaderboard/entries/", "/leaderboard/competitions/")
# Answers that set the head they were made with (cached per board version): not read again for them.
OWN_HEAD_PATHS = ("/api/v1/leaderboard/", "/api/v1/history/")


class BoardHistoryHeadMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        headed = path.startswith(HEADED_PATHS) and not path.startswith(OWN_HEAD_PATHS)
        if request.method not in ("GET", "HEAD") or not headed:
            return self.get_response(request)
        head = board_head()
        response = self.get_response(request)
        if response.status_code < 400 and HISTORY_HEAD_HEADER not in response:
            response[HISTORY_HEAD_HEADER] = str(head)
        return response
