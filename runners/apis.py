"""Hosted runs API (SPEC section 6 and 7): teams ask, follow and cancel; GPU workers register, beat, claim,
check formats and hand back what they collected. Views validate, call one service or selector, serialize."""

import json
from typing import Any

from django.conf import settings
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.accounts.models import Team
from portal.accounts.selectors import signed_in_user, teams_for_user
from portal.api.exception_handler import ApiError
from runners import selectors
from runners.auth import IsWorker, WorkerTokenAuthentication
from runners.models import GpuWorker, HostedRun
from runners.services.hosted import (
    HostedRunRequest,
    hosted_run_cancel,
    hosted_run_create,
    hosted_task_cancel,
)
from runners.services.workers import (
    Capacity,
    public_data_open,
    task_claim,
    task_finish,
    task_format_check,
    worker_beat,
    worker_register,
)

# --- teams ---------------------------------------------------------------------------------------


class HostedRunCreateSerializer(serializers.Serializer):
    image = serializers.CharField(max_length=300)
    split = serializers.CharField(max_length=10)
    seeds = serializers.IntegerField()
    time_limit_hours = serializers.FloatField()
    gpus_per_run = serializers.IntegerField(default=0)
    env = serializers.DictField(child=serializers.CharField(allow_blank=True, trim_whitespace=False), default=dict)
    competitions = serializers.ListField(child=serializers.CharField(max_length=100), default=list, max_length=100)
    agent = serializers.DictField(default=dict)
    llms = serializers.ListField(child=serializers.CharField(max_length=100), default=list, max_length=20)
    notes = serializers.CharField(default="", allow_blank=True, max_length=5000)
    team = serializers.CharField(required=False, help_text="With a browser session in several teams: which one")


class HostedTaskSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    competition_id = serializers.CharField(source="competition.slug")
    seed = serializers.IntegerField()
    status = serializers.CharField()
    attempt = serializers.IntegerField()
    worker = serializers.CharField(source="worker.name", default=None)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    elapsed_seconds = serializers.FloatField(allow_null=True)
    exit_code = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField()
    output_tail = serializers.CharField()
    format_checks = serializers.IntegerField(source="format_check_count", default=0)


class HostedRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.CharField(source="team.name")
    status = serializers.CharField()
    status_reason = serializers.CharField()
    image = serializers.CharField()
    split = serializers.CharField()
    seeds = serializers.IntegerField()
    time_limit_hours = serializers.FloatField()
    gpus_per_run = serializers.IntegerField()
    env = serializers.SerializerMethodField(help_text="The variables' names only: their values are never shown")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    runs = HostedTaskSerializer(source="task_list", many=True)
    submission_id = serializers.IntegerField(allow_null=True)
    registration_id = serializers.IntegerField(
        allow_null=True, help_text="The registration the run made for itself; its nonce heads each run.log"
    )
    url = serializers.SerializerMethodField()

    def get_env(self, obj: HostedRun) -> list[str]:
        return list(obj.env_names)

    def get_url(self, obj: HostedRun) -> str:
        return self.context["request"].build_absolute_uri(reverse("hosted_run_detail", args=[obj.pk]))


def _team_for(request: Request, named: str | None) -> Team:
    token_team = getattr(request.auth, "team", None)
    if isinstance(token_team, Team):
        return token_team
    teams = list(teams_for_user(user=signed_in_user(request.user)))
    if named:
        teams = [t for t in teams if t.name == named]
    if len(teams) != 1:
        raise ApiError(
            status_code=400,
            code="team_required",
            message="Say which team asks: send 'team' with one of your teams' names, or use a team's API token.",
        )
    return teams[0]


class HostedRunListCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=HostedRunSerializer(many=True))
    def get(self, request: Request) -> Response:
        runs = selectors.hosted_run_list(user=signed_in_user(request.user), team=getattr(request.auth, "team", None))
        return Response(HostedRunSerializer(runs, many=True, context={"request": request}).data)

    @extend_schema(request=HostedRunCreateSerializer, responses={202: HostedRunSerializer})
    def post(self, request: Request) -> Response:
        body = HostedRunCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        team = _team_for(request, data.pop("team", None))
        run = hosted_run_create(
            team=team,
            user=signed_in_user(request.user),
            request=HostedRunRequest(
                **{**data, "competitions": tuple(data["competitions"]), "llms": tuple(data["llms"])}
            ),
        )
        run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=run.pk)
        return Response(HostedRunSerializer(run, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


class HostedRunDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=HostedRunSerializer)
    def get(self, request: Request, hosted_run_id: int) -> Response:
        run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=hosted_run_id)
        return Response(HostedRunSerializer(run, context={"request": request}).data)


class HostedRunCancelApi(APIView):
    """Cancel the whole run, or with `{"competition_id", "seed"}` one of its tasks."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=inline_serializer(
            "HostedRunCancel",
            {"competition_id": serializers.CharField(required=False), "seed": serializers.IntegerField(required=False)},
        ),
        responses=HostedRunSerializer,
    )
    def post(self, request: Request, hosted_run_id: int) -> Response:
        run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=hosted_run_id)
        competition_id, seed = _body(request).get("competition_id"), _body(request).get("seed")
        if competition_id is not None or seed is not None:
            tasks = run.task_list  # type: ignore[attr-defined]
            task = next((t for t in tasks if t.competition.slug == competition_id and t.seed == seed), None)
            if task is None:
                raise ApiError(
                    status_code=404,
                    code="not_found",
                    message=f"hosted run {run.pk} has no task ({competition_id}, seed {seed})",
                )
            if not hosted_task_cancel(task=task):
                raise ApiError(
                    status_code=409, code="not_cancellable", message=f"that task already ended: {task.status}"
                )
        elif not hosted_run_cancel(hosted_run=run) and run.status != HostedRun.Status.CANCELLED:
            raise ApiError(status_code=409, code="not_cancellable", message=f"the hosted run is already {run.status}")
        run = selectors.hosted_run_get(user=signed_in_user(request.user), hosted_run_id=hosted_run_id)
        return Response(HostedRunSerializer(run, context={"request": request}).data)


# --- workers -------------------------------------------------------------------------------------


def _body(request: Request) -> dict:
    """The request's fields (a JSON object or a form); anything else is a 400."""
    data = request.data
    if not hasattr(data, "get"):
        raise ApiError(status_code=400, code="invalid", message="the body must be a JSON object")
    return data  # type: ignore[return-value]


def _worker(request: Request) -> GpuWorker:
    worker = request.auth
    assert isinstance(worker, GpuWorker), "IsWorker lets only workers through"
    return worker


class _WorkerApi(APIView):
    authentication_classes = [WorkerTokenAuthentication]
    permission_classes = [IsWorker]
    throttle_classes: list = []  # a worker's calls are bounded by its tasks; a team's budget is not its concern


class MeasuredGpuSerializer(serializers.Serializer):
    model = serializers.CharField(allow_blank=True, max_length=100)
    memory_gb = serializers.FloatField(min_value=0, max_value=10_000)


class MeasuredSerializer(serializers.Serializer):
    """What the worker measured of itself (runners/worker/measure.py); shown to the maintainer who approves it."""

    gpus = serializers.ListField(child=MeasuredGpuSerializer(), max_length=64, required=False)
    gpu_source = serializers.CharField(allow_blank=True, max_length=200, default="")
    cpus = serializers.FloatField(min_value=0, max_value=100_000, required=False)
    memory_gb = serializers.FloatField(min_value=0, max_value=1_000_000, required=False)


class CapacitySerializer(serializers.Serializer):
    gpus = serializers.IntegerField(min_value=0, max_value=64)
    gpu_model = serializers.CharField(allow_blank=True, max_length=100, default="")
    gpu_memory_gb = serializers.FloatField(min_value=0, default=0)
    cpus = serializers.FloatField(min_value=0)
    memory_gb = serializers.FloatField(min_value=0)
    slots = serializers.IntegerField(min_value=1, max_value=256, default=1)
    backend = serializers.ChoiceField(choices=["process", "docker"])
    sandbox = serializers.ChoiceField(choices=["", "bwrap", "off"], default="")
    version = serializers.CharField(allow_blank=True, max_length=40, default="")
    measured = MeasuredSerializer(required=False)


class WorkerRegisterApi(_WorkerApi):
    @extend_schema(request=CapacitySerializer, responses=inline_serializer("WorkerRegistered", {}))
    def post(self, request: Request) -> Response:
        body = CapacitySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        measured = json.loads(json.dumps(data.pop("measured", {})))  # plain dicts and lists, for the JSON field
        worker = worker_register(worker=_worker(request), capacity=Capacity(**data, measured=measured))
        approved = worker.approved_at is not None
        return Response(
            {
                "worker": worker.name,
                "heartbeat_seconds": settings.HOSTED_HEARTBEAT_SECONDS,
                "approved": approved,
                "approval": "approved"
                if approved
                else "pending: a maintainer approves the hardware this worker declares on the portal's workers page; "
                "until then it takes no task",
            }
        )


MAX_RUNNING = 256  # a worker's most slots


class RunningSerializer(serializers.Serializer):
    task_id = serializers.IntegerField()
    attempt = serializers.IntegerField()
    elapsed_seconds = serializers.FloatField(min_value=0)
    output_tail = serializers.CharField(allow_blank=True, trim_whitespace=False, default="", max_length=65536)


class WorkerHeartbeatApi(_WorkerApi):
    @extend_schema(
        request=inline_serializer("Heartbeat", {"running": RunningSerializer(many=True)}),
        responses=inline_serializer("HeartbeatAnswer", {}),
    )
    def post(self, request: Request) -> Response:
        running = _body(request).get("running", [])
        if isinstance(running, list) and len(running) > MAX_RUNNING:
            raise ApiError(
                status_code=400,
                code="invalid",
                message=f"running: at most {MAX_RUNNING} tasks",
                details={"field": "running"},
            )
        body = RunningSerializer(data=running, many=True)
        body.is_valid(raise_exception=True)
        cancel = worker_beat(worker=_worker(request), running=list(body.validated_data))
        return Response({"cancel": cancel})


def _attempt(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError(status_code=400, code="invalid", message="attempt: a whole number is required") from None


class TaskClaimApi(_WorkerApi):
    @extend_schema(
        request=inline_serializer(
            "Claim",
            {
                "attempt": serializers.IntegerField(),
                "capability": serializers.CharField(help_text="The third argument of the attempt's queue message"),
            },
        ),
        responses={200: dict},
    )
    def post(self, request: Request, task_id: int) -> Response:
        body = _body(request)
        spec = task_claim(
            worker=_worker(request),
            task_id=task_id,
            attempt=_attempt(body.get("attempt")),
            capability=body.get("capability"),
            public_data_url=lambda slug: request.build_absolute_uri(reverse("api_worker_public_data", args=[slug])),
        )
        return Response(spec)


class TaskValidateApi(_WorkerApi):
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": dict}, responses={200: dict})
    def post(self, request: Request, task_id: int) -> Response:
        upload = request.FILES.get("file")
        if upload is None:
            raise ApiError(status_code=400, code="invalid", message="file: the submission to check is required")
        answer = task_format_check(
            worker=_worker(request), task_id=task_id, attempt=_attempt(_body(request).get("attempt")), upload=upload
        )
        return Response(answer)


class TaskFinishApi(_WorkerApi):
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(request={"multipart/form-data": dict}, responses={200: dict})
    def post(self, request: Request, task_id: int) -> Response:
        refused = ApiError(
            status_code=400,
            code="invalid",
            message="outcome: must be a JSON object, sent as text in the form field 'outcome'",
            details={"field": "outcome"},
        )
        text = _body(request).get("outcome") or "{}"
        if not isinstance(text, str):
            raise refused
        try:
            outcome = json.loads(text)
        except json.JSONDecodeError:
            raise refused from None
        if not isinstance(outcome, dict):
            raise refused
        task = task_finish(
            worker=_worker(request), task_id=task_id, outcome=outcome, archive=request.FILES.get("archive")
        )
        return Response({"task_id": task.pk, "status": task.status})


class PublicDataApi(_WorkerApi):
    @extend_schema(responses={(200, "application/gzip"): bytes})
    def get(self, request: Request, slug: str) -> FileResponse:
        handle, sha256, size = public_data_open(slug=slug)
        response = FileResponse(handle, content_type="application/gzip", as_attachment=True, filename=f"{slug}.tar.gz")
        response["X-Content-SHA256"] = sha256
        return response
