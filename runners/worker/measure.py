"""What the worker measures of itself, sent beside what it declares when it registers: the GPUs the driver
reports (nvidia-smi, else NVML through pynvml where it is installed), the CPUs this process may use and the
machine's memory. The maintainer who approves the worker sees both; nothing here decides anything.

Each part that cannot be measured is left out, never guessed: a machine without the driver sends no `gpus`
and says why in `gpu_source`.
"""

import logging
import os
import shutil
import subprocess
from typing import Any

from runners.worker.config import _memory_gb

log = logging.getLogger(__name__)

NVIDIA_SMI_TIMEOUT_SECONDS = 20


def _gpus_from_nvidia_smi(binary: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [binary, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=NVIDIA_SMI_TIMEOUT_SECONDS,
        check=True,
    ).stdout
    gpus = []
    for line in out.splitlines():
        if not line.strip():
            continue
        name, _, memory_mib = line.rpartition(",")
        gpus.append({"model": name.strip()[:100], "memory_gb": round(float(memory_mib) / 1024, 1)})
    return gpus


def _gpus_from_nvml() -> list[dict[str, Any]]:
    import pynvml  # type: ignore[import-not-found]  # optional: only where the operator installed it

    pynvml.nvmlInit()
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
            gpus.append(
                {
                    "model": (name.decode() if isinstance(name, bytes) else str(name))[:100],
                    "memory_gb": round(memory / 1024**3, 1),
                }
            )
        return gpus
    finally:
        pynvml.nvmlShutdown()


def measure_gpus(nvidia_smi: str | None = None) -> dict[str, Any]:
    """{"gpus": [...], "gpu_source": how} or, where no driver answers, {"gpu_source": why} alone."""
    binary = nvidia_smi or shutil.which("nvidia-smi")
    if binary:
        try:
            return {"gpus": _gpus_from_nvidia_smi(binary), "gpu_source": "nvidia-smi"}
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            log.warning("nvidia-smi did not answer (%s); trying NVML", exc)
    try:
        return {"gpus": _gpus_from_nvml(), "gpu_source": "NVML"}
    except ImportError:
        return {"gpu_source": "no NVIDIA driver found (nvidia-smi is not on PATH, pynvml is not installed)"}
    except Exception as exc:  # pynvml raises its own NVMLError kinds
        return {"gpu_source": f"NVML failed: {exc}"[:200]}


def measure(nvidia_smi: str | None = None) -> dict[str, Any]:
    """The `measured` field of register/."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 0
    measured: dict[str, Any] = {**measure_gpus(nvidia_smi), "cpus": float(cpus)}
    memory = _memory_gb()
    if memory:
        measured["memory_gb"] = memory
    return measured
