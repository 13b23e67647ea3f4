import logging
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from competitions.models import CompetitionPack
from portal.accounts import services
from portal.accounts.models import Membership, Team
from portal.demo_entries import DemoEntriesUnavailable, demo_entries_seed
from portal.env import env_bool, env_str
from portal.private_files import private_folder
from runners.models import GpuWorker
from runners.services.workers import worker_token_issue

logger = logging.getLogger(__name__)

DEMO_EMAIL = "demo@example.org"
DEMO_TEAM = "Demo team"
LOCAL_WORKER = "local"


class Command(BaseCommand):
    help = (
        "Prepare a single-machine install on first start: a demo account (printed), competitions, demo packs "
        "and demo entries (PORTAL_DEMO_ENTRIES=0: none)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = settings.DATA_DIR / "demo-account.txt"
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(email__iexact=DEMO_EMAIL).first()
            if user is None or not credentials.exists():
                password = secrets.token_urlsafe(12)
                if user is None:
                    user = User.objects.create_user(username="demo", email=DEMO_EMAIL, password=password)
                else:
                    user.set_password(password)
                    user.save(update_fields=["password"])
                credentials.write_text(f"{DEMO_EMAIL}\n{password}\n")
                credentials.chmod(0o600)
            team = Team.objects.filter(name=DEMO_TEAM).first() or services.team_create(user=user, name=DEMO_TEAM)
            Membership.objects.get_or_create(team=team, user=user)
            services.maintainer_grant(user=user)
        email, password = credentials.read_text().split()
        self._load_competitions()
        self._local_worker_token()
        self._demo_entries()
        self.stdout.write(self.style.SUCCESS(f"Demo account (maintainer of '{DEMO_TEAM}'): {email} / {password}"))

    def _demo_entries(self) -> None:
        """Labelled demo entries through the real upload path, once (PORTAL_DEMO_ENTRIES=0: none)."""
        if not env_bool("PORTAL_DEMO_ENTRIES", True):
            return
        try:
            created = demo_entries_seed(log=self.stdout.write)
        except DemoEntriesUnavailable as exc:
            self.stdout.write(f"No demo entries: {exc}.")
            return
        except Exception as exc:  # the demo is a nicety: the portal starts without it, saying why
            logger.exception("demo entries not seeded")
            self.stderr.write(f"Demo entries not seeded ({type(exc).__name__}: {exc}); the portal starts without them.")
            return
        if created:
            self.stdout.write(
                f"Seeded {len(created)} demo entries (teams 'Demo - ...', synthetic demo data); the worker grades "
                "them in a few minutes: see /leaderboard/ and, for the one held for review, /review/."
            )

    def _load_competitions(self) -> None:
        """The registry on every start (a no-op when unchanged); synthetic Lite packs on the first one."""
        call_command("load_competitions")
        out = settings.DATA_DIR / "demo-packs"
        if CompetitionPack.objects.exists():
            if CompetitionPack.objects.filter(public_archive_path="").exists() and out.is_dir():
                # Imported before packs kept their public data, which hosted runs mount: import them again.
                call_command("import_competition_pack", str(out))
            return
        out = private_folder(out)  # synthetic, but answers all the same
        size = env_str("PORTAL_DEMO_PACK_SIZE", "small")
        self.stdout.write(f"First start: writing synthetic Lite competition packs ({size}) to {out} ...")
        call_command("make_demo_pack", "--split", "low", "--out", str(out), "--size", size, "--teams", "100")
        call_command("import_competition_pack", str(out))

    def _local_worker_token(self) -> None:
        """A token for the GPU worker scripts/run starts beside the web server (the process backend), kept in
        PORTAL_DATA_DIR/worker-token, readable by this user only."""
        token_file = settings.DATA_DIR / "worker-token"
        # The operator's own machine, started by the operator's own script: its hardware is approved as it
        # registers (runners/services/approval.py); every other worker waits for a maintainer.
        if token_file.exists() and GpuWorker.objects.filter(name=LOCAL_WORKER).update(auto_approve=True):
            return
        _, key = worker_token_issue(name=LOCAL_WORKER, trusted=True)
        token_file.write_text(key + "\n")
        token_file.chmod(0o600)
