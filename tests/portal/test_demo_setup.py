"""demo_setup, what scripts/run calls on every start: the demo account, packs with public data, a worker token."""

import pytest
from django.conf import settings
from django.core.management import call_command

from competitions.models import CompetitionPack
from runners.models import GpuWorker

pytestmark = pytest.mark.django_db


def test_it_gives_old_demo_packs_their_public_data_and_the_local_worker_a_token(monkeypatch):
    monkeypatch.setenv("PORTAL_DEMO_PACK_SIZE", "small")
    monkeypatch.setenv("PORTAL_DEMO_ENTRIES", "0")  # tests/portal/test_demo_entries.py seeds them
    call_command("demo_setup")
    token_file = settings.DATA_DIR / "worker-token"
    key = token_file.read_text().strip()
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    assert GpuWorker.objects.filter(name="local").exists()
    assert not CompetitionPack.objects.filter(public_archive_path="").exists()

    # Packs imported before packs kept their public data are imported again on the next start.
    CompetitionPack.objects.update(public_archive_path="", public_sha256="")
    call_command("demo_setup")
    assert not CompetitionPack.objects.filter(public_archive_path="").exists()
    assert token_file.read_text().strip() == key  # the local worker keeps its token across starts
