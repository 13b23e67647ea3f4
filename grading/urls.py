from django.urls import path

from grading import registration_views, views

urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("submissions/<int:submission_id>/", views.submission_detail, name="submission_detail"),
    path(
        "submissions/<int:submission_id>/grading-report/",
        views.submission_grading_report_view,
        name="submission_grading_report",
    ),
    path("submissions/<int:submission_id>/regrade/", views.submission_regrade_view, name="submission_regrade"),
    path("submissions/<int:submission_id>/answer/", views.submission_answer, name="submission_answer"),
    path("decisions/", views.decisions, name="decisions"),
    path("registrations/", registration_views.registrations_public, name="registrations_public"),
    path("registrations/<int:registration_id>/", registration_views.registration_public, name="registration_public"),
    path("teams/<int:team_id>/registrations/", registration_views.team_registrations, name="team_registrations"),
    path(
        "teams/<int:team_id>/registrations/<int:registration_id>/",
        registration_views.team_registration,
        name="team_registration",
    ),
    path("review/", views.review_queue, name="review"),
    path("review/submissions/<int:submission_id>/", views.review_submission, name="review_submission"),
    path("review/submissions/<int:submission_id>/decision/", views.review_entry_decide, name="review_entry_decide"),
    path("review/flags/<int:flag_id>/decision/", views.review_flag_decide, name="review_flag_decide"),
    path("review/withdrawals/", views.review_withdrawals, name="review_withdrawals"),
    path(
        "review/withdrawals/<int:withdrawal_id>/decision/",
        views.review_withdrawal_decide,
        name="review_withdrawal_decide",
    ),
    path("review/regrade-all/", views.regrade_all_view, name="regrade_all"),
    path("downloads/engine/<str:name>", views.engine_download, name="engine_download"),
]
