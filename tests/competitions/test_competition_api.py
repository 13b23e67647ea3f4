import pytest
from rest_framework.test import APIClient

from competitions.services import competitions_load


@pytest.fixture
def registry(db):
    competitions_load()


def test_the_registry_is_public_and_filters_by_tier(registry):
    client = APIClient()
    everything = client.get("/api/v1/competitions/").json()
    assert everything["count"] == 82
    low = client.get("/api/v1/competitions/?tier=low").json()
    assert low["count"] == 22 and {c["tier"] for c in low["results"]} == {"low"}
    assert client.get("/api/v1/competitions/?split=split75").json()["count"] == 75


def test_a_competition_shows_metric_direction_thresholds_and_known_issues(registry):
    body = APIClient().get("/api/v1/competitions/denoising-dirty-documents/").json()
    assert body["id"] == "denoising-dirty-documents" and body["tier"] == "low"
    assert body["direction"] == "lower_is_better" and body["benchmark"] == "mle-bench v1"
    assert body["thresholds"]["median"] == 0.073265 or body["thresholds"]["median"] > 0
    assert body["thresholds"]["source"] == "kaggle" and body["gradable"] is False
    pizza = APIClient().get("/api/v1/competitions/random-acts-of-pizza/").json()
    assert any("leaks" in issue for issue in pizza["known_issues"])


def test_an_unknown_competition_is_a_json_404(registry):
    response = APIClient().get("/api/v1/competitions/nope/")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "No competition 'nope' in the current benchmark version."


def test_a_bad_filter_is_a_clear_400(registry):
    response = APIClient().get("/api/v1/competitions/?tier=lite")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "tier must be one of low, medium, high"


def test_the_pages_list_and_show_competitions(registry, client):
    listing = client.get("/competitions/?tier=low").content.decode()
    assert listing.count('href="/competitions/') >= 22 and "spooky-author-identification" in listing
    page = client.get("/competitions/ranzcr-clip-catheter-line-classification/").content.decode()
    assert "Medal thresholds" in page and "Known issues" in page
    assert client.get("/competitions/nope/").status_code == 404
