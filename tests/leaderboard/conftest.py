import pytest

from competitions.services import competitions_load


@pytest.fixture
def team(alice):
    competitions_load()
    return alice.teams.get()


@pytest.fixture
def bobs_team(bob):
    return bob.teams.get()
