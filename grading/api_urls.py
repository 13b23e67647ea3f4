from django.urls import path

from grading import apis, registration_apis, review_apis

urlpatterns = [
    path("submissions/", apis.SubmissionListCreateApi.as_view(), name="api_submissions"),
    path("submissions/regrade-all/", review_apis.SubmissionRegradeAllApi.as_view(), name="api_submissions_regrade_all"),
    path("submissions/<int:submission_id>/", apis.SubmissionDetailApi.as_view(), name="api_submission"),
    path(
        "submissions/<int:submission_id>/results/", apis.SubmissionResultsApi.as_view(), name="api_submission_results"
    ),
    path(
        "submissions/<int:submission_id>/grading-report/",
        apis.SubmissionGradingReportApi.as_view(),
        name="api_submission_grading_report",
    ),
    path(
        "submissions/<int:submission_id>/regrade/",
        review_apis.SubmissionRegradeApi.as_view(),
        name="api_submission_regrade",
    ),
    path("registrations/", registration_apis.RegistrationListCreateApi.as_view(), name="api_registrations"),
    path(
        "registrations/public/",
        registration_apis.RegistrationPublicListApi.as_view(),
        name="api_registrations_public",
    ),
    path(
        "registrations/public/<int:registration_id>/",
        registration_apis.RegistrationPublicDetailApi.as_view(),
        name="api_registration_public",
    ),
    path(
        "registrations/<int:registration_id>/",
        registration_apis.RegistrationDetailApi.as_view(),
        name="api_registration",
    ),
    path(
        "registrations/<int:registration_id>/withdrawal/",
        registration_apis.RegistrationWithdrawalApi.as_view(),
        name="api_registration_withdrawal",
    ),
    path("decisions/", review_apis.DecisionListApi.as_view(), name="api_decisions"),
    path("engine/", apis.EngineApi.as_view(), name="api_engine"),
    path("review/flags/", review_apis.ReviewFlagListApi.as_view(), name="api_review_flags"),
    path(
        "review/flags/<int:flag_id>/decision/",
        review_apis.ReviewFlagDecisionApi.as_view(),
        name="api_review_flag_decision",
    ),
    path(
        "review/submissions/<int:submission_id>/decision/",
        review_apis.ReviewSubmissionDecisionApi.as_view(),
        name="api_review_submission_decision",
    ),
]
