"""Registrations API (SPEC section 9): register a run group before running it, list and read the team's own."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading import selectors
from grading.apis import _team_for_upload
from grading.models import Registration
from grading.services.registrations import MAX_REASON, registration_create, withdrawal_request
from portal.accounts.selectors import signed_in_user
from portal.api.exception_handler import ApiError

PUBLIC_LIMIT = 500  # the newest public registrations the list answers


class AgentSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    version = serializers.CharField(max_length=200)


class RegistrationInputSerializer(serializers.Serializer):
    agent = AgentSerializer()
    split = serializers.CharField(required=False, allow_blank=True, max_length=20, help_text="low, medium, high…")
    competitions = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, help_text="Competition ids, instead of a split"
    )
    seeds = serializers.IntegerField(help_text="Runs per competition that will count, reported or not")
    image = serializers.CharField(
        required=False, allow_blank=True, max_length=71, help_text="The agent image's digest, sha256:<64 hex>"
    )


class RegistrationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.CharField(source="team.name")
    agent = serializers.SerializerMethodField()
    split = serializers.CharField()
    competitions = serializers.ListField(child=serializers.CharField())
    seeds = serializers.IntegerField()
    image = serializers.CharField()
    nonce = serializers.CharField(help_text="Write it into each run's log before the run writes its submission")
    deadline = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    withdrawal = serializers.SerializerMethodField(help_text="The latest withdrawal asked for; null: none")

    def get_agent(self, obj: Registration) -> dict:
        return {"name": obj.agent_name, "version": obj.agent_version}

    def get_withdrawal(self, obj: Registration) -> dict | None:
        found = max(obj.withdrawals.all(), key=lambda w: (w.requested_at, w.pk), default=None)
        return WithdrawalSerializer(found).data if found is not None else None


class WithdrawalInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=MAX_REASON, help_text="Why; public once a maintainer accepts it")


class WithdrawalSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    registration = serializers.IntegerField(source="registration_id")
    reason = serializers.CharField()
    status = serializers.CharField(help_text="pending, accepted or refused")
    requested_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_reason = serializers.CharField(help_text="The maintainer's reason; empty while pending")


def _first_error(errors: object, prefix: str = "") -> tuple[str, str]:
    """The first field and message of a serializer's errors, e.g. ("agent.name", "This field is required.")."""
    if isinstance(errors, dict):
        key, value = next(iter(errors.items()))
        return _first_error(value, f"{prefix}{key}.")
    if isinstance(errors, list) and errors:
        return _first_error(errors[0], prefix)
    return prefix.rstrip("."), str(errors)


class RegistrationListCreateApi(APIView):
    @extend_schema(responses=RegistrationSerializer(many=True))
    def get(self, request: Request) -> Response:
        team = _team_for_upload(request)
        rows = selectors.registrations_of_team(team=team)[:200]
        return Response(RegistrationSerializer(rows, many=True).data)

    @extend_schema(
        request=RegistrationInputSerializer,
        responses={201: RegistrationSerializer, 400: OpenApiResponse(description="bad input, the field named")},
    )
    def post(self, request: Request) -> Response:
        team = _team_for_upload(request)
        given = RegistrationInputSerializer(data=request.data)
        if not given.is_valid():
            field, message = _first_error(given.errors)
            raise ApiError(status_code=400, code="invalid", message=f"{field}: {message}", details={"field": field})
        data = given.validated_data
        registration = registration_create(
            team=team,
            user=signed_in_user(request.user),
            agent_name=data["agent"]["name"],
            agent_version=data["agent"]["version"],
            seeds=data["seeds"],
            split=data.get("split", ""),
            competitions=data.get("competitions", []),
            image=data.get("image", ""),
        )
        return Response(RegistrationSerializer(registration).data, status=status.HTTP_201_CREATED)


class RegistrationDetailApi(APIView):
    @extend_schema(responses=RegistrationSerializer)
    def get(self, request: Request, registration_id: int) -> Response:
        team = _team_for_upload(request)
        registration = selectors.registrations_of_team(team=team).filter(pk=registration_id).first()
        if registration is None:
            raise ApiError(
                status_code=404, code="not_found", message=f"Your team has no registration {registration_id}."
            )
        return Response(RegistrationSerializer(registration).data)


class RegistrationWithdrawalApi(APIView):
    @extend_schema(
        request=WithdrawalInputSerializer,
        responses={
            201: WithdrawalSerializer,
            400: OpenApiResponse(description="no reason"),
            404: OpenApiResponse(description="not a registration of your team"),
            409: OpenApiResponse(description="named by a bundle, or a withdrawal already pending or accepted"),
        },
        description="Ask to withdraw a registration of your team, saying why. A maintainer accepts or refuses it "
        "(/review/withdrawals/); once accepted its unreported seeds no longer count as failures and the reason is "
        "public on the entries of that agent and version.",
    )
    def post(self, request: Request, registration_id: int) -> Response:
        team = _team_for_upload(request)
        given = WithdrawalInputSerializer(data=request.data)
        if not given.is_valid():
            field, message = _first_error(given.errors)
            raise ApiError(status_code=400, code="invalid", message=f"{field}: {message}", details={"field": field})
        withdrawal = withdrawal_request(
            team=team,
            user=signed_in_user(request.user),
            registration_id=registration_id,
            reason=given.validated_data["reason"],
        )
        return Response(WithdrawalSerializer(withdrawal).data, status=status.HTTP_201_CREATED)


class EntryUsingSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The board entry's id: /leaderboard/entries/<id>/")
    submission = serializers.IntegerField()
    status = serializers.CharField()


class PublicRegistrationSerializer(RegistrationSerializer):
    hosted_run = serializers.SerializerMethodField(help_text="The hosted run that registered itself, if one did")
    entries = serializers.SerializerMethodField()

    def get_hosted_run(self, obj: Registration) -> int | None:
        hosted_run = getattr(obj, "hosted_run", None)
        return hosted_run.pk if hosted_run is not None else None

    @extend_schema_field(EntryUsingSerializer(many=True))
    def get_entries(self, obj: Registration) -> list[dict]:
        return selectors.registration_entries(registration=obj)


class RegistrationPublicListApi(APIView):
    """Public registrations: those an entry uses and those past their deadline, newest first, nonce included."""

    permission_classes = [AllowAny]

    @extend_schema(responses=PublicRegistrationSerializer(many=True))
    def get(self, request: Request) -> Response:
        rows = selectors.registrations_public()[:PUBLIC_LIMIT]
        return Response(PublicRegistrationSerializer(rows, many=True).data)


class RegistrationPublicDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses={200: PublicRegistrationSerializer, 404: OpenApiResponse(description="not public")})
    def get(self, request: Request, registration_id: int) -> Response:
        registration = selectors.registrations_public().filter(pk=registration_id).first()
        if registration is None:
            raise ApiError(
                status_code=404,
                code="not_found",
                message=f"No public registration {registration_id}: a registration is public once an entry uses it "
                "or its deadline has passed.",
            )
        return Response(PublicRegistrationSerializer(registration).data)
