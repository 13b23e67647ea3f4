"""The review API (SPEC §6): maintainers' queue of flags and their decisions on flags and entries, re-grades,
and the public list of decisions; the submission API is grading/apis.py."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading import selectors
from grading.apis import FlagSerializer, SubmissionSerializer
from grading.models import Decision, Flag, ReviewEvent, Submission
from grading.services.regrade import submission_regrade, submissions_regrade_all
from grading.services.review import entry_decide, flag_decide
from portal.accounts.selectors import is_maintainer, signed_in_user
from portal.api.exception_handler import ApiError
from portal.ids import parse_id


class MaintainerOnly(IsAuthenticated):
    message = "Only maintainers can do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return super().has_permission(request, view) and is_maintainer(request.user)


class SubmissionRegradeApi(APIView):
    permission_classes = [MaintainerOnly]

    @extend_schema(request=None, responses={202: OpenApiResponse(description="queued")})
    def post(self, request: Request, submission_id: int) -> Response:
        submission = selectors.submission_get(user=request.user, submission_id=submission_id)
        if not submission_regrade(submission_id=submission.pk, actor=signed_in_user(request.user)):
            raise ApiError(
                status_code=409,
                code="not_regradable",
                message=f"Submission {submission.pk} is {submission.status}; only in_review, published or "
                "failed submissions can be re-graded.",
            )
        return Response({"id": submission.pk, "status": "grading"}, status=status.HTTP_202_ACCEPTED)


class SubmissionRegradeAllApi(APIView):
    permission_classes = [MaintainerOnly]

    @extend_schema(request=None, responses={202: OpenApiResponse(description="queued")})
    def post(self, request: Request) -> Response:
        return Response({"queued": submissions_regrade_all()}, status=status.HTTP_202_ACCEPTED)


class ReviewerOnly(MaintainerOnly):
    """Maintainers only; anyone else, signed in or not, gets 403 and learns nothing about the queue."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not super().has_permission(request, view):
            raise exceptions.PermissionDenied(self.message)
        return True


class ReviewFlagSerializer(FlagSerializer):
    submission_id = serializers.IntegerField()
    team = serializers.CharField(source="submission.team.name")
    created_at = serializers.DateTimeField()
    decided_by = serializers.CharField(source="decided_by.username", default=None)
    private_evidence = serializers.JSONField(
        help_text="Maintainer-only: what names other teams' unpublished work (never in the public API)"
    )
    own_team = serializers.SerializerMethodField(
        help_text="The entry is of a team you belong to (or you made it): another maintainer decides"
    )

    def get_own_team(self, obj: Flag) -> bool:
        viewer = self.context.get("viewer")
        own = self.context.get("own_teams")
        return viewer is not None and selectors.is_own_entry(user=viewer, submission=obj.submission, own_teams=own)


class DecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Decision.choices)
    reason = serializers.CharField(allow_blank=True, help_text="Shown publicly in the entry's audit trail")


class QueueFilterSerializer(serializers.Serializer):
    code = serializers.CharField(required=False, default="")
    severity = serializers.ChoiceField(choices=["blocking", "warning"], required=False, default="")
    team = serializers.CharField(required=False, default="", help_text="a team's id or name")
    older_than_days = serializers.IntegerField(required=False, min_value=0, max_value=3650, default=None)

    def validate_team(self, value: str) -> str:
        if value and not selectors.teams_matching(value):
            raise serializers.ValidationError(f"no team has the id or the name {value!r}.")
        return value


def _queue_filters(request: Request) -> dict:
    filters = QueueFilterSerializer(data=request.query_params)
    if not filters.is_valid():
        field, problems = next(iter(filters.errors.items()))
        raise ApiError(
            status_code=400,
            code="invalid",
            message=f"{field}: {problems[0]}",
            details={"field": field, field: problems},
        )
    return filters.validated_data


class ReviewFlagListApi(APIView):
    permission_classes = [ReviewerOnly]

    @extend_schema(parameters=[QueueFilterSerializer], responses=ReviewFlagSerializer(many=True))
    def get(self, request: Request) -> Response:
        flags = selectors.open_flags(**_queue_filters(request)).select_related("decided_by")[:1000]
        context = {"viewer": request.user, "own_teams": selectors.own_team_ids(request.user)}
        return Response(ReviewFlagSerializer(flags, many=True, context=context).data)


DECISION_ERRORS = {
    400: OpenApiResponse(description="no reason, or an unknown decision"),
    403: OpenApiResponse(description="not a maintainer, or a maintainer of the entry's team (code own_team)"),
    404: OpenApiResponse(description="no such flag or submission"),
    409: OpenApiResponse(description="the submission is neither in review nor published"),
}


class ReviewFlagDecisionApi(APIView):
    permission_classes = [ReviewerOnly]

    @extend_schema(request=DecisionSerializer, responses={200: ReviewFlagSerializer, **DECISION_ERRORS})
    def post(self, request: Request, flag_id: int) -> Response:
        body = DecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        flag = flag_decide(flag_id=flag_id, actor=signed_in_user(request.user), **body.validated_data)
        flag = Flag.objects.select_related("submission__team", "decided_by").get(pk=flag.pk)
        return Response(ReviewFlagSerializer(flag, context={"viewer": request.user}).data)


class ReviewSubmissionDecisionApi(APIView):
    permission_classes = [ReviewerOnly]

    @extend_schema(request=DecisionSerializer, responses={200: SubmissionSerializer, **DECISION_ERRORS})
    def post(self, request: Request, submission_id: int) -> Response:
        body = DecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        submission = entry_decide(
            submission_id=submission_id, actor=signed_in_user(request.user), **body.validated_data
        )
        return Response(SubmissionSerializer(submission, context={"request": request}).data)


class PublicDecisionSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    team = serializers.CharField(source="submission.team.name")
    status = serializers.CharField(source="submission.status", help_text="the submission's status now")
    decision = serializers.CharField()
    reason = serializers.CharField()
    flag = serializers.SerializerMethodField(help_text="the flag decided (code and severity), or null: the entry")
    decided_by = serializers.CharField(source="actor.username", default=None)
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField(help_text="the submission's public page, once published")

    def get_flag(self, obj: ReviewEvent) -> dict | None:
        return {"id": obj.flag.pk, "code": obj.flag.code, "severity": obj.flag.severity} if obj.flag else None

    def get_url(self, obj: ReviewEvent) -> str | None:
        if obj.submission.status != Submission.Status.PUBLISHED:
            return None
        request = self.context.get("request")
        path = f"/api/v1/submissions/{obj.submission_id}/"
        return request.build_absolute_uri(path) if request else path


def page_number(request: Request) -> int:
    value = request.query_params.get("page", "1")
    page = parse_id(value)
    if page is None:
        raise ApiError(
            status_code=400,
            code="invalid",
            message=f"page={value!r}: a page is a whole number from 1.",
            details={"field": "page"},
        )
    return page


class DecisionListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[inline_serializer("DecisionsQuery", {"page": serializers.IntegerField(required=False)})],
        responses=inline_serializer(
            "DecisionsPage",
            {
                "count": serializers.IntegerField(),
                "page": serializers.IntegerField(),
                "pages": serializers.IntegerField(),
                "results": PublicDecisionSerializer(many=True),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        found = selectors.public_decisions(page=page_number(request))
        results = PublicDecisionSerializer(found.decisions, many=True, context={"request": request}).data
        return Response({"count": found.count, "page": found.page, "pages": found.pages, "results": results})
