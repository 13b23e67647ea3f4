"""The index of what checked entries hold (IndexedPrint), written and looked up by the checking step.

An entry's index (duplicate_submissions.entry_index) is its submissions' normalised fingerprints, its code's
winnowed fingerprints per competition and its logs' hashes. A new entry looks its own hashes up among earlier
entries of other teams (published or not; any status) with the (kind, digest) index, so its cost grows with
its own size and with what it shares, not with the number of entries held; only the entries that share a hash
become OtherEntry objects for the check. Every hash is stored scoped to its competition (``scoped``): the same
file or code for another competition is no match, and one lookup finds only its own competition's holders.
"""

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection, transaction

from grading.checks.context import OtherEntry
from grading.models import IndexedPrint, Submission

LOOKUP_CHUNK = 5000  # hashes per query
HOLDERS_MAX = 20  # earlier entries looked up per hash; a code hash held this often is common
K = IndexedPrint.Kind


def digest64(text: str) -> int:
    """The first 64 bits of a hex digest, as a signed bigint."""
    return int.from_bytes(bytes.fromhex(text[:16]), "big", signed=True)


def scoped(value: int, competition: str) -> int:
    """A hash made the competition's own, so one index range finds it for that competition only (a scaffold in
    every competition of every entry is then many rare hashes, not one that every lookup must wade through)."""
    body = competition.encode() + b"\x00" + value.to_bytes(8, "big", signed=True)
    return int.from_bytes(hashlib.blake2b(body, digest_size=8).digest(), "big", signed=True)


def _rows(index: dict) -> Iterator[tuple[str, int, str, str, str]]:
    """(kind, stored digest, competition, run, the hash as the index names it) of every hash of an entry."""
    for digest, run in index.get("submissions", {}).items():
        competition = run.split("/")[0]
        yield K.SUBMISSION, scoped(digest64(digest), competition), competition, run, digest
    for competition, prints in index.get("code", {}).items():
        for value in prints:
            yield K.CODE, scoped(int(value), competition), competition, "", str(value)
    for digest, run in index.get("logs", {}).items():
        competition = run.split("/")[0]
        yield K.LOG, scoped(digest64(digest), competition), competition, run, digest


_INSERT = f"""
INSERT INTO {IndexedPrint._meta.db_table} (submission_id, team_id, kind, digest, competition, run)
SELECT %s, %s, t.kind, t.digest, t.competition, t.run
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[]) AS t(kind, digest, competition, run)
"""


def prints_store(*, submission: Submission, index: dict) -> int:
    """Replace the submission's hashes in the index (one statement for all of them); returns how many."""
    rows = list(_rows(index))
    columns = [list(column) for column in zip(*(row[:4] for row in rows), strict=True)] if rows else [[]] * 4
    with transaction.atomic(), connection.cursor() as cursor:
        IndexedPrint.objects.filter(submission_id=submission.pk).delete()
        if rows and connection.vendor == "postgresql":
            cursor.execute(_INSERT, [submission.pk, submission.team_id, *columns])
        elif rows:  # SQLite, the one-machine default
            IndexedPrint.objects.bulk_create(
                [
                    IndexedPrint(
                        submission_id=submission.pk, team_id=submission.team_id, kind=k, digest=d, competition=c, run=r
                    )
                    for k, d, c, r, _ in rows
                ],
                batch_size=LOOKUP_CHUNK,
            )
    return len(rows)


def _chunks(values: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(values), LOOKUP_CHUNK):
        yield values[start : start + LOOKUP_CHUNK]


# Per hash, the latest HOLDERS_MAX earlier entries of other teams that hold it: one index range each
# (digest, submission descending), so a hash every entry holds costs what a rare one does.
_HOLDERS = f"""
SELECT d.digest, p.submission_id, p.run
FROM unnest(%s::bigint[]) AS d(digest)
CROSS JOIN LATERAL (
    SELECT q.submission_id, q.run FROM {IndexedPrint._meta.db_table} q
    WHERE q.digest = d.digest AND q.kind = %s AND q.submission_id < %s AND q.team_id <> %s
    ORDER BY q.submission_id DESC LIMIT %s
) AS p
"""


def _holders(cursor: Any, chunk: list[int], *, kind: str, submission: Submission) -> list[tuple[int, int, str]]:
    """(digest, submission, run) of the latest HOLDERS_MAX earlier entries of other teams holding each hash."""
    if connection.vendor == "postgresql":
        cursor.execute(_HOLDERS, [chunk, kind, submission.pk, submission.team_id, HOLDERS_MAX])
        return list(cursor.fetchall())
    rows = (
        IndexedPrint.objects.filter(digest__in=chunk, kind=kind, submission_id__lt=submission.pk)
        .exclude(team_id=submission.team_id)
        .order_by("digest", "-submission_id")
        .values_list("digest", "submission_id", "run")
    )
    kept: list[tuple[int, int, str]] = []
    count: dict[int, int] = {}
    for digest, other, run in rows.iterator():
        count[digest] = count.get(digest, 0) + 1
        if count[digest] <= HOLDERS_MAX:
            kept.append((digest, other, run))
    return kept


def earlier_entries(*, submission: Submission, index: dict) -> list[OtherEntry]:
    """Every earlier entry of another team (any status) that holds one of this entry's hashes for the same
    competition, with what it shares. A code hash that HOLDERS_MAX or more such entries hold for a competition
    is common (a library's boilerplate, an open-source scaffold; Dolos, too, leaves out fingerprints found in
    many files) and left out of what the code shares; a submission or log hash names the latest HOLDERS_MAX
    entries that hold it."""
    ours: dict[str, dict[int, tuple[str, str]]] = {K.SUBMISSION: {}, K.CODE: {}, K.LOG: {}}
    for kind, digest, competition, _, named in _rows(index):
        ours[kind][digest] = (competition, named)
    found: dict[int, dict] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The planner, expecting a row or two per hash, would read every holder and sort them; the index
            # gives them newest first, and LIMIT stops the scan.
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
        for kind, wanted in ours.items():
            for chunk in _chunks(sorted(wanted)):
                rows = _holders(cursor, chunk, kind=kind, submission=submission)
                holders: dict[int, int] = {}
                for digest, *_ in rows:
                    holders[digest] = holders.get(digest, 0) + 1
                for digest, other, run in rows:
                    competition, named = wanted[digest]
                    held = found.setdefault(other, {"submissions": {}, "code": {}, "logs": {}})
                    if kind == K.SUBMISSION:
                        held["submissions"][named] = run
                    elif kind == K.LOG:
                        held["logs"][named] = run
                    elif holders[digest] < HOLDERS_MAX:
                        held["code"].setdefault(competition, set()).add(int(named))
    if not found:
        return []
    teams = dict(Submission.objects.filter(pk__in=found).values_list("pk", "team__name"))
    return [
        OtherEntry(
            submission_id=pk,
            team=teams.get(pk, ""),
            submissions=held["submissions"],
            code={cid: frozenset(prints) for cid, prints in held["code"].items()},
            logs=held["logs"],
        )
        for pk, held in sorted(found.items())
    ]
