"""The index of what checked entries hold (IndexedPrint), written and looked up by the checking step.

An entry's index (duplicate_submissions.entry_index) is its submissions' normalised fingerprints, its code's
winnowed fingerprints per competition and its logs' hashes. A new entry looks its own hashes up among earlier
entries of other teams (published or not; any status) with the (kind, digest) index, so its cost grows with
its own size and with what it shares, not with the number of entries held; only the entries that share a hash
become OtherEntry objects for the check.
"""

from collections.abc import Iterable, Iterator

from django.db import connection, transaction

from grading.checks.context import OtherEntry
from grading.models import IndexedPrint, Submission

LOOKUP_CHUNK = 5000  # hashes per query
HOLDERS_MAX = 20  # earlier entries looked up per hash; a code hash held this often is common
K = IndexedPrint.Kind


def digest64(text: str) -> int:
    """The first 64 bits of a hex digest, as a signed bigint."""
    return int.from_bytes(bytes.fromhex(text[:16]), "big", signed=True)


def _rows(index: dict) -> Iterator[tuple[str, int, str, str]]:
    """(kind, digest, competition, run) of every hash of an entry's index."""
    for digest, run in index.get("submissions", {}).items():
        yield K.SUBMISSION, digest64(digest), run.split("/")[0], run
    for competition, prints in index.get("code", {}).items():
        for value in prints:
            yield K.CODE, int(value), competition, ""
    for digest, run in index.get("logs", {}).items():
        yield K.LOG, digest64(digest), run.split("/")[0], run


def prints_store(*, submission: Submission, index: dict) -> int:
    """Replace the submission's hashes in the index; returns how many were written."""
    rows = [
        IndexedPrint(
            submission_id=submission.pk,
            team_id=submission.team_id,
            kind=kind,
            digest=digest,
            competition=competition,
            run=run,
        )
        for kind, digest, competition, run in _rows(index)
    ]
    with transaction.atomic():
        IndexedPrint.objects.filter(submission_id=submission.pk).delete()
        IndexedPrint.objects.bulk_create(rows, batch_size=LOOKUP_CHUNK)
    return len(rows)


def _chunks(values: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(values), LOOKUP_CHUNK):
        yield values[start : start + LOOKUP_CHUNK]


# Per hash, the latest HOLDERS_MAX earlier entries of other teams that hold it: one index range each
# (kind, digest, submission descending), so a hash every entry holds costs what a rare one does.
_HOLDERS = f"""
SELECT d.digest, p.submission_id, p.competition, p.run
FROM unnest(%s::bigint[]) AS d(digest)
CROSS JOIN LATERAL (
    SELECT q.submission_id, q.competition, q.run FROM {IndexedPrint._meta.db_table} q
    WHERE q.kind = %s AND q.digest = d.digest AND q.submission_id < %s AND q.team_id <> %s
    ORDER BY q.submission_id DESC LIMIT %s
) AS p
"""


def earlier_entries(*, submission: Submission, index: dict) -> list[OtherEntry]:
    """Every earlier entry of another team (any status) that holds one of this entry's hashes, with what it
    shares. A code hash that HOLDERS_MAX or more such entries hold is common (a library's boilerplate, an
    open-source scaffold, as Dolos leaves out fingerprints found in many files) and left out of what the code
    shares; a submission or log hash names the latest HOLDERS_MAX entries that hold it."""
    ours: dict[str, dict[int, str]] = {K.SUBMISSION: {}, K.CODE: {}, K.LOG: {}}
    for kind, digest, _, _ in _rows(index):
        ours[kind].setdefault(digest, "")
    for digest in index.get("submissions", {}):
        ours[K.SUBMISSION][digest64(digest)] = digest
    for digest in index.get("logs", {}):
        ours[K.LOG][digest64(digest)] = digest
    found: dict[int, dict] = {}
    with connection.cursor() as cursor:
        for kind, digests in ours.items():
            for chunk in _chunks(sorted(digests)):
                cursor.execute(_HOLDERS, [chunk, kind, submission.pk, submission.team_id, HOLDERS_MAX])
                rows = cursor.fetchall()
                holders: dict[int, int] = {}
                for digest, *_ in rows:
                    holders[digest] = holders.get(digest, 0) + 1
                for digest, other, competition, run in rows:
                    held = found.setdefault(other, {"submissions": {}, "code": {}, "logs": {}})
                    if kind == K.SUBMISSION:
                        held["submissions"][digests[digest]] = run
                    elif kind == K.LOG:
                        held["logs"][digests[digest]] = run
                    elif holders[digest] < HOLDERS_MAX:
                        held["code"].setdefault(competition, set()).add(digest)
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
