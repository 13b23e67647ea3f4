"""An entry's evidence for verify --data's tests, in the format of the contract between the parts of issue 22
(README: "The evidence of an entry"), assembled from a real graded submission: the Lite demo packs imported into
the registry, every run of a Lite run group of three seeds graded by the server's own grading function
(grading.services.grade_file.grade_run_file), and the files written as the evidence endpoint writes them
(leaderboard/evidence.py), without a server: verify_data reads nothing else, so its many cases run here on
files; tests/client/test_verify_end_to_end.py takes the endpoint's own zip through a live server.

The user's side is MLE-bench's prepared data (`mlebench prepare` layout, <data>/<id>/prepared/private/...) of the
same Lite competitions: the demo packs written in that layout, whose answers are byte for byte the portal's.
"""

import hashlib
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from competitions.demo.packs import make_demo_pack
from competitions.demo.runs import pack_answers, run_id_for, write_run_bundle, write_run_group
from tests.lite import LITE_SEEDS

FORMAT = "mle-portal-evidence/1"
WITHOUT_SUBMISSION = ("aerial-cactus-identification", 2)  # a run that made no file
MISSING_ROWS = ("spooky-author-identification", 1)  # a file the grader refuses: an invalid report


@pytest.fixture(scope="session")
def data_run_group(lite_packs, tmp_path_factory) -> Path:
    return write_run_group(
        out_dir=tmp_path_factory.mktemp("data-runs"),
        seeds=LITE_SEEDS,
        quality=0.9,
        answers=pack_answers(lite_packs),
        no_submission=[WITHOUT_SUBMISSION],
        defects={MISSING_ROWS: ["missing_rows"]},
    )


@pytest.fixture(scope="session")
def mlebench_data(tmp_path_factory) -> Path:
    """The Lite competitions as `mlebench prepare` lays them out, with the portal's answers (tests/lite.py)."""
    out = tmp_path_factory.mktemp("mlebench-data")
    make_demo_pack(out_dir=out, split="low", size="small", seed=0, n_teams=80, layout="mlebench")
    return out


def write_evidence(folder: Path, *, header: dict[str, Any], documents: dict[str, bytes], bundle: Path | None) -> Path:
    """An evidence folder: the documents, the bundle under bundle/, and evidence.json listing every file with
    its SHA-256 and size."""
    folder.mkdir(parents=True, exist_ok=True)
    if bundle is not None:
        (folder / "bundle").mkdir(exist_ok=True)
        shutil.copyfile(bundle, folder / "bundle" / bundle.name)
    for name, data in documents.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return relist(folder, header=header)


def relist(folder: Path, *, header: dict[str, Any] | None = None) -> Path:
    """evidence.json listing the folder's files as they are now: what a tampering operator would do after
    changing one, so that only a recomputation can catch it."""
    if header is None:
        header = {k: v for k, v in json.loads((folder / "evidence.json").read_text()).items() if k != "files"}
    files = [
        {"path": path.relative_to(folder).as_posix(), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        | {"bytes": path.stat().st_size}
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "evidence.json"
    ]
    (folder / "evidence.json").write_text(json.dumps({**header, "files": files}, indent=2) + "\n")
    return folder


def evidence_zip(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return target


def _as_json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, allow_nan=True) + "\n").encode()


@pytest.fixture(scope="session")
def lite_evidence(django_db_setup, django_db_blocker, lite_packs, data_run_group, tmp_path_factory) -> Path:
    """The evidence folder of a Lite entry of three seeds, graded by the server (the database is rolled back)."""
    from django.db import transaction

    from competitions.models import Competition
    from competitions.pack_services import pack_import
    from competitions.services import competitions_load
    from grading.engine import ENGINE_VERSION, GRADER_VERSION, REPORT_FIELDS
    from grading.engine.tiers import TIER_SPLITS, TIERS
    from grading.services.grade_file import grade_run_file

    bundle = write_run_bundle(run_group=data_run_group, out_path=tmp_path_factory.mktemp("data-bundle") / "lite.tar.gz")
    reports: dict[int, list[dict]] = {}
    competitions: dict[str, dict] = {}
    with django_db_blocker.unblock(), transaction.atomic():
        competitions_load()
        pack_import(path=lite_packs)
        for competition in Competition.objects.filter(pack__isnull=False).select_related("pack").order_by("slug"):
            pack = competition.pack
            for seed in LITE_SEEDS:
                run_id = run_id_for(competition_id=competition.slug, seed=seed)
                member = f"runs/{data_run_group.name}/{run_id}/submission/submission.csv"
                path = data_run_group / run_id / "submission" / "submission.csv"
                graded, _ = grade_run_file(
                    competition=competition,
                    submission_path=path if path.is_file() else None,
                    display_path=member if path.is_file() else None,
                )
                stored = graded.to_dict(with_reason=True)
                report = {field: stored[field] for field in REPORT_FIELDS}
                report["submission_path"] = member if path.is_file() else "None"
                if stored.get("medals_known") is False:
                    report["medals_known"] = False
                reports.setdefault(seed, []).append(report)
            competitions[competition.slug] = {
                "grader": {
                    "name": pack.grader_name or competition.grader_name,
                    "params": pack.grader_params if pack.grader_name else competition.grader_params,
                    "version": GRADER_VERSION,
                },
                "answers_sha256": pack.answers_sha256,
                "answers_file": competition.answers_file,
                "max_submission_bytes": pack.max_submission_bytes,
                "thresholds": {
                    "gold": competition.gold_threshold,
                    "silver": competition.silver_threshold,
                    "bronze": competition.bronze_threshold,
                    "median": competition.median_threshold,
                    "is_lower_better": competition.is_lower_better,
                },
                "thresholds_source": competition.leaderboard_source,
                "tiers": [tier for tier in TIERS if TIER_SPLITS[tier] in competition.splits],
            }
        transaction.set_rollback(True)
    assert len(competitions) == 22
    totals = ("total_runs", "total_runs_with_submissions", "total_valid_submissions", "total_medals")
    documents = {
        f"reports/seed-{seed}.json": _as_json(
            {
                **dict.fromkeys(totals, 0),  # the totals are not what verify --data compares
                "competition_reports": entries,
            }
        )
        for seed, entries in sorted(reports.items())
    }
    documents["competitions.json"] = _as_json(competitions)
    header = {
        "format": FORMAT,
        "entry_id": 1,
        "submission_id": 1,
        "board_version": 1,
        "history_head": None,
        "portal_commit": "test",
        "engine": {
            "version": ENGINE_VERSION,
            "wheel": f"mle_portal_engine-{ENGINE_VERSION}-py3-none-any.whl",
            "sha256": "0" * 64,
            "url": f"http://portal.test/downloads/engine/mle_portal_engine-{ENGINE_VERSION}-py3-none-any.whl",
        },
        "aggregation_version": "test",
        "rank": {"version": "test", "replicates": 2000, "level": 0.95, "random_seed": 0},
    }
    return write_evidence(
        tmp_path_factory.mktemp("evidence") / "evidence", header=header, documents=documents, bundle=bundle
    )
