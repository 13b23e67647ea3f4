from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def leaderboard(request: HttpRequest) -> HttpResponse:
    # Entries appear once re-graded submissions are published.
    return render(request, "leaderboard/leaderboard.html", {"rows": []})
