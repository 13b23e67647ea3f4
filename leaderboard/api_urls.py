from django.urls import path

from leaderboard.apis import EntryApi, EntryEvidenceApi, LeaderboardApi

urlpatterns = [
    path("leaderboard/", LeaderboardApi.as_view(), name="api_leaderboard"),
    path("entries/<int:entry_id>/", EntryApi.as_view(), name="api_entry"),
    path("entries/<int:entry_id>/evidence/", EntryEvidenceApi.as_view(), name="api_entry_evidence"),
]
