from django.urls import path

from competitions.apis import CompetitionDetailApi, CompetitionListApi

urlpatterns = [
    path("competitions/", CompetitionListApi.as_view(), name="api_competition_list"),
    path("competitions/<slug:slug>/", CompetitionDetailApi.as_view(), name="api_competition_detail"),
]
