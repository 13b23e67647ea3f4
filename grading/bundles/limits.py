"""How much a bundle may unpack to, checked while it unpacks."""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What a bundle may unpack to. The defaults fit 75 competitions x several seeds with logs and code."""

    max_total_bytes: int = 8 * GiB
    max_member_bytes: int = 2 * GiB
    max_files: int = 20_000
    max_ratio: float = 200.0
    # Below this many unpacked bytes the ratio is not judged: a small all-zero CSV legitimately compresses
    # a thousandfold, and a bomb is only a bomb once it is big.
    ratio_floor_bytes: int = 64 * MiB


DEFAULT_LIMITS = Limits()


def human(size: float) -> str:
    """A byte count as people read it in an error message: "8 GiB", "1.5 MiB", "300 bytes"."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" or size == int(size) else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
