"""benchmark_version: grading-code commit or benchmark version other than the board's."""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext


def check(context: CheckContext) -> list[FlagData]:
    manifest, board = context.manifest, context.board
    if manifest is None:
        return []
    declared = {
        "name": manifest.benchmark.name,
        "version": manifest.benchmark.version,
        "commit": manifest.benchmark.commit,
    }
    expected = {"name": board.name, "version": board.version, "commit": board.commit}
    differ = []
    if (
        declared["version"]
        and board.version
        and declared["version"].lower().lstrip("v") != board.version.lower().lstrip("v")
    ):
        differ.append(f"version {declared['version']} (board: {board.version})")
    commit = (declared["commit"] or "").lower()
    if (
        commit
        and board.commit
        and not (board.commit.lower().startswith(commit) or commit.startswith(board.commit.lower()))
    ):
        differ.append(f"commit {commit[:12]} (board: {board.commit[:12]})")
    evidence = {"file": "manifest.json", "declared": declared, "board": expected}
    if differ:
        return [
            FlagData(
                code="benchmark_version",
                severity="warning",
                key="manifest",
                message="The run used another benchmark than the board's: " + "; ".join(differ) + ".",
                evidence=evidence,
            )
        ]
    if not declared["commit"] and not declared["version"]:
        return [
            FlagData(
                code="benchmark_version",
                severity="info",
                key="undeclared",
                message="The manifest names neither the benchmark version nor the grading-code commit.",
                evidence=evidence,
            )
        ]
    return []
