from django.urls import path

from runners import views

urlpatterns = [
    path("hosted-runs/", views.hosted_run_new, name="hosted_run_new"),
    path("hosted-runs/workers/", views.workers, name="hosted_workers"),
    path("hosted-runs/<int:hosted_run_id>/", views.hosted_run_detail, name="hosted_run_detail"),
    path("hosted-runs/<int:hosted_run_id>/cancel/", views.hosted_run_cancel_view, name="hosted_run_cancel"),
]
