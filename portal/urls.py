from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from portal import views
from portal.api.apis import MeApi

api_v1: list[URLPattern | URLResolver] = [
    path("me/", MeApi.as_view(), name="api_me"),
    path("", include("competitions.api_urls")),
    path("", include("grading.api_urls")),
    path("", include("leaderboard.api_urls")),
    path("", include("runners.api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("status/", views.status_page, name="status"),
    path("accounts/", include("allauth.urls")),
    path("", include("portal.accounts.urls")),
    path("", include("leaderboard.urls")),
    path("", include("competitions.urls")),
    path("", include("grading.urls")),
    path("", include("runners.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # The split view serves its start-up script as a file (?script), so the page needs no inline script (CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
]

handler400 = "portal.views.bad_request"
handler403 = "portal.views.permission_denied"
handler404 = "portal.views.page_not_found"
handler429 = "portal.views.too_many_requests"  # read by allauth's rate limits
handler500 = "portal.views.server_error"
