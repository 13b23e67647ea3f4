from django.urls import path

from grading import views

urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("submissions/<int:submission_id>/", views.submission_detail, name="submission_detail"),
    path("review/", views.review_queue, name="review"),
]
