from django.urls import path

from runners import apis

urlpatterns = [
    path("hosted-runs/", apis.HostedRunListCreateApi.as_view(), name="api_hosted_runs"),
    path("hosted-runs/<int:hosted_run_id>/", apis.HostedRunDetailApi.as_view(), name="api_hosted_run"),
    path("hosted-runs/<int:hosted_run_id>/cancel/", apis.HostedRunCancelApi.as_view(), name="api_hosted_run_cancel"),
    path("workers/register/", apis.WorkerRegisterApi.as_view(), name="api_worker_register"),
    path("workers/heartbeat/", apis.WorkerHeartbeatApi.as_view(), name="api_worker_heartbeat"),
    path("workers/tasks/<int:task_id>/claim/", apis.TaskClaimApi.as_view(), name="api_worker_claim"),
    path("workers/tasks/<int:task_id>/validate/", apis.TaskValidateApi.as_view(), name="api_worker_validate"),
    path("workers/tasks/<int:task_id>/finish/", apis.TaskFinishApi.as_view(), name="api_worker_finish"),
    path("workers/competitions/<slug:slug>/public-data/", apis.PublicDataApi.as_view(), name="api_worker_public_data"),
]
