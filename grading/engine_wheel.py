"""The engine's wheel (mle-portal-engine): built from this checkout, kept in the data folder, served to anyone.

The wheel holds ``grading/__init__.py`` and ``grading/engine/**`` and nothing else; its configuration is
``packaging/engine/pyproject.toml``. To build it, those files are copied into a staging folder (so setuptools
never sees the rest of the repository) and setuptools' own build backend runs there, in a process of its own.
The build is reproducible: a fixed ``SOURCE_DATE_EPOCH`` and fixed file modes give the same bytes, hence the
same SHA-256, on every machine with the same sources and setuptools.

``ensure_engine_wheel(folder)`` builds it once per engine version and sources: the wheel and a small record
(``<wheel>.json``: version, file name, SHA-256, and the digest of the sources it was built from) stay in the
folder, and a later call builds again only when the sources changed. ``scripts/run`` builds it at start-up
into ``PORTAL_DATA_DIR/engine`` (``scripts/build_engine_wheel``); the portal (``engine_wheel()``) builds it there
on first use when it is missing. Framework-free apart from ``engine_wheel()``, which reads the settings.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from grading.engine import ENGINE_VERSION
from grading.engine.hashing import file_sha256

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "packaging" / "engine"
DISTRIBUTION = "mle_portal_engine"
# 1980-01-01, the earliest time a zip file can hold: every file of the wheel gets it.
SOURCE_DATE_EPOCH = "315532800"
BUILD_TIMEOUT_SECONDS = 300
# The sources each ENGINE_VERSION was released with: a wheel's version names one set of sources, so changing the
# engine means a new ENGINE_VERSION (tests/grading/engine/test_engine_wheel.py holds to it).
RELEASED = CONFIG / "sources.json"


class WheelBuildFailed(Exception):
    """setuptools did not make the wheel; the message carries the end of its output."""


@dataclass(frozen=True)
class EngineWheel:
    version: str
    wheel: str  # the file name
    path: Path
    sha256: str

    def public(self) -> dict[str, str]:
        """What the API serves (with the download URL added there)."""
        return {"version": self.version, "wheel": self.wheel, "sha256": self.sha256}


def wheel_name(version: str = ENGINE_VERSION) -> str:
    return f"{DISTRIBUTION}-{version}-py3-none-any.whl"


def engine_files() -> Iterator[tuple[str, Path]]:
    """(path in the wheel's sources, file) for every file that goes into the wheel, in a fixed order: the
    grading package's empty __init__, the engine's files (no caches, no hidden files), the packaging
    configuration."""
    yield "grading/__init__.py", REPO / "grading" / "__init__.py"
    engine = REPO / "grading" / "engine"
    for path in sorted(engine.rglob("*")):
        relative = path.relative_to(REPO)
        hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
        if path.is_file() and not hidden and path.suffix not in (".pyc", ".pyo"):
            yield relative.as_posix(), path
    for name in ("pyproject.toml", "README.md"):
        yield name, CONFIG / name


def sources_digest() -> str:
    """SHA-256 over the wheel's source files (their paths and contents): what the wheel is built from."""
    digest = hashlib.sha256()
    for name, path in engine_files():
        digest.update(f"{name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def build_engine_wheel(folder: Path) -> EngineWheel:
    """Build the wheel into folder (created when missing), replacing one of the same name; nothing else is left
    there, even when the build fails."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    digest = sources_digest()
    with tempfile.TemporaryDirectory(prefix=".engine-build-", dir=folder) as scratch:
        staging, out = Path(scratch) / "src", Path(scratch) / "out"
        for name, path in engine_files():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            target.chmod(0o644)
        out.mkdir()
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)  # setuptools reads the version from the staged sources, not from a checkout
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])"]
            + [str(out)],
            cwd=staging,
            env=env,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_SECONDS,
        )
        built = out / wheel_name()
        if done.returncode != 0 or not built.is_file():
            tail = (done.stdout + done.stderr)[-2000:]
            raise WheelBuildFailed(f"setuptools did not build {wheel_name()} (exit {done.returncode}): {tail}")
        sha256 = file_sha256(built)
        os.replace(built, folder / built.name)
        record = {"version": ENGINE_VERSION, "wheel": built.name, "sha256": sha256, "sources_sha256": digest}
        staged_record = Path(scratch) / "record.json"
        staged_record.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(staged_record, folder / f"{built.name}.json")
    return EngineWheel(version=ENGINE_VERSION, wheel=built.name, path=folder / built.name, sha256=sha256)


def _recorded(folder: Path, digest: str) -> EngineWheel | None:
    """The wheel already in folder, when it is this version's, built from these sources, and intact."""
    record_path = folder / f"{wheel_name()}.json"
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return None
    path = folder / wheel_name()
    if record.get("sources_sha256") != digest or record.get("version") != ENGINE_VERSION or not path.is_file():
        return None
    if file_sha256(path) != record.get("sha256"):
        return None  # changed on disk since it was built: built again rather than served
    return EngineWheel(version=ENGINE_VERSION, wheel=path.name, path=path, sha256=record["sha256"])


def ensure_engine_wheel(folder: Path) -> EngineWheel:
    """This engine's wheel in folder: the one there when it was built from the current sources, else a new one.
    Processes that ask at once build it once (a lock in the folder)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    digest = sources_digest()
    found = _recorded(folder, digest)
    if found is not None:
        return found
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _recorded(folder, digest) or build_engine_wheel(folder)


_served: dict[Path, EngineWheel] = {}


def engine_wheel() -> EngineWheel:
    """The wheel the portal serves, from PORTAL_DATA_DIR/engine (built there on first use when missing). Checked
    once per process: the sources of a running process do not change."""
    from django.conf import settings

    folder = Path(settings.DATA_DIR) / "engine"
    wheel = _served.get(folder)
    if wheel is None or not wheel.path.is_file():
        wheel = _served[folder] = ensure_engine_wheel(folder)
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/build_engine_wheel", description="Build the engine's wheel (mle-portal-engine) into a folder."
    )
    default = Path(os.environ.get("PORTAL_DATA_DIR") or REPO / "var") / "engine"
    parser.add_argument("--out", type=Path, default=default, help=f"the folder (default: {default})")
    parser.add_argument("--force", action="store_true", help="build again even when an up-to-date wheel is there")
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"record the engine's sources as those of ENGINE_VERSION {ENGINE_VERSION} ({RELEASED.relative_to(REPO)})",
    )
    args = parser.parse_args(argv)
    if args.record:
        RELEASED.write_text(
            json.dumps({"version": ENGINE_VERSION, "sources_sha256": sources_digest()}, indent=2) + "\n"
        )
        print(f"recorded the sources of engine {ENGINE_VERSION} in {RELEASED.relative_to(REPO)}")
        return 0
    try:
        wheel = build_engine_wheel(args.out) if args.force else ensure_engine_wheel(args.out)
    except (WheelBuildFailed, subprocess.TimeoutExpired, OSError) as exc:
        print(f"build_engine_wheel: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({**asdict(wheel), "path": str(wheel.path)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
