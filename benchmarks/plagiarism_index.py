"""What comparing a new bundle with every earlier bundle of other teams costs as the portal holds more of them:
the checking step's index lookups and index write (grading/services/prints.py), timed and their queries
counted, with 10, 100 and 1000 earlier bundles held.

    .venv/bin/python benchmarks/plagiarism_index.py [--sizes 10,100,1000] [--repeat 5] [--keep]

Needs PostgreSQL (127.0.0.1:5432, user postgres). It creates the database portal_bench_plagiarism afresh
(dropped at the end unless --keep).

Each bundle is the Lite split's shape: 22 competitions x 3 seeds, so 66 submission fingerprints, 66 log hashes
and per competition CODE_OWN winnowed code fingerprints of its own plus the SCAFFOLD fingerprints of one
open-source scaffold that every bundle shares (the worst case for a hash lookup: every earlier bundle holds
those). The earlier bundles are written straight into the index by SQL (random hashes, one team each); the
new bundle is the real thing's index (duplicate_submissions.entry_index's shape), of yet another team, and
shares one submission file with the earliest bundle, so the lookup finds a match as well. Each measurement is
the lookup (earlier_entries) and the write (prints_store) of the new bundle, the median of --repeat, its rows
taken out again after each. The figures are per new bundle, on this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DB = "portal_bench_plagiarism"
COMPETITIONS = 22
SEEDS = 3
CODE_OWN = 400  # winnowed fingerprints of a competition's own code, its seeds together (~250 lines)
SCAFFOLD = 100  # of the scaffold every bundle shares

ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--sizes", default="10,100,1000")
ARGS.add_argument("--repeat", type=int, default=5)
ARGS.add_argument("--keep", action="store_true")


def psql(*statements: str) -> None:
    for statement in statements:
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-q", "-v", "ON_ERROR_STOP=1"]
            + ["-c", statement],
            check=True,
            capture_output=True,
        )


def new_index(rng: random.Random, scaffold: list[int], shared_fingerprint: str) -> dict:
    def hexdigest() -> str:
        return f"{rng.getrandbits(256):064x}"

    runs = [f"comp-{c:02d}/seed-{s}" for c in range(COMPETITIONS) for s in range(SEEDS)]
    submissions = {hexdigest(): run for run in runs[1:]}
    submissions[shared_fingerprint] = runs[0]
    return {
        "submissions": submissions,
        "code": {
            f"comp-{c:02d}": sorted({rng.getrandbits(63) - 2**62 for _ in range(CODE_OWN)} | set(scaffold))
            for c in range(COMPETITIONS)
        },
        "logs": {hexdigest(): run for run in runs},
    }


def fill(first: int, last: int, scaffold: list[tuple[int, str]]) -> None:
    """Index rows of the earlier bundles first..last (submission ids), written by SQL; ``scaffold`` is the
    shared code's (stored digest, competition) pairs."""
    from django.db import connection

    table = "grading_indexedprint"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} (submission_id, team_id, kind, digest, competition, run)
            SELECT s.id, s.team_id, k.kind, (random() * 1.8e19 - 9.0e18)::bigint,
                   'comp-' || lpad((g / {SEEDS})::text, 2, '0'), 'comp-' || lpad((g / {SEEDS})::text, 2, '0')
                   || '/seed-' || (g %% {SEEDS})
            FROM grading_submission s, (VALUES ('submission'), ('log')) AS k(kind),
                 generate_series(0, {COMPETITIONS * SEEDS - 1}) AS g
            WHERE s.id BETWEEN %s AND %s
            """,
            [first, last],
        )
        cursor.execute(
            f"""
            INSERT INTO {table} (submission_id, team_id, kind, digest, competition, run)
            SELECT s.id, s.team_id, 'code', (random() * 1.8e19 - 9.0e18)::bigint,
                   'comp-' || lpad((g %% {COMPETITIONS})::text, 2, '0'), ''
            FROM grading_submission s, generate_series(0, {COMPETITIONS * CODE_OWN - 1}) AS g
            WHERE s.id BETWEEN %s AND %s
            UNION ALL
            SELECT s.id, s.team_id, 'code', sc.digest, sc.competition, ''
            FROM grading_submission s, unnest(%s::bigint[], %s::text[]) AS sc(digest, competition)
            WHERE s.id BETWEEN %s AND %s
            """,
            [first, last, [d for d, _ in scaffold], [c for _, c in scaffold], first, last],
        )
    with connection.cursor() as cursor:  # what autovacuum does to a table that has grown: statistics, visibility
        cursor.execute(f"VACUUM ANALYZE {table}")


def main() -> None:
    args = ARGS.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    os.environ.update(
        DATABASE_URL=f"postgresql://postgres@127.0.0.1:5432/{DB}",
        PORTAL_DATA_DIR=tempfile.mkdtemp(prefix="portal-bench-plagiarism-"),
        DJANGO_SETTINGS_MODULE="portal.settings",
        LOG_LEVEL="WARNING",
    )
    psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)", f"CREATE DATABASE {DB}")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test.utils import CaptureQueriesContext

    from competitions.models import Benchmark
    from grading.models import IndexedPrint, Submission
    from grading.services.prints import HOLDERS_MAX, digest64, earlier_entries, prints_store, scoped
    from portal.accounts.models import Team

    try:
        call_command("migrate", interactive=False, verbosity=0)
        rng = random.Random(20261206)
        benchmark = Benchmark.objects.create(name="mle-bench", version="bench")
        most = max(sizes)
        teams = Team.objects.bulk_create([Team(name=f"team {i}") for i in range(most + 1)])
        earlier = Submission.objects.bulk_create(
            [Submission(team=teams[i], benchmark=benchmark, status=Submission.Status.PUBLISHED) for i in range(most)]
        )
        scaffold = sorted({rng.getrandbits(63) - 2**62 for _ in range(SCAFFOLD)})
        scaffold_rows = [(scoped(d, f"comp-{c:02d}"), f"comp-{c:02d}") for c in range(COMPETITIONS) for d in scaffold]
        fingerprint = f"{rng.getrandbits(256):064x}"  # one file of the earliest bundle, which the new one copies
        IndexedPrint.objects.create(
            submission=earlier[0],
            team_id=earlier[0].team_id,
            kind="submission",
            digest=scoped(digest64(fingerprint), "comp-00"),
            competition="comp-00",
            run="comp-00/seed-0",
        )
        print(
            f"plagiarism_index: each bundle {COMPETITIONS} competitions x {SEEDS} seeds; "
            f"{COMPETITIONS * SEEDS * 2 + COMPETITIONS * (CODE_OWN + SCAFFOLD):,} index rows per bundle, "
            f"{SCAFFOLD} scaffold code fingerprints in every bundle; HOLDERS_MAX {HOLDERS_MAX}; "
            f"median of {args.repeat}",
            flush=True,
        )
        header = ("earlier bundles", 16), ("index rows", 12), ("lookup ms", 10), ("write ms", 9), ("queries", 8)
        print(" ".join(f"{name:>{width}}" for name, width in header), f"{'matched':>8}")
        filled = 0
        for size in sizes:
            started = time.perf_counter()
            fill(earlier[filled].pk, earlier[size - 1].pk, scaffold_rows)
            filled = size
            fill_s = time.perf_counter() - started
            lookups, writes, queries, matched = [], [], [], 0
            for _ in range(args.repeat):
                new = Submission.objects.create(team=teams[most], benchmark=benchmark)
                index = new_index(rng, scaffold, fingerprint)
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    others = earlier_entries(submission=new, index=index)
                    lookups.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    prints_store(submission=new, index=index)
                    writes.append(time.perf_counter() - started)
                queries.append(len(captured.captured_queries))
                matched = sum(1 for o in others if o.submissions)
                new.delete()
            rows = IndexedPrint.objects.count()
            print(
                f"{size:>16,} {rows:>12,} {statistics.median(lookups) * 1000:>10.0f} "
                f"{statistics.median(writes) * 1000:>9.0f} {statistics.median(queries):>8.0f} {matched:>8}"
                f"   (filled in {fill_s:.0f} s)",
                flush=True,
            )
    finally:
        connections.close_all()
        if not args.keep:
            psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


if __name__ == "__main__":
    main()
