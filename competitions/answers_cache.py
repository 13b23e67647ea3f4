"""Private answers kept parsed on local disk, so a grading process loads them in a fraction of a CSV parse.

Parsing the largest answers files takes up to a second (a million rows of 56 columns); every worker that
grades a competition parses them once, and with several workers the same file is parsed by each. A pickle
of the parsed frame loads 5-20x faster and gives the very same frame (dtypes included), so graders cannot
tell the difference. Entries are keyed by the answers' SHA-256 (recorded at pack import) and the pandas
version, written at pack import and on first use, replaced atomically, and never served: they live under
PORTAL_DATA_DIR/cache/answers beside the other private local copies.

It belongs to the competition registry, which writes entries when it imports a pack; grading reads them
through :func:`answers_load`. Only the framework-free engine and portal helpers are imported here, so the
registry never depends on the grading app.
"""

import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings

from grading.engine import csvio
from portal.private_files import private_folder

logger = logging.getLogger(__name__)


def _folder() -> Path:
    return Path(settings.DATA_DIR) / "cache" / "answers"


def answers_cache_file(sha256: str) -> Path:
    return _folder() / f"{sha256}-pandas-{pd.__version__}.pickle"


def answers_cache_store(*, sha256: str, answers: Any) -> None:
    """Write the parsed answers for sha256 (atomically: a reader sees the old entry, none, or the new one)."""
    if not sha256:
        return
    folder = private_folder(_folder())
    # mkstemp makes the file 0600, and os.replace keeps that mode: only the portal's user reads the answers.
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".partial-")
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(answers, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, answers_cache_file(sha256))
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def answers_cache_drop(sha256: str) -> None:
    """Forget every cached parse of these answers (all pandas versions)."""
    if sha256:
        for entry in _folder().glob(f"{sha256}-*.pickle"):
            entry.unlink(missing_ok=True)


def answers_load(*, path: Path, sha256: str) -> Any:
    """The parsed answers at path: from the cache when it holds them, else parsed and cached."""
    if sha256:
        try:
            with answers_cache_file(sha256).open("rb") as cached:
                return pickle.load(cached)
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001 - a damaged entry is rebuilt from the answers file
            logger.warning("cached answers %s unreadable (%s); parsing the answers file again", sha256[:12], exc)
    answers = csvio.load_answers(path)
    try:
        answers_cache_store(sha256=sha256, answers=answers)
    except OSError as exc:  # a full or read-only disk only costs speed
        logger.warning("could not cache parsed answers %s: %s", sha256[:12], exc)
    return answers
