"""Importing competition packs: answers to private storage, the leaderboard in force, grader choice, and the
largest size an honest submission can reach."""

import logging
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import transaction

from competitions.answers_cache import answers_cache_drop, answers_cache_store
from competitions.models import Competition, CompetitionPack
from competitions.packs import (
    FoundPack,
    PackError,
    find_packs,
    read_description,
    resolve_mlebench_file,
    write_public_archive,
)
from competitions.selectors import LeaderboardInForce
from competitions.services import competition_leaderboard_apply
from grading.engine import csvio
from grading.engine.errors import AnswersProblem
from grading.engine.hashing import file_sha256
from grading.engine.medals import read_leaderboard
from grading.engine.registry import GraderRef, get_grader, run_grader
from grading.engine.submission_size import honest_size, list_lengths_from_params

logger = logging.getLogger(__name__)


def _store(storage: Storage, *, source: Path, name: str) -> str:
    with source.open("rb") as handle:
        return storage.save(name, File(handle))


@dataclass(frozen=True)
class ImportedPack:
    pack: CompetitionPack
    leaderboard: LeaderboardInForce  # the leaderboard now in force, and why the pack's own is not, if so


def _checked(pack: FoundPack) -> tuple[Competition, Path, Path | None, dict, object, pd.DataFrame | None]:
    competition = Competition.objects.filter(benchmark__is_current=True, slug=pack.competition_id).first()
    if competition is None:
        raise PackError(
            f"{pack.folder}: no competition '{pack.competition_id}' in the current benchmark; "
            "check the id or run 'manage.py load_competitions' first."
        )
    sample: Path | None
    if pack.layout == "mlebench":
        answers = resolve_mlebench_file(pack, competition.answers_file, what="answers")
        sample = pack.folder / competition.sample_submission_file
        sample = sample if competition.sample_submission_file and sample.is_file() else None
    else:
        assert pack.answers is not None  # a portal pack.json must name its answers (packs._our_pack)
        answers, sample = pack.answers, pack.sample_submission
    grader = pack.grader or {"name": competition.grader_name, "params": competition.grader_params}
    if not grader["name"]:
        raise PackError(f"{pack.folder}: '{pack.competition_id}' has no grader yet; name one in pack.json 'grader'.")
    try:
        get_grader(grader["name"])
    except KeyError as exc:
        raise PackError(f"{pack.folder}: {exc.args[0]}") from None
    try:
        loaded = csvio.load_answers(answers)
    except Exception as exc:
        raise PackError(f"{answers}: the answers file cannot be read: {exc}") from None
    sample_frame = None
    if sample is not None:
        try:
            sample_frame = csvio.read_answers(sample)
        except Exception:  # noqa: BLE001 - an unreadable sample submission only leaves the size bound less informed
            sample_frame = None
    if sample_frame is not None:
        # Grading the sample submission proves the answers fit the grader before anything is stored.
        try:
            run_grader(GraderRef(grader["name"], grader.get("params", {})), sample_frame.copy(deep=False), loaded)
        except AnswersProblem as exc:
            raise PackError(f"{answers}: the answers do not fit the grader '{grader['name']}': {exc}") from None
        except Exception:  # noqa: BLE001 - a sample submission may well be invalid; only our side matters here
            pass
    return competition, answers, sample, grader, loaded, sample_frame


def _max_submission_bytes(
    *, competition: Competition, grader: dict, answers: pd.DataFrame, sample: pd.DataFrame | None
) -> int:
    """Rows x the widest honest row, plus the header (grading.engine.submission_size)."""
    frames = [frame for frame in (answers, sample) if isinstance(frame, pd.DataFrame)]
    columns = list(sample.columns) if sample is not None else list(competition.submission_columns)
    params = grader.get("params") or {}
    size = honest_size(
        columns=[str(c) for c in columns],
        frames=frames,
        rows=max(len(answers), len(sample) if sample is not None else 0),
        id_column=params.get("id_column") or competition.id_column,
        list_lengths=list_lengths_from_params(params=params),
    )
    return size.max_bytes


def pack_import(*, path: Path) -> list[ImportedPack]:
    """Import every pack found at path. Each is checked before anything is written; a failing pack
    leaves no files and no rows, and stops the import with a PackError."""
    imported = []
    for found in find_packs(Path(path)):
        imported.append(_import_one(found))
    return imported


def _import_one(found: FoundPack) -> ImportedPack:
    competition, answers, sample, grader, loaded, sample_frame = _checked(found)
    max_submission_bytes = _max_submission_bytes(
        competition=competition, grader=grader, answers=loaded, sample=sample_frame
    )
    leaderboard = None
    if found.leaderboard is not None:
        try:
            leaderboard = read_leaderboard(found.leaderboard)
        except Exception as exc:
            raise PackError(f"{found.leaderboard}: not a leaderboard (rank,score best first): {exc}") from None
    description = read_description(found.description)

    storage = storages["private"]
    folder = (
        f"packs/{competition.benchmark.name}-{competition.benchmark.version}/{competition.slug}/{uuid.uuid4().hex[:12]}"
    )
    written: list[str] = []
    try:
        answers_name = _store(storage, source=answers, name=f"{folder}/{answers.name}")
        written.append(answers_name)
        sample_name = _store(storage, source=sample, name=f"{folder}/{sample.name}") if sample else ""
        if sample_name:
            written.append(sample_name)
        public_name, public_sha256, public_bytes = "", "", 0
        if found.public is not None:
            with tempfile.TemporaryDirectory() as scratch:
                public_archive = Path(scratch) / "public.tar.gz"
                write_public_archive(public=found.public, answers=answers, target=public_archive)
                public_name = _store(storage, source=public_archive, name=f"{folder}/public.tar.gz")
                written.append(public_name)
                public_sha256, public_bytes = file_sha256(public_archive), public_archive.stat().st_size
        sha256 = file_sha256(answers)
        with transaction.atomic():
            previous = CompetitionPack.objects.filter(competition=competition).first()
            old_files = (
                [previous.answers_path, previous.sample_submission_path, previous.public_archive_path]
                if previous
                else []
            )
            old_sha = previous.answers_sha256 if previous and previous.answers_sha256 != sha256 else ""
            pack, _ = CompetitionPack.objects.update_or_create(
                competition=competition,
                defaults={
                    "answers_path": answers_name,
                    "answers_sha256": sha256,
                    "answers_bytes": answers.stat().st_size,
                    "sample_submission_path": sample_name,
                    "public_archive_path": public_name,
                    "public_sha256": public_sha256,
                    "public_bytes": public_bytes,
                    "description": description,
                    "grader_name": grader["name"] if found.grader else "",
                    "grader_params": grader.get("params", {}) if found.grader else {},
                    "synthetic": found.synthetic,
                    "leaderboard_scores": leaderboard or [],
                    # A simulated leaderboard is tied to the answers it was simulated for: those pack.json
                    # names, or else the answers it ships with.
                    "leaderboard_answers_sha256": (
                        (found.leaderboard_answers_sha256 or (sha256 if found.synthetic else "")) if leaderboard else ""
                    ),
                    "max_submission_bytes": max_submission_bytes,
                    "source": str(found.folder),
                    "source_layout": found.layout,
                },
            )
            in_force = competition_leaderboard_apply(competition=competition, pack=pack)
            transaction.on_commit(lambda: _delete(storage, [name for name in old_files if name]))
            # Only a pack that was kept gets its parsed answers cached; workers then load them from the first run.
            transaction.on_commit(lambda: answers_cache_store(sha256=sha256, answers=loaded))
            transaction.on_commit(lambda: answers_cache_drop(old_sha))
    except BaseException:
        _delete(storage, written)
        raise
    logger.info("imported the %s pack of %s from %s", found.layout, competition.slug, found.folder)
    return ImportedPack(pack=pack, leaderboard=in_force)


def _delete(storage: Storage, names: list[str]) -> None:
    for name in names:
        try:
            storage.delete(name)
        except OSError:
            logger.warning("could not delete replaced pack file %s", name)
