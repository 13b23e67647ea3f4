from django.urls import path

from leaderboard.apis import HistoryApi, LeaderboardApi

urlpatterns = [
    path("leaderboard/", LeaderboardApi.as_view(), name="api_leaderboard"),
    path("history/", HistoryApi.as_view(), name="api_history"),
]
