from django.urls import path

from runners import views

urlpatterns = [
    path("hosted-runs/", views.hosted_run_new, name="hosted_run_new"),
    path("hosted-runs/workers/", views.workers, name="hosted_workers"),
    path("hosted-runs/workers/approval/", views.worker_approval, name="hosted_worker_approval"),
    path("hosted-runs/workers/<int:worker_id>/approval/", views.worker_approve_view, name="hosted_worker_approve"),
    path("hosted-runs/<int:hosted_run_id>/", views.hosted_run_detail, name="hosted_run_detail"),
    path("hosted-runs/<int:hosted_run_id>/cancel/", views.hosted_run_cancel_view, name="hosted_run_cancel"),
]
