from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.accounts import selectors


class MeApi(APIView):
    """Who the caller is, the team its token acts for, and whether it is a maintainer."""

    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        email = serializers.EmailField()
        team = serializers.CharField(allow_null=True)
        teams = serializers.ListField(child=serializers.CharField())
        maintainer = serializers.BooleanField()

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        user = selectors.signed_in_user(request.user)  # IsAuthenticated, the API's default permission
        token = request.auth if hasattr(request.auth, "team") else None
        data = {
            "username": user.get_username(),
            "email": user.email,
            "team": token.team.name if token else None,
            "teams": [team.name for team in selectors.teams_for_user(user=user)],
            "maintainer": selectors.is_maintainer(user),
        }
        return Response(self.OutputSerializer(data).data)
