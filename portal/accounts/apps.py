from typing import Any

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "portal.accounts"
    label = "accounts"
    verbose_name = "Accounts and teams"

    def ready(self) -> None:
        from allauth.account.signals import password_reset
        from django.contrib import admin

        from portal.accounts.forms import ThrottledAdminLoginForm

        admin.site.login_form = ThrottledAdminLoginForm
        password_reset.connect(_mailbox_proven, dispatch_uid="portal.accounts.login_throttle")


def _mailbox_proven(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    from portal.accounts import login_throttle

    login_throttle.mailbox_proven(request, user)
