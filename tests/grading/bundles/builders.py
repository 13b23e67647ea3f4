"""Small bundle builders for the tests: archives are made in code, member by member."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KNOWN = frozenset({"spaceship-titanic", "aerial-cactus-identification", "denoising-dirty-documents"})
GROUP = "2024-08-01T10-00-00-GMT_run-group_aide"
UUID_A = "1b2f0c44-6f2e-4a44-9d43-0a1f1e3b9a01"
UUID_B = "7c9d2e10-3a5b-4c6d-8e7f-9a0b1c2d3e4f"
UUID_C = "e3d4c5b6-a7f8-4901-b2c3-d4e5f6a7b8c9"


def manifest(**overrides: Any) -> dict[str, Any]:
    """SPEC section 2's example manifest, with top-level keys replaced."""
    data: dict[str, Any] = {
        "schema": "bundle-v1",
        "agent": {
            "name": "AIDE",
            "version": "0.4",
            "source_url": "https://example.org/aide",
            "commit": "abc123",
            "open_source": True,
        },
        "llms": ["o1-preview"],
        "benchmark": {"name": "mle-bench", "version": "v1", "commit": "783b15af", "split": "split75"},
        "seeds": 3,
        "runtime_hours": 24,
        "hardware": {"gpus": [{"model": "A10", "memory_gb": 24, "count": 1}], "vcpus": 36, "ram_gb": 440},
        "internet_access": True,
        "disclosures": {
            "test_set_feedback": False,
            "uses_known_leakage": False,
            "human_assistance": False,
            "solutions_in_prompt": False,
            "other_models": [],
        },
        "notes": "free text",
    }
    data.update(overrides)
    return data


def run_files(
    competition_id: str, uuid: str, *, group: str = GROUP, submission: bytes | None = b"id,label\n1,0\n"
) -> dict[str, bytes]:
    run = f"runs/{group}/{competition_id}_{uuid}"
    files = {
        f"{run}/run.log": b"started\n",
        f"{run}/logs/agent.log": b"step 1\n",
        f"{run}/code/solution.py": b"pass\n",
    }
    if submission is not None:
        files[f"{run}/submission/submission.csv"] = submission
    return files


def bundle_files(*, manifest_data: dict[str, Any] | None = None, **runs: bytes) -> dict[str, bytes]:
    """A valid bundle: a manifest and two runs of spaceship-titanic in one group."""
    files = {"manifest.json": json.dumps(manifest_data or manifest()).encode()}
    files.update(run_files("spaceship-titanic", UUID_A))
    files.update(run_files("spaceship-titanic", UUID_B))
    files.update(runs)
    return files


def write_tar_gz(path: Path, files: dict[str, bytes], *, extra: Sequence[tarfile.TarInfo] = ()) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return path


def write_zip(path: Path, files: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def tar_member(name: str, kind: bytes, *, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def leftovers(folder: Path) -> list[str]:
    """What is in ``folder`` (the extraction target's parent) after a refusal: must be nothing."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []
