from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def competition_list(request: HttpRequest) -> HttpResponse:
    return render(request, "competitions/competition_list.html", {"competitions": []})
