from django.urls import path

from leaderboard import views

urlpatterns = [
    path("leaderboard/", views.leaderboard, name="leaderboard"),
    path("leaderboard/export.<str:kind>", views.leaderboard_export, name="leaderboard_export"),
    path("leaderboard/history/", views.board_history, name="leaderboard_history"),
    path("leaderboard/entries/<int:entry_id>/", views.entry_detail, name="leaderboard_entry"),
    path("leaderboard/entries/<int:entry_id>/bundle/", views.entry_bundle, name="leaderboard_entry_bundle"),
    path("leaderboard/entries/<int:entry_id>/evidence.zip", views.entry_evidence, name="leaderboard_entry_evidence"),
    path("leaderboard/competitions/<slug:slug>/", views.competition_board, name="leaderboard_competition"),
]
