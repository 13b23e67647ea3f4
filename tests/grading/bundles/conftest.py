from pathlib import Path

import pytest


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    """Where the test's archives are written."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    return folder


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """Where a bundle is extracted; its parent must be empty again after any refusal."""
    parent = tmp_path / "extracted"
    parent.mkdir()
    return parent / "bundle"
