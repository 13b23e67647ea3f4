from django.urls import path

from grading import views

urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("review/", views.review_queue, name="review"),
]
