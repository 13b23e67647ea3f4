from django.urls import path

from grading import views

urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("submissions/<int:submission_id>/", views.submission_detail, name="submission_detail"),
    path("submissions/<int:submission_id>/regrade/", views.submission_regrade_view, name="submission_regrade"),
    path("review/", views.review_queue, name="review"),
    path("review/regrade-all/", views.regrade_all_view, name="regrade_all"),
]
