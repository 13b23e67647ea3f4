from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from competitions.models import KnownIssue
from competitions.services import known_issue_delete


@admin.register(KnownIssue)
class KnownIssueAdmin(admin.ModelAdmin):
    list_display = ("competition_slug", "kind", "benchmark", "description", "edited")
    list_filter = ("benchmark", "kind")
    search_fields = ("competition_slug", "description")
    readonly_fields = ("shipped_key", "edited")

    def save_model(self, request: HttpRequest, obj: KnownIssue, form: Any, change: bool) -> None:
        if change and obj.shipped_key:
            obj.edited = True  # later loads of the shipped data leave it as the maintainer made it
        super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: KnownIssue) -> None:
        known_issue_delete(issue=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[KnownIssue]) -> None:
        for issue in queryset:
            known_issue_delete(issue=issue)
