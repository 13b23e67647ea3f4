from django.urls import path

from competitions import views

urlpatterns = [path("competitions/", views.competition_list, name="competition_list")]
