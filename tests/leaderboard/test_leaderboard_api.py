"""GET /api/v1/leaderboard/: SPEC §6's row shape, boards and tiers, filters, errors in the API's shape."""

import pytest

from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db
SPEC_ROW = {
    "entry_id",
    "submission_id",
    "agent",
    "llms",
    "date",
    "runtime_hours",
    "hardware",
    "verified",
    "comparable",
    "tiers",
    "footnotes",
}
AGG = {"seeds", "any_medal", "gold", "silver", "bronze", "above_median", "valid_submission", "submission_exists"}


@pytest.fixture
def entries(team):
    low = split_members("low")
    return [
        entry(team, agent="Ranked", medals={s: low[:4] for s in range(3)}),
        entry(team, agent="Listed", medals={s: low[:1] for s in range(3)}, comparable=False),
    ]


def test_rows_have_the_spec_shape_with_aggregates_and_the_padded_marker(client, entries):
    body = client.get("/api/v1/leaderboard/?board=comparable&tier=low").json()
    assert body["board"] == "comparable" and body["tier"] == "low" and body["count"] == 1
    (row,) = body["rows"]
    assert SPEC_ROW <= row.keys()
    assert row["agent"] == "Ranked" and row["comparable"] is True and row["verified"] == "regraded"
    assert AGG <= row["tiers"]["low"].keys() and row["tiers"]["low"]["padded"] is False
    assert row["tiers"]["low"]["any_medal"]["mean"] == pytest.approx(400 / 22)
    assert row["rank"] == 1 and row["rank_low"] == 1 and row["rank_high"] == 1
    assert row["hardware"] == {"gpus": [{"model": "A10", "memory_gb": 24, "count": 1}], "vcpus": 36, "ram_gb": 440}


def test_board_all_lists_both_and_non_comparable_rows_have_no_rank(client, entries):
    rows = client.get("/api/v1/leaderboard/?board=all&tier=low").json()["rows"]
    assert [r["agent"] for r in rows] == ["Ranked", "Listed"]
    listed = client.get("/api/v1/leaderboard/?board=non_comparable&tier=low").json()["rows"]
    assert [r["agent"] for r in listed] == ["Listed"] and listed[0]["rank"] is None
    assert listed[0]["footnotes"] == ["Non-comparable: a test reason."]


def test_filters_sort_and_pages_work_as_on_the_page(client, entries):
    assert client.get("/api/v1/leaderboard/?board=all&tier=low&sort=any_medal").json()["rows"][0]["agent"] == "Listed"
    page = client.get("/api/v1/leaderboard/?board=all&tier=low&page_size=1&page=2").json()
    assert page["pages"] == 2 and page["page"] == 2 and [r["agent"] for r in page["rows"]] == ["Listed"]
    assert client.get("/api/v1/leaderboard/?board=all&tier=medium").json()["rows"] == []


def test_a_bad_parameter_is_a_400_in_the_api_error_shape(client, entries):
    response = client.get("/api/v1/leaderboard/?board=best")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid",
        "details": {"field": "board"},
        "message": "board must be one of comparable, non_comparable, all (got 'best')",
    }


def test_a_new_publication_is_seen_at_once_despite_the_cache(client, team):
    assert client.get("/api/v1/leaderboard/?tier=low").json()["count"] == 0
    entry(team, agent="Fresh")
    assert client.get("/api/v1/leaderboard/?tier=low").json()["count"] == 1


def test_the_schema_documents_the_endpoint(client):
    schema = client.get("/api/schema/").content.decode()
    assert "/api/v1/leaderboard/" in schema and "excluding_leaky" in schema


ODD_PAGING = [
    ("page", "9223372036854775807"),
    ("page", "9" * 400),
    ("page_size", "9" * 400),
    ("page", "-1"),
    ("page", "0"),
    ("page", "two"),
    ("page", "1e3"),
    ("page", "\u00b2"),  # a digit to str.isdigit, not to int()
    ("page", "1_0"),
    ("page_size", "1001"),
    ("page_size", "0"),
]


@pytest.mark.parametrize("name, value", ODD_PAGING)
def test_an_odd_page_or_page_size_is_a_400_that_names_it(client, entries, name, value):
    response = client.get("/api/v1/leaderboard/", {"board": "all", name: value})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["details"] == {"field": name} and error["message"].startswith(f"{name} must be a whole number")
    assert len(error["message"]) < 200  # a 400-digit value is not echoed whole


def test_a_page_past_the_last_is_empty_and_says_how_many_there_are(client, entries):
    body = client.get("/api/v1/leaderboard/?board=all&tier=low&page=1000000").json()
    assert body["rows"] == [] and body["pages"] == 1 and body["count"] == 2


@pytest.mark.parametrize("name", ["llm", "hardware"])
def test_a_control_character_in_a_search_is_a_400_not_a_database_error(client, entries, name):
    response = client.get("/api/v1/leaderboard/", {name: "a\x00b"})
    assert response.status_code == 400 and response.json()["error"]["details"] == {"field": name}
    assert client.get("/leaderboard/", {name: "a\x00b"}).status_code == 400
