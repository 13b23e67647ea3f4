from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard: comparable and non-comparable tables by tier"

    def ready(self) -> None:
        from competitions.signals import thresholds_changed
        from grading.signals import entry_changed
        from leaderboard.history import thresholds_changed_receiver
        from leaderboard.tasks import entry_changed_receiver

        entry_changed.connect(entry_changed_receiver, dispatch_uid="leaderboard.entry_changed")
        thresholds_changed.connect(thresholds_changed_receiver, dispatch_uid="leaderboard.thresholds_changed")
