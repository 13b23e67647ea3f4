"""The portal's URLs plus views that fail, for the error-page tests."""

from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from portal.urls import handler400, handler403, handler404, handler500, urlpatterns  # noqa: F401

SECRET = "kaboom-db-password-in-an-exception"


def failing_page(request):
    raise RuntimeError(SECRET)


class FailingApi(APIView):
    permission_classes = [AllowAny]

    def get(self, request):
        raise RuntimeError(SECRET)


urlpatterns = [
    path("failing/", failing_page),
    path("api/v1/failing/", FailingApi.as_view()),
    *urlpatterns,
]
