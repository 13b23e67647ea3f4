"""Registering a run group before running it (SPEC section 9)."""

import re
import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import Final

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from competitions.selectors import competition_list
from grading.bundles.manifest import NAME_TEXT, SHORT_TEXT
from grading.engine.tiers import SPLITS
from grading.models import Registration
from portal.accounts.models import Team
from portal.refusals import Refused

IMAGE_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
MAX_COMPETITIONS: Final = 200


def _refuse(field: str, message: str) -> Refused:
    return Refused(status=400, code="invalid", message=message, field=field)


def registration_create(
    *,
    team: Team,
    user: User | None,
    agent_name: str,
    agent_version: str,
    seeds: int,
    split: str = "",
    competitions: Sequence[str] = (),
    image: str = "",
) -> Registration:
    """Register a run group; refuse, naming the field, anything that could not be checked against a bundle."""
    agent_name, agent_version = agent_name.strip(), agent_version.strip()
    if not agent_name or len(agent_name) > NAME_TEXT:
        raise _refuse("agent.name", f"agent.name is required: the agent's name, at most {NAME_TEXT} characters.")
    if not agent_version or len(agent_version) > SHORT_TEXT:
        raise _refuse(
            "agent.version", f"agent.version is required: the agent's version, at most {SHORT_TEXT} characters."
        )
    most = settings.BUNDLE_MAX_SEEDS  # a bundle holds at most this many runs per competition
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= most:
        raise _refuse("seeds", f"seeds must be a whole number from 1 to {most} (BUNDLE_MAX_SEEDS); got {seeds!r}.")
    if image and not IMAGE_DIGEST.fullmatch(image):
        raise _refuse("image", "image must be the agent image's digest, sha256: followed by 64 lowercase hex digits.")
    if bool(split) == bool(competitions):
        raise _refuse("split", f"Give either split (one of {', '.join(SPLITS)}) or competitions, not both or neither.")
    if split:
        if split not in SPLITS:
            raise _refuse("split", f"split must be one of {', '.join(SPLITS)}; got {split[:40]!r}.")
        slugs = list(competition_list(split=split).values_list("slug", flat=True))
        if not slugs:
            raise _refuse("split", f"The current benchmark has no competitions in split {split!r}.")
    else:
        if len(competitions) > MAX_COMPETITIONS or len(set(competitions)) != len(competitions):
            raise _refuse("competitions", f"competitions must list at most {MAX_COMPETITIONS} distinct ids.")
        known = set(competition_list().filter(slug__in=list(competitions)).values_list("slug", flat=True))
        unknown = [slug for slug in competitions if slug not in known]
        if unknown:
            shown = ", ".join(repr(slug[:60]) for slug in unknown[:5])
            raise _refuse("competitions", f"Unknown competitions in the current benchmark: {shown}.")
        slugs = list(competitions)
    return Registration.objects.create(
        team=team,
        created_by=user,
        agent_name=agent_name,
        agent_version=agent_version,
        split=split,
        competitions=slugs,
        seeds=seeds,
        image=image,
        nonce=secrets.token_hex(16),
        deadline=timezone.now() + timedelta(days=settings.REGISTRATION_DEADLINE_DAYS),
    )
