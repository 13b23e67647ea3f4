"""The board rows' table leaves room in its pages (migration 0005), so a re-ranking rewrites rows in place."""

import pytest
from django.db import connection


@pytest.mark.django_db
def test_board_rows_keep_40_percent_of_each_page_free_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("fillfactor is PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'leaderboard_boardrow'")
        (options,) = cursor.fetchone()
    assert "fillfactor=60" in (options or [])
