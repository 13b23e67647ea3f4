"""Which code the portal runs: the commit recorded in every entry's evidence (leaderboard/evidence.py)."""

import functools
import re
import subprocess

from django.conf import settings

_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@functools.cache
def portal_commit() -> str:
    """PORTAL_COMMIT when set (an image built without its .git folder), else the checkout's HEAD as git says it,
    else "unknown". Asked once per process."""
    if settings.PORTAL_COMMIT:
        return settings.PORTAL_COMMIT
    try:
        found = subprocess.run(
            ["git", "rev-parse", "HEAD"],  # noqa: S607 (git from the PATH, as an operator runs it)
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = found.stdout.strip()
    return commit if found.returncode == 0 and _COMMIT.fullmatch(commit) else "unknown"
