"""The refresh task renders the board's most visited views for the new version, so that their first visitor
gets them from the cache, the same as a render of their own."""

import pytest
from django.core.cache import cache

from leaderboard import apis, tasks
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db

WARMED = ["/leaderboard/", "/leaderboard/?tier=low", "/api/v1/leaderboard/", "/api/v1/leaderboard/?board=all"]


def test_after_the_refresh_task_the_first_views_come_from_the_cache_as_rendered(
    client, team, django_assert_num_queries
):
    low = split_members("low")
    entry(team, agent="First", medals={s: low[:4] for s in range(3)})
    second = entry(team, agent="Second", medals={s: low[:2] for s in range(3)}, refresh=False)
    tasks.refresh_board(second.pk)
    warm = {}
    for url in WARMED:
        with django_assert_num_queries(1):  # the board's version, and nothing else
            response = client.get(url)
        assert response.status_code == 200
        warm[url] = response.content
    assert b"Second" in warm["/leaderboard/"] and b"First" in warm["/leaderboard/?tier=low"]
    cache.clear()
    apis._memo.clear()
    for url in WARMED:
        assert client.get(url).content == warm[url], url  # what a visitor would have rendered


def test_a_failure_to_warm_leaves_the_refresh_done(client, team, monkeypatch):
    submission = entry(team, agent="Still listed", refresh=False)

    def broken(query):
        raise RuntimeError("cache down")

    monkeypatch.setattr(tasks, "leaderboard_body", broken)
    tasks.refresh_board(submission.pk)
    assert b"Still listed" in client.get("/leaderboard/").content
