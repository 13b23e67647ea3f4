"""The engine's wheel, built from this checkout, and a clean virtualenv holding it and nothing of the portal's:
what a reader who recomputes the board installs (session fixtures, shared by the wheel's and verify's tests)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grading.engine_wheel import EngineWheel, build_engine_wheel


@pytest.fixture(scope="session")
def engine_wheel_file(tmp_path_factory) -> EngineWheel:
    return build_engine_wheel(tmp_path_factory.mktemp("engine-wheel"))


@pytest.fixture(scope="session")
def engine_venv(engine_wheel_file, tmp_path_factory) -> Path:
    """A new virtualenv with the wheel pip-installed into it, and its Python's path.

    Slow (about 20 s): pip resolves numpy, pandas, pyarrow and scipy from the package index this machine's pip
    is configured with (here a local mirror and pip's cache) and unpacks them; no Django, no portal code."""
    venv = tmp_path_factory.mktemp("engine-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(engine_wheel_file.path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python
