"""Fixtures the review tests share: a flagged entry of Alice's team, and a maintainer's API client."""

import pytest
from rest_framework.test import APIClient

from competitions.services import competitions_load
from tests.grading.builders import flagged_submission


@pytest.fixture
def entry(db, alice):
    competitions_load()
    return flagged_submission(alice.teams.get(), user=alice)


@pytest.fixture
def maintainer_api(maintainer):
    client = APIClient()
    client.force_authenticate(maintainer)
    return client
