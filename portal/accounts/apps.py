from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "portal.accounts"
    label = "accounts"
    verbose_name = "Accounts and teams"

    def ready(self) -> None:
        from django.contrib import admin

        from portal.accounts.forms import ThrottledAdminLoginForm

        admin.site.login_form = ThrottledAdminLoginForm
