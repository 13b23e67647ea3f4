"""format_checks: how often each run asked the format check, and what it was told (hosted runs).

The format check is the only oracle a hosted run's agent has, and it answers valid or why not, never a
score; so asking it is no feedback from the test set. Counting the calls still belongs in the evidence: a
run that asked hundreds of times was searching with it. The portal writes every call it answered into the
run's folder of the bundle it assembles (``format_checks.jsonl``, one JSON object per line: at, valid,
reason), beside the collected folders, where the agent could not write.
"""

import json

from grading.checks.base import FlagData
from grading.checks.context import CheckContext

FILE_NAME = "format_checks.jsonl"
MANY_CALLS = 100  # per run: past this, a warning rather than information
SHOWN_CALLS = 20


def _calls(text: str) -> list[dict]:
    calls = []
    for line in text.splitlines():
        try:
            call = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(call, dict):
            calls.append(call)
    return calls


def check(context: CheckContext) -> list[FlagData]:
    per_run: dict[str, list[dict]] = {}
    for run in context.runs:
        path = run.folder / FILE_NAME if run.folder is not None else None
        if path is not None and path.is_file() and not path.is_symlink():
            per_run[run.run_path] = _calls(path.read_text(errors="replace"))
    if not per_run:
        return []
    total = sum(len(calls) for calls in per_run.values())
    most_path, most = max(per_run.items(), key=lambda item: len(item[1]))
    many = len(most) > MANY_CALLS
    return [
        FlagData(
            code="format_checks",
            severity="warning" if many else "info",
            key="bundle",
            message=f"The agent asked the format check {total} times over {len(per_run)} runs (at most "
            f"{len(most)}, in {most_path})" + (f"; more than {MANY_CALLS} calls in one run." if many else "."),
            evidence={
                "calls_per_run": {path: len(calls) for path, calls in sorted(per_run.items())},
                "invalid_per_run": {
                    path: sum(1 for call in calls if call.get("valid") is False) for path, calls in per_run.items()
                },
                "calls": {path: calls[:SHOWN_CALLS] for path, calls in sorted(per_run.items()) if calls},
            },
        )
    ]
