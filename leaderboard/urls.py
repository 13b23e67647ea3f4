from django.urls import path

from leaderboard import views

urlpatterns = [path("leaderboard/", views.leaderboard, name="leaderboard")]
