from django.urls import path

from portal.accounts import views

urlpatterns = [
    path("team/", views.team_list, name="team"),
    path("teams/<int:team_id>/", views.team_detail, name="team_detail"),
    path("invitations/<str:key>/", views.invitation_accept, name="invitation_accept"),
    path("tokens/", views.token_list, name="token_list"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
]
