from django.apps import AppConfig

from grading.signals import submission_received, submission_status_changed


class RunnersConfig(AppConfig):
    name = "runners"
    verbose_name = "Runners: hosted agent runs on GPU workers"

    def ready(self) -> None:
        # The services import models, which load only once the apps are ready.
        from runners.services.audits import audit_create, submission_settled_receiver
        from runners.services.hosted import submission_status_changed_receiver

        submission_status_changed.connect(submission_status_changed_receiver, dispatch_uid="runners.hosted_run_done")
        submission_status_changed.connect(submission_settled_receiver, dispatch_uid="runners.audit_compare")
        submission_received.connect(audit_create, dispatch_uid="runners.audit_create")
