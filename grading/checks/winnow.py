"""Token-level fingerprints of code, as MOSS and Dolos take them (Schleimer, Wilkerson and Aiken, "Winnowing:
local algorithms for document fingerprinting", SIGMOD 2003): tokenize, hash every k-gram of tokens, and keep
the smallest hash of every window of W consecutive k-grams. Two files that share a run of at least
K + W - 1 tokens share a kept hash, whatever else they hold; renamed files, comments, blank lines, spacing and
other literals do not change the hashes.

Tokens: identifiers and keywords as written, every number "0", every string literal '""', every operator as
itself; comments (``#`` to the end of the line: Python, R, Julia, shell) and whitespace are dropped. Framework-free.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

K = 15  # tokens per k-gram: short enough for a copied function, long enough that `import x` lines do not match
WINDOW = 10  # k-grams per window: every shared run of K + WINDOW - 1 tokens is caught

_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)
    |(?P<string>[rbuRBUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<number>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    |(?P<name>[A-Za-z_]\w*)
    |(?P<op>\*\*=?|//=?|<<=?|>>=?|[-+*/%&|^@=<>!:]=|->|:=|[^\s\w])
    """,
    re.VERBOSE,
)


def tokens(text: str) -> list[str]:
    found = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            continue
        if kind == "string":
            found.append('""')
        elif kind == "number":
            found.append("0")
        else:
            found.append(match.group())
    return found


def _hash(gram: Sequence[str]) -> int:
    """A k-gram's hash as a signed 64-bit integer (what a PostgreSQL bigint holds)."""
    digest = hashlib.blake2b("\x1f".join(gram).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def winnow(hashes: Sequence[int], *, window: int = WINDOW) -> set[int]:
    """The smallest hash of every window of ``window`` consecutive hashes (all of them when fewer)."""
    if len(hashes) <= window:
        return set(hashes)
    return {min(hashes[i : i + window]) for i in range(len(hashes) - window + 1)}


def fingerprints(text: str, *, k: int = K, window: int = WINDOW) -> set[int]:
    """The winnowed k-gram hashes of one file's code (empty when it has fewer than ``k`` tokens)."""
    found = tokens(text)
    grams = [_hash(found[i : i + k]) for i in range(len(found) - k + 1)]
    return winnow(grams, window=window)


def fingerprints_of(texts: Iterable[str], *, k: int = K, window: int = WINDOW) -> set[int]:
    """The union of several files' fingerprints (a run's code: each file on its own)."""
    found: set[int] = set()
    for text in texts:
        found |= fingerprints(text, k=k, window=window)
    return found


def shared(ours: set[int], theirs: set[int] | frozenset[int]) -> float:
    """The share of our fingerprints that are theirs too (0 when we have none)."""
    return len(ours & theirs) / len(ours) if ours else 0.0
