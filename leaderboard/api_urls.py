from django.urls import path

from leaderboard.apis import EntryApi, EntryEvidenceApi, HistoryApi, LeaderboardApi

urlpatterns = [
    path("leaderboard/", LeaderboardApi.as_view(), name="api_leaderboard"),
    path("history/", HistoryApi.as_view(), name="api_history"),
    path("entries/<int:entry_id>/", EntryApi.as_view(), name="api_entry"),
    path("entries/<int:entry_id>/evidence/", EntryEvidenceApi.as_view(), name="api_entry_evidence"),
]
