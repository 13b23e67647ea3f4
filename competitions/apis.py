from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from competitions import selectors
from competitions.models import Competition
from grading.engine.tiers import COMPETITION_TIERS as TIERS
from grading.engine.tiers import REGISTRY_SPLITS as SPLITS
from portal.api.exception_handler import ApiError


class ThresholdsSerializer(serializers.Serializer):
    gold = serializers.FloatField(source="gold_threshold")
    silver = serializers.FloatField(source="silver_threshold")
    bronze = serializers.FloatField(source="bronze_threshold")
    median = serializers.FloatField(source="median_threshold")
    is_lower_better = serializers.BooleanField()
    leaderboard_teams = serializers.SerializerMethodField()
    # DRF's serializer metaclass pops declared fields off the class, so this never shadows Field.source.
    source = serializers.CharField(source="leaderboard_source")  # type: ignore[assignment]
    from_official_report = serializers.BooleanField(source="thresholds_from_official_report")

    def get_leaderboard_teams(self, competition: Competition) -> int:
        return len(competition.leaderboard_scores)


class CompetitionSerializer(serializers.Serializer):
    id = serializers.CharField(source="slug")
    name = serializers.CharField()
    benchmark = serializers.CharField()
    tier = serializers.CharField()
    splits = serializers.ListField(child=serializers.CharField())
    category = serializers.CharField()
    metric = serializers.CharField()
    metric_family = serializers.CharField()
    direction = serializers.SerializerMethodField()
    thresholds = serializers.SerializerMethodField()
    leaderboard_source = serializers.SerializerMethodField(
        help_text="The leaderboard in force: kaggle (shipped), pack (the pack's own leaderboard.csv), simulated "
        "(for the synthetic answers) or none (medals unknown)"
    )
    leaderboard = serializers.CharField(source="leaderboard_label", help_text="The same, in words")
    medals_known = serializers.BooleanField(source="has_thresholds")
    grader = serializers.SerializerMethodField()
    gradable = serializers.SerializerMethodField()
    submission_columns = serializers.ListField(child=serializers.CharField())
    validation_rules = serializers.ListField(child=serializers.CharField())
    known_issues = serializers.ListField(child=serializers.CharField())
    deviations = serializers.CharField()

    def get_direction(self, competition: Competition) -> str:
        lower = (
            competition.is_lower_better if competition.is_lower_better is not None else not competition.higher_is_better
        )
        return "lower_is_better" if lower else "higher_is_better"

    def get_thresholds(self, competition: Competition) -> dict | None:
        return ThresholdsSerializer(competition).data if competition.has_thresholds else None

    def get_leaderboard_source(self, competition: Competition) -> str:
        return competition.leaderboard_source or "none"

    def get_grader(self, competition: Competition) -> str | None:
        pack = getattr(competition, "pack", None)
        return (pack.grader_name if pack and pack.grader_name else competition.grader_name) or None

    def get_gradable(self, competition: Competition) -> bool:
        # Without a leaderboard a competition is graded all the same, with its medals unknown.
        return hasattr(competition, "pack") and bool(self.get_grader(competition))


class CompetitionListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("tier", enum=list(TIERS), required=False),
            OpenApiParameter("split", enum=list(SPLITS), required=False),
        ],
        responses=CompetitionSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        tier, split = request.query_params.get("tier"), request.query_params.get("split")
        if tier and tier not in TIERS:
            raise ApiError(status_code=400, code="invalid", message=f"tier must be one of {', '.join(TIERS)}")
        if split and split not in SPLITS:
            raise ApiError(status_code=400, code="invalid", message=f"split must be one of {', '.join(SPLITS)}")
        competitions = selectors.competition_list(tier=tier, split=split)
        return Response({"count": len(competitions), "results": CompetitionSerializer(competitions, many=True).data})


class CompetitionDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=CompetitionSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(CompetitionSerializer(selectors.competition_get(slug=slug)).data)
