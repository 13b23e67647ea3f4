"""nonstandard_resources: hardware or runtime beyond the reference setup (24 h, 36 vCPU, 440 GB, one 24 GB A10).

A GPU whose memory is not declared is the reference only when its model names the A10 as a whole token,
case-insensitively: "A10", "NVIDIA A10", "a10 24GB", "NVIDIA-A10-24Q" are, and so is AWS's A10G (the same
24 GB chip, no faster); "A100", "A1000" or "A10X" are not, since the token goes on with letters or digits.
A GPU with declared memory is judged by its memory and count.
"""

import re

from grading.checks.base import FlagData
from grading.checks.comparability import (
    REFERENCE_GPU_COUNT,
    REFERENCE_GPU_MEMORY_GB,
    REFERENCE_GPU_MODEL,
    REFERENCE_RAM_GB,
    REFERENCE_RUNTIME_HOURS,
    REFERENCE_VCPUS,
)
from grading.checks.context import CheckContext

REFERENCE = {
    "runtime_hours": REFERENCE_RUNTIME_HOURS,
    "vcpus": REFERENCE_VCPUS,
    "ram_gb": REFERENCE_RAM_GB,
    "gpus": f"{REFERENCE_GPU_COUNT} × {REFERENCE_GPU_MODEL} {REFERENCE_GPU_MEMORY_GB:g} GB",
}
# The reference model as a token: nothing alphanumeric on either side (A10G, AWS's variant, allowed).
REFERENCE_GPU = re.compile(rf"(?<![a-z0-9]){re.escape(REFERENCE_GPU_MODEL)}g?(?![a-z0-9])", re.I)


def check(context: CheckContext) -> list[FlagData]:
    manifest = context.manifest
    if manifest is None:
        return []
    hardware = manifest.hardware
    gpus = sum(gpu.count for gpu in hardware.gpus)
    declared = {
        "runtime_hours": manifest.runtime_hours,
        "vcpus": hardware.vcpus,
        "ram_gb": hardware.ram_gb,
        "gpus": ", ".join(
            f"{g.count} × {g.model}" + (f" {g.memory_gb:g} GB" if g.memory_gb else "") for g in hardware.gpus
        )
        or None,
    }
    beyond = []
    if manifest.runtime_hours is not None and manifest.runtime_hours > REFERENCE_RUNTIME_HOURS:
        beyond.append(f"runtime {manifest.runtime_hours:g} h > {REFERENCE_RUNTIME_HOURS:g} h")
    if hardware.vcpus is not None and hardware.vcpus > REFERENCE_VCPUS:
        beyond.append(f"{hardware.vcpus} vCPUs > {REFERENCE_VCPUS}")
    if hardware.ram_gb is not None and hardware.ram_gb > REFERENCE_RAM_GB:
        beyond.append(f"{hardware.ram_gb:g} GB RAM > {REFERENCE_RAM_GB:g} GB")
    if gpus > REFERENCE_GPU_COUNT:
        beyond.append(f"{gpus} GPUs > {REFERENCE_GPU_COUNT}")
    for gpu in hardware.gpus:
        if gpu.memory_gb is not None and gpu.memory_gb > REFERENCE_GPU_MEMORY_GB:
            beyond.append(f"{gpu.model} with {gpu.memory_gb:g} GB > {REFERENCE_GPU_MEMORY_GB:g} GB")
        elif gpu.memory_gb is None and not REFERENCE_GPU.search(gpu.model):
            beyond.append(f"GPU {gpu.model} is not the reference {REFERENCE_GPU_MODEL}")
    evidence = {"file": "manifest.json", "declared": declared, "reference": REFERENCE}
    if beyond:
        return [
            FlagData(
                code="nonstandard_resources",
                severity="warning",
                key="manifest",
                message="Beyond the reference setup: " + "; ".join(beyond) + ".",
                evidence={**evidence, "beyond": beyond},
            )
        ]
    missing = [name for name, value in declared.items() if value is None]
    if missing:
        return [
            FlagData(
                code="nonstandard_resources",
                severity="info",
                key="undeclared",
                message=f"The manifest does not declare {', '.join(missing)}: the resources cannot be "
                "compared with the reference setup.",
                evidence={**evidence, "undeclared": missing},
            )
        ]
    return []
