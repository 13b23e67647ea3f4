from django.urls import path

from leaderboard.apis import LeaderboardApi

urlpatterns = [path("leaderboard/", LeaderboardApi.as_view(), name="api_leaderboard")]
