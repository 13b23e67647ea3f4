from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from competitions import selectors
from grading.engine.tiers import COMPETITION_TIERS as TIERS


def competition_list(request: HttpRequest) -> HttpResponse:
    tier = request.GET.get("tier") if request.GET.get("tier") in TIERS else None
    competitions = selectors.competition_list(tier=tier)
    context = {"competitions": competitions, "tier": tier, "tiers": TIERS, "benchmark": selectors.current_benchmark()}
    return render(request, "competitions/competition_list.html", context)


def competition_detail(request: HttpRequest, slug: str) -> HttpResponse:
    competition = selectors.competition_get(slug=slug)
    return render(request, "competitions/competition_detail.html", {"c": competition})
