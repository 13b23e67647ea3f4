from django.urls import path

from competitions import views

urlpatterns = [
    path("competitions/", views.competition_list, name="competition_list"),
    path("competitions/<slug:slug>/", views.competition_detail, name="competition_detail"),
]
