"""The competition pages: the list sorted by name whatever the case, an unknown direction said in words."""

import re

import pytest

from competitions.models import Competition
from competitions.services import competitions_load


@pytest.fixture
def registry(db):
    competitions_load()


def _listed_slugs(page: str) -> list[str]:
    return re.findall(r'<td><a href="/competitions/([^/"]+)/">', page)


def test_competitions_are_sorted_by_name_ignoring_case(registry, client):
    Competition.objects.filter(slug="spooky-author-identification").update(name="beta: a lower-case name")
    Competition.objects.filter(slug="aerial-cactus-identification").update(name="Alpha")
    Competition.objects.filter(slug="denoising-dirty-documents").update(name="Zeta")
    slugs = _listed_slugs(client.get("/competitions/").content.decode())
    names = dict(Competition.objects.values_list("slug", "name"))
    assert len(slugs) == Competition.objects.filter(benchmark__is_current=True).count()
    assert [names[s] for s in slugs] == sorted((names[s] for s in slugs), key=str.lower)
    assert (
        slugs.index("aerial-cactus-identification")
        < slugs.index("spooky-author-identification")
        < slugs.index("denoising-dirty-documents")
    )


def test_an_unknown_direction_is_said_in_words_never_as_a_question_mark(registry, client):
    unknown = Competition.objects.filter(is_lower_better__isnull=True).first()
    known = Competition.objects.filter(is_lower_better=True).first()
    assert unknown is not None and known is not None
    page = client.get("/competitions/").content.decode()
    assert "? is better" not in page
    rows = {
        slug: row
        for slug, row in re.findall(r'<tr>\s*<td><a href="/competitions/([^/"]+)/">(.*?)</tr>', page, flags=re.S)
    }
    assert "direction unknown" in rows[unknown.slug] and "is better" not in rows[unknown.slug]
    assert "lower is better" in rows[known.slug]


def test_the_competition_page_says_an_unknown_direction_in_words(registry, client):
    unknown = Competition.objects.filter(is_lower_better__isnull=True).first()
    page = client.get(f"/competitions/{unknown.slug}/").content.decode()
    assert "which direction is better is unknown until a leaderboard is loaded" in page
    assert "? is better" not in page and "— is better" not in page
