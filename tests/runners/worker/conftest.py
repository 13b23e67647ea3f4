"""Fixtures of the worker's tests: a short work folder (Unix socket paths are limited to 107 bytes, and
pytest's tmp_path can be longer), the stand-in portal, a folder of test agents and a worker configuration."""

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runners.worker.client import PortalClient
from runners.worker.config import WorkerConfig
from tests.runners.worker.portal_stand_in import TOKEN, StandInPortal, StandInServer


@pytest.fixture
def work_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="rw-", dir="/tmp"))
    try:
        yield folder
    finally:
        from runners.worker.public_data import remove_tree

        remove_tree(folder)


@pytest.fixture
def portal() -> Iterator[StandInPortal]:
    with StandInServer() as stand_in:
        yield stand_in


@pytest.fixture
def client(portal: StandInPortal) -> PortalClient:
    return PortalClient(portal.url, TOKEN, timeout=(2, 10), tries=3, backoff_seconds=0.05)


@pytest.fixture
def agents_dir(tmp_path: Path) -> Path:
    """Test agents: add_agent(name, script) writes <agents_dir>/<name>/start.sh; the example agent is there too."""
    folder = tmp_path / "agents"
    shutil.copytree(
        Path(__file__).resolve().parents[3] / "runners" / "agents" / "example-agent", folder / "example-agent"
    )
    return folder


@pytest.fixture
def add_agent(agents_dir: Path) -> Callable[[str, str], Path]:
    def add(name: str, script: str) -> Path:
        (agents_dir / name).mkdir(parents=True, exist_ok=True)
        start = agents_dir / name / "start.sh"
        start.write_text("set -eu\n" + script)
        return start

    return add


@pytest.fixture
def config(portal: StandInPortal, work_dir: Path, agents_dir: Path) -> WorkerConfig:
    return WorkerConfig.from_env(
        {
            "PORTAL_URL": portal.url,
            "PORTAL_WORKER_TOKEN": TOKEN,
            "RUNNER_WORK_DIR": str(work_dir),
            "RUNNER_POLL_SECONDS": "0.05",
            "RUNNER_PROCESS_AGENTS_DIR": str(agents_dir),
            "RUNNER_CPUS": "4",
            "RUNNER_MEMORY_GB": "16",
        }
    )
