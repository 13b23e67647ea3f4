from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard: comparable and non-comparable tables by tier"

    def ready(self) -> None:
        from grading.signals import entry_changed
        from leaderboard.tasks import entry_changed_receiver

        entry_changed.connect(entry_changed_receiver, dispatch_uid="leaderboard.entry_changed")
