"""What a worker measures of itself for the maintainer who approves it. The GPU driver cannot run here: a
stand-in nvidia-smi (a script that answers as the real one does to the same query) takes its place."""

import os
from pathlib import Path

from runners.worker.measure import measure

NVIDIA_SMI = """#!/bin/sh
[ "$1" = "--query-gpu=name,memory.total" ] && [ "$2" = "--format=csv,noheader,nounits" ] || exit 9
echo "NVIDIA H100 80GB HBM3, 81559"
echo "NVIDIA H100 80GB HBM3, 81559"
"""


def test_it_reports_the_drivers_gpus_its_cpus_and_memory(tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(NVIDIA_SMI)
    smi.chmod(0o755)
    measured = measure(str(smi))
    assert measured["gpu_source"] == "nvidia-smi"
    assert measured["gpus"] == [{"model": "NVIDIA H100 80GB HBM3", "memory_gb": 79.6}] * 2
    assert measured["cpus"] == len(os.sched_getaffinity(0))
    meminfo = Path("/proc/meminfo").read_text().split()
    assert measured["memory_gb"] == round(int(meminfo[meminfo.index("MemTotal:") + 1]) / 1024**2, 1)


def test_without_a_driver_it_sends_no_gpus_and_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi on it
    measured = measure()
    assert "gpus" not in measured
    assert "no NVIDIA driver found" in measured["gpu_source"] or "NVML" in measured["gpu_source"]


def test_a_driver_that_fails_is_not_taken_for_zero_gpus(tmp_path: Path, monkeypatch) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    measured = measure(str(smi))
    assert "gpus" not in measured and measured["gpu_source"]
