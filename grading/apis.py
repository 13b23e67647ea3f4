"""Submissions API (SPEC §6): upload a bundle, follow it, read results and the server's grading report."""

import json
import logging

from django.conf import settings
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading import selectors
from grading.bundles.seeds import RULE_TEXT
from grading.engine_wheel import EngineWheel, WheelBuildFailed, engine_wheel
from grading.models import Submission
from grading.services.intake import submission_create
from portal.accounts.models import Team
from portal.accounts.selectors import signed_in_user, teams_for_user
from portal.api.exception_handler import ApiError
from portal.ids import parse_id

logger = logging.getLogger(__name__)


def _too_large() -> ApiError:
    return ApiError(
        status_code=413,
        code="too_large",
        message=f"The bundle is larger than the limit of {settings.BUNDLE_MAX_BYTES} bytes.",
    )


class FlagSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    severity = serializers.CharField()
    tiers = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField()
    evidence = serializers.JSONField()
    resolution = serializers.CharField()
    decision = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)


class ReviewEventSerializer(serializers.Serializer):
    kind = serializers.CharField()
    decision = serializers.CharField()
    reason = serializers.CharField()
    flag_id = serializers.IntegerField(allow_null=True)
    actor = serializers.CharField(source="actor.username", default=None)
    created_at = serializers.DateTimeField()


class SubmissionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.CharField(source="team.name")
    status = serializers.CharField()
    status_reason = serializers.CharField()
    created_at = serializers.DateTimeField()
    manifest = serializers.JSONField()
    report_only = serializers.BooleanField()
    progress = serializers.SerializerMethodField()
    flags = serializers.SerializerMethodField()
    aggregates = serializers.SerializerMethodField()
    aggregation_version = serializers.CharField()
    comparable = serializers.BooleanField()
    review_decision = serializers.CharField()
    review_reason = serializers.CharField()
    replaces = serializers.IntegerField(source="replaces_id", allow_null=True)
    registration = serializers.IntegerField(
        source="registration_id", allow_null=True, help_text="The registration its manifest names; null: none"
    )
    review_trail = serializers.SerializerMethodField()
    seed_rule = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="this resource in the API")
    page_url = serializers.SerializerMethodField(help_text="the submission's page, to open in a browser")

    def get_progress(self, obj: Submission) -> dict:
        return {"done": obj.progress_done, "total": obj.progress_total}

    def get_flags(self, obj: Submission) -> list:
        # drf-stubs type Serializer(many=True) as the serializer itself; it builds a ListSerializer (data: a list).
        return FlagSerializer(obj.flags.all(), many=True).data  # type: ignore[return-value]

    def get_aggregates(self, obj: Submission) -> dict:
        return selectors.submission_aggregates(obj)

    def get_review_trail(self, obj: Submission) -> list:
        # As in get_flags: a ListSerializer, whose data is a ReturnList.
        return ReviewEventSerializer(selectors.review_events(obj), many=True).data  # type: ignore[return-value]

    def get_seed_rule(self, obj: Submission) -> str:
        return RULE_TEXT

    def get_url(self, obj: Submission) -> str:
        request = self.context.get("request")
        path = f"/api/v1/submissions/{obj.pk}/"
        return request.build_absolute_uri(path) if request else path

    def get_page_url(self, obj: Submission) -> str:
        request = self.context.get("request")
        path = reverse("submission_detail", args=[obj.pk])
        return request.build_absolute_uri(path) if request else path


def _team_for_upload(request: Request) -> Team:
    token = request.auth if hasattr(request.auth, "team") else None
    if token is not None:
        return token.team
    teams = teams_for_user(user=signed_in_user(request.user))  # an upload needs IsAuthenticated
    wanted = request.query_params.get("team")
    if wanted:
        team_id = parse_id(wanted)
        team = teams.filter(pk=team_id).first() if team_id is not None else None
        if team is None:
            shown = repr(wanted) if len(wanted) <= 40 else f"{wanted[:20]!r}… ({len(wanted)} characters)"
            raise ApiError(
                status_code=400,
                code="invalid",
                message=f"team={shown} is not one of your teams' ids.",
                details={"field": "team"},
            )
        return team
    if teams.count() != 1:
        raise ApiError(
            status_code=400,
            code="team_required",
            message="Say which team submits: use a token of that team, or ?team=<id>.",
        )
    return teams.get()


def _replaces_id(request: Request) -> int | None:
    # A multipart body parses to a QueryDict, a dict; only a JSON body could be a list.
    body = request.data if isinstance(request.data, dict) else {}
    value = str(body.get("replaces") or request.query_params.get("replaces") or "").strip()
    if not value:
        return None
    replaces_id = parse_id(value)
    if replaces_id is None:
        shown = repr(value) if len(value) <= 40 else f"{value[:20]!r}… ({len(value)} characters)"
        raise ApiError(
            status_code=400,
            code="invalid_replaces",
            message=f"replaces={shown} is not a submission id.",
            details={"field": "replaces"},
        )
    return replaces_id


class SubmissionListCreateApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "uploads"  # its POST counts against API_RATE_UPLOADS (portal/api/throttles.py)

    @extend_schema(responses=SubmissionSerializer(many=True))
    def get(self, request: Request) -> Response:
        token = request.auth if hasattr(request.auth, "team") else None
        queryset = selectors.submissions_of_teams(user=signed_in_user(request.user))  # IsAuthenticated
        if token is not None:
            queryset = queryset.filter(team=token.team)
        return Response(
            SubmissionSerializer(
                queryset.prefetch_related("flags", "aggregates")[:200], many=True, context={"request": request}
            ).data
        )

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "BundleUpload",
                {
                    "bundle": serializers.FileField(),
                    "replaces": serializers.IntegerField(
                        required=False,
                        help_text=("The id of the team's submission in changes_requested that this upload replaces"),
                    ),
                },
            )
        },
        responses={
            202: inline_serializer(
                "SubmissionAccepted",
                {
                    "id": serializers.IntegerField(),
                    "status": serializers.CharField(),
                    "url": serializers.CharField(),
                    "page_url": serializers.CharField(),
                },
            ),
            400: OpenApiResponse(description="bad bundle"),
            413: OpenApiResponse(description="too large"),
            429: OpenApiResponse(description="over the daily quota"),
        },
    )
    def post(self, request: Request) -> Response:
        length = request.META.get("CONTENT_LENGTH")
        if length and length.isascii() and length.isdigit() and int(length) > settings.BUNDLE_MAX_BYTES + 1024 * 1024:
            raise _too_large()
        team = _team_for_upload(request)
        upload = request.FILES.get("bundle")
        if getattr(request._request, "bundle_too_large", False):
            raise _too_large()
        if upload is None:
            raise ApiError(
                status_code=400,
                code="bundle_required",
                message="Send the bundle as the multipart/form-data field 'bundle'.",
            )
        submission = submission_create(
            team=team, user=signed_in_user(request.user), upload=upload, replaces_id=_replaces_id(request)
        )
        url = request.build_absolute_uri(f"/api/v1/submissions/{submission.pk}/")
        page_url = request.build_absolute_uri(reverse("submission_detail", args=[submission.pk]))
        return Response(
            {"id": submission.pk, "status": submission.status, "url": url, "page_url": page_url},
            status=status.HTTP_202_ACCEPTED,
        )


class SubmissionDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=SubmissionSerializer)
    def get(self, request: Request, submission_id: int) -> Response:
        submission = selectors.submission_get(user=request.user, submission_id=submission_id)
        return Response(SubmissionSerializer(submission, context={"request": request}).data)


class SubmissionResultsApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        responses=inline_serializer(
            "RunResult",
            {
                "competition_id": serializers.CharField(),
                "seed": serializers.IntegerField(),
                "run_group": serializers.CharField(),
                "run_id": serializers.CharField(),
                "claimed": serializers.JSONField(),
                "regraded": serializers.JSONField(),
                "status": serializers.CharField(),
                "grader_version": serializers.CharField(),
                "grading_error": serializers.CharField(
                    allow_null=True, help_text="Why the server could not grade the run (an error of ours); null: none"
                ),
            },
            many=True,
        )
    )
    def get(self, request: Request, submission_id: int) -> Response:
        submission = selectors.submission_get(user=request.user, submission_id=submission_id)
        rows = [
            {
                "competition_id": run.competition.slug,
                "seed": run.seed,
                "run_group": run.run_group,
                "run_id": run.run_id,
                "claimed": run.claimed,
                "regraded": run.regraded,
                "status": run.status,
                "grader_version": run.grader_version,
                "grading_error": run.grading_error or None,
            }
            for run in selectors.submission_runs(submission)
        ]
        return Response({"submission_id": submission.pk, "results": rows})


class SubmissionGradingReportApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=OpenApiResponse(description="MLE-bench grading report JSON"))
    def get(self, request: Request, submission_id: int) -> HttpResponse:
        submission = selectors.submission_get(user=request.user, submission_id=submission_id)
        # Written as MLE-bench writes its reports (json.dump, indent 2, NaN for a NaN score), which the API's
        # strict JSON renderer would refuse; a file to download and feed to MLE-bench's own scripts.
        body = json.dumps(selectors.submission_grading_report(submission), indent=2)
        response = HttpResponse(body, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="submission-{submission.pk}_grading_report.json"'
        return response


# --- the engine's wheel (SPEC section 8) ---------------------------------------------------------


class EngineSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="ENGINE_VERSION, the wheel's version, as recorded in every evidence")
    wheel = serializers.CharField(help_text="The wheel's file name")
    url = serializers.URLField(help_text="Where to download it: pip install <url>")
    sha256 = serializers.CharField(help_text="The wheel's SHA-256")


class EngineApi(APIView):
    """The engine's wheel (mle-portal-engine): every number the portal publishes, computable offline with it."""

    permission_classes = [AllowAny]

    @extend_schema(responses=EngineSerializer)
    def get(self, request: Request) -> Response:
        wheel = _engine_wheel_or_refuse()
        url = request.build_absolute_uri(reverse("engine_download", args=[wheel.wheel]))
        return Response({"version": wheel.version, "wheel": wheel.wheel, "url": url, "sha256": wheel.sha256})


def _engine_wheel_or_refuse() -> EngineWheel:
    try:
        return engine_wheel()
    except WheelBuildFailed:
        logger.exception("the engine's wheel could not be built")
        raise ApiError(
            status_code=503, code="engine_unavailable", message="The engine's wheel could not be built; try later."
        ) from None
