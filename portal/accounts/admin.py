from django.contrib import admin

from portal.accounts.models import ApiToken, Invitation, Membership, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["email", "team", "created_at", "accepted_at"]
    exclude = ["key_hash"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "user", "team", "created_at", "last_used_at", "revoked_at"]
    exclude = ["key_hash"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
