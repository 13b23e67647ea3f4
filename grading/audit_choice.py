"""Which competitions a random audit re-runs (SPEC section 9, README "Audits"). Plain functions, no Django: the
client (mleportal verify) repeats them from what the entry API publishes.

seed = sha256("<head hash>:<submission id>") in hex, where the head is the board history's head at upload. Each
of the bundle's competitions gets the key sha256("<seed>:<competition id>"); the k with the smallest keys are
audited, smallest first. The head is only known once the history moves, and the id only once the upload is
received, so a team cannot know the choice before its bundle is in.
"""

import hashlib
from collections.abc import Iterable


def audit_seed(*, head_hash: str, submission_id: int) -> str:
    return hashlib.sha256(f"{head_hash}:{submission_id}".encode()).hexdigest()


def audit_choice(*, seed: str, candidates: Iterable[str], k: int) -> list[str]:
    """The k competitions audited, from the bundle's (duplicates count once)."""
    ranked = sorted(set(candidates), key=lambda slug: (hashlib.sha256(f"{seed}:{slug}".encode()).hexdigest(), slug))
    return ranked[: max(0, k)]
