"""Finding competition packs on disk (framework-free).

Two layouts are understood:

* **ours**: a folder holding ``pack.json``::

      {"competition_id": "spooky-author-identification",
       "benchmark": "mle-bench v1",                      # optional
       "answers": "private/test.csv",                    # required, relative to the pack folder
       "sample_submission": "public/sample_submission.csv",
       "description": "public/description.md",
       "leaderboard": "leaderboard.csv",                 # rank,score best first; optional
       "grader": {"name": "log_loss", "params": {...}},  # optional: the registry's grader otherwise
       "synthetic": true,                                # optional: made-up data (demo); its own
                                                         # (simulated) leaderboard then replaces Kaggle's
       "leaderboard_answers_sha256": "ab12...",          # optional: the answers the leaderboard was
                                                         # made for; it is not used with other answers
       "public": "public"}                               # optional (default: public/ when it exists): the
                                                         # data an agent of a hosted run sees at /home/data

* **MLE-bench prepared data**: ``<data>/<competition id>/prepared/{public,private}``, with the answers and
  sample submission at the paths the competition's config names, ``public/description.md``, and an
  optional ``<data>/<competition id>/leaderboard.csv``; ``prepared/public`` is the hosted runs' data.

Which leaderboard then judges the answers is decided by ``competitions.selectors.leaderboard_in_force``.

``find_packs(path)`` accepts one pack folder, a folder of packs, one MLE-bench competition folder, or an
MLE-bench data directory.
"""

import json
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

MAX_DESCRIPTION_BYTES = 1_000_000


class PackError(Exception):
    """A pack that cannot be imported; the message says what is wrong and where."""


@dataclass(frozen=True)
class FoundPack:
    competition_id: str
    folder: Path
    layout: str  # "portal" or "mlebench"
    answers: Path | None  # None: resolve from the competition's config (MLE-bench layout)
    sample_submission: Path | None
    description: Path | None
    leaderboard: Path | None
    grader: dict | None
    synthetic: bool = False
    leaderboard_answers_sha256: str = ""
    public: Path | None = None  # the public data folder, mounted read-only into hosted runs


def find_packs(path: Path) -> list[FoundPack]:
    path = Path(path)
    if not path.is_dir():
        raise PackError(f"{path} is not a folder; give a pack folder or an MLE-bench data directory.")
    if (path / "pack.json").is_file():
        return [_our_pack(path)]
    if (path / "prepared").is_dir():
        return [_mlebench_pack(path)]
    packs = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        if (child / "pack.json").is_file():
            packs.append(_our_pack(child))
        elif (child / "prepared").is_dir():
            packs.append(_mlebench_pack(child))
    if not packs:
        raise PackError(
            f"No competition pack in {path}: expected pack.json in it or its sub-folders, "
            "or MLE-bench prepared data (<data>/<competition id>/prepared/{public,private})."
        )
    return packs


def _inside(folder: Path, relative: str | None, *, what: str, required: bool) -> Path | None:
    if not relative:
        if required:
            raise PackError(f"{folder / 'pack.json'}: '{what}' is required.")
        return None
    candidate = (folder / relative).resolve()
    if not candidate.is_relative_to(folder.resolve()):
        raise PackError(f"{folder / 'pack.json'}: '{what}' ({relative}) points outside the pack folder.")
    if not candidate.is_file():
        if required:
            raise PackError(f"{folder / 'pack.json'}: '{what}' names {relative}, which does not exist.")
        return None
    return candidate


def _our_pack(folder: Path) -> FoundPack:
    try:
        spec = json.loads((folder / "pack.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PackError(f"{folder / 'pack.json'} is not valid JSON: {exc}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("competition_id"), str):
        raise PackError(f"{folder / 'pack.json'}: 'competition_id' (a string) is required.")
    grader = spec.get("grader")
    if grader is not None and not (isinstance(grader, dict) and isinstance(grader.get("name"), str)):
        raise PackError(f'{folder / "pack.json"}: \'grader\' must be {{"name": ..., "params": {{...}}}}.')
    made_for = spec.get("leaderboard_answers_sha256", "")
    if not (isinstance(made_for, str) and (made_for == "" or re.fullmatch(r"[0-9a-f]{64}", made_for))):
        raise PackError(f"{folder / 'pack.json'}: 'leaderboard_answers_sha256' must be 64 lowercase hex digits.")
    return FoundPack(
        competition_id=spec["competition_id"],
        folder=folder,
        layout="portal",
        answers=_inside(folder, spec.get("answers"), what="answers", required=True),
        sample_submission=_inside(folder, spec.get("sample_submission"), what="sample_submission", required=False),
        description=_inside(folder, spec.get("description"), what="description", required=False),
        leaderboard=_inside(folder, spec.get("leaderboard"), what="leaderboard", required=False),
        grader=grader,
        synthetic=spec.get("synthetic") is True,
        leaderboard_answers_sha256=made_for,
        public=_public_folder(folder, spec.get("public")),
    )


def _public_folder(folder: Path, relative: object) -> Path | None:
    if relative is None:
        default = folder / "public"
        return default if default.is_dir() else None
    if not isinstance(relative, str) or not relative:
        raise PackError(f"{folder / 'pack.json'}: 'public' must name a folder inside the pack.")
    candidate = (folder / relative).resolve()
    if not candidate.is_relative_to(folder.resolve()) or not candidate.is_dir():
        raise PackError(f"{folder / 'pack.json'}: 'public' ({relative}) is not a folder inside the pack.")
    return candidate


def _mlebench_pack(folder: Path) -> FoundPack:
    description = folder / "prepared" / "public" / "description.md"
    leaderboard = folder / "leaderboard.csv"
    return FoundPack(
        competition_id=folder.name,
        folder=folder,
        layout="mlebench",
        answers=None,
        sample_submission=None,
        description=description if description.is_file() else None,
        leaderboard=leaderboard if leaderboard.is_file() else None,
        grader=None,
        public=public if (public := folder / "prepared" / "public").is_dir() else None,
    )


def resolve_mlebench_file(pack: FoundPack, relative: str, *, what: str) -> Path:
    """A file named by the competition's config (e.g. prepared/private/test.csv) inside an MLE-bench pack."""
    if not relative:
        raise PackError(f"{pack.competition_id}: the registry does not say where its {what} file is.")
    candidate = (pack.folder / relative).resolve()
    if not candidate.is_relative_to(pack.folder.resolve()) or not candidate.is_file():
        raise PackError(f"{pack.folder}: the {what} file {relative} is missing.")
    return candidate


def read_description(path: Path | None) -> str:
    if path is None:
        return ""
    if path.stat().st_size > MAX_DESCRIPTION_BYTES:
        raise PackError(f"{path} is larger than {MAX_DESCRIPTION_BYTES} bytes; a description should be text.")
    return path.read_text(errors="replace")


def write_public_archive(*, public: Path, answers: Path, target: Path) -> None:
    """The public data folder as a .tar.gz for hosted runs' workers: regular files and folders only, in a
    fixed order. A folder holding the answers file, or a link, is refused: nothing private may leave."""
    public = public.resolve()
    if answers.resolve().is_relative_to(public):
        raise PackError(f"{public}: the public data folder holds the answers file {answers.name}; move it out.")
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(public.rglob("*")):
            relative = path.relative_to(public)
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                raise PackError(f"{public}: {relative} is a link or a special file; public data holds plain files.")
            info = archive.gettarinfo(str(path), arcname=str(relative))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = 0o755 if path.is_dir() else 0o644
            if path.is_dir():
                archive.addfile(info)
            else:
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
