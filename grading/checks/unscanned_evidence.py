"""unscanned_evidence: no evidence, no comparable entry. The fairness checks that read logs and code can only
clear what they read, so an entry is held when part of its evidence was not read:

- ``no_logs``: a run with no log at all (no run.log and nothing under logs/; a hosted run's run.log is the
  worker's capture, which counts even when empty);
- ``scan_cut_short``: the scan budget (CHECK_SCAN_MAX_BYTES) ran out before every file was read;
- ``unreadable``: a file the scanner could not decode (a damaged archive, one past the limits against archive
  bombs, an encrypted member).

Every finding is blocking: a reviewer clears it after reading what the scan could not, or the team uploads again.
"""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext

CODE = "unscanned_evidence"
SHOWN = 20  # runs or files named in a flag's evidence


def _competitions(labels: list[str]) -> list[str]:
    return sorted({label.split("/")[2].rsplit("_", 1)[0] for label in labels if label.count("/") >= 2})


def _listed(labels: list[str]) -> str:
    return ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")


def check(context: CheckContext) -> list[FlagData]:
    flags = []
    silent = [run for run in context.runs if run.folder is not None and not run.has_log(hosted=context.hosted)]
    if silent:
        paths = [run.run_path for run in silent]
        flags.append(
            FlagData(
                code=CODE,
                severity="blocking",
                key="no_logs",
                tiers=context.tiers_of_all(run.competition_id for run in silent),
                message=f"{len(silent)} run(s) have no log to check (no run.log, nothing under logs/): "
                f"{_listed(paths)}. Every run of a comparable entry needs the log its agent wrote; upload the "
                "bundle again with each run's run.log or logs/.",
                evidence={"runs": paths[:SHOWN], "runs_total": len(paths)},
            )
        )
    scan = context.scan
    if scan.truncated:
        unread = scan.unread
        flags.append(
            FlagData(
                code=CODE,
                severity="blocking",
                key="scan_cut_short",
                tiers=context.tiers_of_all(_competitions(unread)),
                message=f"The scan stopped at its budget of {context.settings.scan_max_bytes} bytes "
                f"(CHECK_SCAN_MAX_BYTES) after {scan.bytes_scanned} bytes; {len(unread)} file(s) were not read "
                f"in full: {_listed(unread)}. Leave out of the run folders what is neither log nor code (data, "
                "checkpoints), or ask the maintainers to re-check with a larger budget.",
                evidence={
                    "bytes_scanned": scan.bytes_scanned,
                    "budget": context.settings.scan_max_bytes,
                    "files": unread[:SHOWN],
                    "files_total": len(unread),
                },
            )
        )
    if scan.unreadable:
        files = [where for where, _ in scan.unreadable]
        flags.append(
            FlagData(
                code=CODE,
                severity="blocking",
                key="unreadable",
                tiers=context.tiers_of_all(_competitions(files)),
                message=f"{len(files)} file(s) could not be decoded for the scan: "
                + "; ".join(f"{where} ({why})" for where, why in scan.unreadable[:3])
                + (f" and {len(files) - 3} more" if len(files) > 3 else "")
                + ". Upload them again undamaged and unencrypted, unpacked if they are large archives.",
                evidence={
                    "files": [{"file": where, "why": why} for where, why in scan.unreadable[:SHOWN]],
                    "files_total": len(files),
                },
            )
        )
    return flags
