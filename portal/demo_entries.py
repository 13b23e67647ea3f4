"""Demo entries on a fresh portal: a few labelled entries made the way a team makes one.

Each entry is a real Lite bundle of the simulated agent (competitions.demo) against the installed synthetic packs,
uploaded through the intake service the API uses (grading.services.intake.submission_create), then validated,
graded and checked by the Celery worker like any upload. So a fresh board shows entries that prove the pipeline
works, and the review queue has one entry to judge.

The data is clean on purpose (no check should warn about the demo's own making): every team writes its code in
a style of its own (no near-identical code across teams), every seed is its own agent seed (no identical files
across seeds or teams), qualities stay where an honest agent's do (no answer copy, no implausible score), and no
entry medals on a competition with a known test-label leak (that warning is about the leak, not the agent).
One entry, "Demo - Shortcut Inc", is meant to be caught: its code reads the private answers, a blocking
test_set_feedback flag, so it waits in the review queue.

One entry, "Demo - Blend Studio", is a registered run group (SPEC section 9): its team registers it (through
registration_create, as a team would with mleportal register) before its bundle is written, each run's log holds
the registration's nonce, and the manifest names the registration, so it reaches the *registered* evidence level.
The others are uploads without a registration: *reported*.
"""

from __future__ import annotations

import shutil
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone

from competitions.demo.catalog import split_ids
from competitions.demo.runs import DEFAULT_CREATED_AT, default_manifest, write_run_bundle, write_run_group
from competitions.models import Competition, CompetitionPack, KnownIssue
from competitions.selectors import current_benchmark, grading_setup
from grading.engine.csvio import load_answers
from grading.models import Registration, Submission
from grading.services.intake import submission_create
from grading.services.registrations import registration_create
from portal.accounts import services
from portal.accounts.models import Team

SPLIT = "low"
NOTES = (
    "Synthetic demo data: a simulated agent (competitions.demo) graded on synthetic packs, seeded by "
    "manage.py demo_setup on the first start of ./scripts/run (PORTAL_DEMO_ENTRIES=0 turns it off). "
    "Not a real agent's result."
)
LEAK_QUALITY = 0.2  # on a competition with a known test-label leak: well below the median, so no medal
# The best an entry gets on any competition: an honest agent's, well short of the answers. Beyond about 0.85 the
# simulated agent's small-pack scores come near perfect (mlsp-2013-birds' AUC of 1) or far beyond the simulated
# gold (nomad2018), which implausible_score rightly warns about.
TOP_QUALITY = 0.78
JITTER = 0.06


@dataclass(frozen=True)
class DemoEntry:
    team: str
    username: str
    agent: str
    version: str
    quality: float  # the simulated agent's share of rows right, around which each competition varies
    seeds: tuple[int, int, int]  # the agent's own seeds: distinct per entry, so no two entries share a file
    style: str  # competitions.demo.solutions.STYLES: distinct per team, so no two teams share code
    flagged: bool = False
    registered: bool = False  # pre-registered: a registration made before its bundle, its nonce in every log

    @property
    def key(self) -> str:
        return f"{self.team}/{self.agent}/{self.version}"


ENTRIES: tuple[DemoEntry, ...] = (
    DemoEntry("Demo - Prior Baseline", "demo-baseline", "Demo prior baseline", "1.0", 0.3, (11, 12, 13), "baseline"),
    DemoEntry("Demo - Gradient Works", "demo-gradient", "Demo boosted trees", "1.0", 0.42, (21, 22, 23), "boosting"),
    DemoEntry("Demo - Gradient Works", "demo-gradient", "Demo boosted trees", "2.0", 0.5, (24, 25, 26), "boosting"),
    DemoEntry(
        "Demo - Blend Studio", "demo-blend", "Demo CV blend", "1.0", 0.62, (31, 32, 33), "ensemble", registered=True
    ),
    DemoEntry(
        "Demo - Shortcut Inc", "demo-shortcut", "Demo shortcut agent", "1.0", 0.55, (41, 42, 43), "shortcut", True
    ),
)


class DemoEntriesUnavailable(Exception):
    """The portal cannot seed demo entries (no benchmark, or the Lite packs are not the synthetic ones)."""


def demo_entries_seed(*, entries: tuple[DemoEntry, ...] | None = None, log: Callable[[str], None] = print) -> list[int]:
    """Upload each demo entry not uploaded yet (by team, agent and version) and return the new submission ids.

    Safe on every start: an entry already there, in whatever state, is not uploaded again. The pipeline runs on
    the worker; nothing here waits for it.
    """
    pending = [entry for entry in (ENTRIES if entries is None else entries) if not _uploaded(entry)]
    if not pending:
        return []
    ids = split_ids(SPLIT)
    answers = lite_answers(ids)
    leaky = leaky_competitions(ids)
    created = []
    work = Path(tempfile.mkdtemp(prefix="demo-entries-", dir=settings.DATA_DIR))
    try:
        for entry in pending:
            team, user = _team(entry)
            registration = _registration(entry=entry, team=team, user=user, ids=ids) if entry.registered else None
            bundle = _bundle(
                entry=entry, ids=ids, answers=answers, leaky=leaky, out=work / entry.username, registration=registration
            )
            submission = _upload(team=team, user=user, bundle=bundle)
            created.append(submission.pk)
            shutil.rmtree(work / entry.username, ignore_errors=True)
            log(f"Demo entry {submission.pk}: {entry.team}, {entry.agent} {entry.version} (queued for grading)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return created


def _uploaded(entry: DemoEntry) -> bool:
    return Submission.objects.filter(
        team__name=entry.team, manifest__agent__name=entry.agent, manifest__agent__version=entry.version
    ).exists()


def lite_answers(ids: list[str]) -> Callable[[str], pd.DataFrame]:
    """The installed answers of these competitions, loaded once each; only the demo's synthetic packs."""
    benchmark = current_benchmark()
    if benchmark is None:
        raise DemoEntriesUnavailable("no benchmark is loaded")
    competitions = {c.slug: c for c in Competition.objects.filter(benchmark=benchmark, slug__in=ids)}
    synthetic = set(
        CompetitionPack.objects.filter(competition__in=competitions.values(), synthetic=True).values_list(
            "competition__slug", flat=True
        )
    )
    missing = sorted(set(ids) - synthetic)
    if missing:
        raise DemoEntriesUnavailable(
            f"{len(missing)} Lite competition(s) have no synthetic pack (e.g. {missing[0]}); demo entries are made "
            "only against the demo's own packs"
        )
    cache: dict[str, pd.DataFrame] = {}

    def load(slug: str) -> pd.DataFrame:
        if slug not in cache:
            loaded = load_answers(grading_setup(competitions[slug])[0])
            cache[slug] = loaded if isinstance(loaded, pd.DataFrame) else pd.DataFrame(loaded)
        return cache[slug]

    return load


def leaky_competitions(ids: list[str]) -> set[str]:
    """Those of these competitions with a known test-label leak (the KnownIssue table maintainers edit)."""
    return set(
        KnownIssue.objects.filter(kind="leak", competition_slug__in=ids).values_list("competition_slug", flat=True)
    )


def qualities(
    *, level: float, key: str, ids: list[str], leaky: set[str], jitter: float = JITTER, top: float = TOP_QUALITY
) -> dict[str, float]:
    """The agent's quality per competition: ``level``, varied by up to ±``jitter`` per competition (fixed by
    ``key``), at most ``top``, and LEAK_QUALITY where the competition has a known leak: an honest agent does not
    medal there, so its entry raises no known_leaky_competition warning."""
    out = {}
    for slug in ids:
        if slug in leaky:
            out[slug] = min(level, LEAK_QUALITY)
            continue
        shift = (zlib.crc32(f"{key}/{slug}".encode()) % 1001) / 1000 * 2 * jitter - jitter
        out[slug] = round(min(top, max(0.0, level + shift)), 3)
    return out


def manifest_for(entry: DemoEntry, registration: Registration | None = None) -> dict:
    manifest = default_manifest(split=SPLIT, seeds=len(entry.seeds))
    slug = entry.username.removeprefix("demo-")
    manifest["agent"] = {
        "name": entry.agent,
        "version": entry.version,
        "source_url": f"https://example.org/demo-agents/{slug}",
        "commit": f"{zlib.crc32(entry.key.encode()):08x}" * 5,
        "open_source": True,
    }
    manifest["llms"] = ["none (simulated agent)"]
    manifest["notes"] = NOTES
    if registration is not None:
        manifest["registration"] = registration.pk
    return manifest


def _bundle(
    *,
    entry: DemoEntry,
    ids: list[str],
    answers: Callable[[str], pd.DataFrame],
    leaky: set[str],
    out: Path,
    registration: Registration | None = None,
) -> Path:
    group = write_run_group(
        out_dir=out,
        competition_ids=ids,
        seeds=entry.seeds,
        quality=qualities(level=entry.quality, key=entry.key, ids=ids, leaky=leaky),
        answers=answers,
        created_at=DEFAULT_CREATED_AT,
        agent=entry.username,
        style=entry.style,
        nonce=registration.nonce if registration is not None else "",
    )
    manifest = manifest_for(entry, registration)
    return write_run_bundle(run_group=group, out_path=out / "bundle.tar.gz", manifest=manifest)


def _team(entry: DemoEntry) -> tuple[Team, User]:
    user = services.user_ensure(username=entry.username, email=f"{entry.username}@example.org")
    team = Team.objects.filter(name=entry.team).first() or services.team_create(user=user, name=entry.team)
    return team, user


def _registration(*, entry: DemoEntry, team: Team, user: User, ids: list[str]) -> Registration:
    """The entry's registration, made before its runs are written, by the team's owner. One an earlier start made
    but never uploaded (it stopped in between) is used again rather than left unreported beside a new one."""
    earlier = (
        Registration.objects.filter(
            team=team,
            agent_name=entry.agent,
            agent_version=entry.version,
            seeds=len(entry.seeds),
            competitions=ids,
            submissions__isnull=True,
            withdrawals__isnull=True,
            hosted_run__isnull=True,
            deadline__gt=timezone.now(),
        )
        .order_by("pk")
        .first()
    )
    if earlier is not None:
        return earlier
    return registration_create(
        team=team,
        user=user,
        agent_name=entry.agent,
        agent_version=entry.version,
        seeds=len(entry.seeds),
        competitions=ids,
    )


def _upload(*, team: Team, user: User, bundle: Path) -> Submission:
    with bundle.open("rb") as handle:
        upload = UploadedFile(handle, name=bundle.name, content_type="application/gzip", size=bundle.stat().st_size)
        return submission_create(team=team, user=user, upload=upload)
