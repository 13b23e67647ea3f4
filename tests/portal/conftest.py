import uuid

import pytest


@pytest.fixture
def fresh_counters(settings):
    """Rate-limit counters of this test alone: the same Redis, under a key prefix no other test uses.

    Login and API counters are keyed by email address, account id and client address, which repeat across
    tests and test runs (the test database restarts its ids), and they outlive a test by their window.
    """
    settings.CACHES = {name: {**config, "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
                       for name, config in settings.CACHES.items()}
