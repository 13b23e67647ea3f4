"""The registry depends on the grading engine only: grading imports competitions, never the reverse."""

import ast
from pathlib import Path

COMPETITIONS = Path(__file__).resolve().parents[2] / "competitions"


def _imported_modules(path: Path) -> list[str]:
    modules: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "grading":
            modules.extend(f"grading.{alias.name}" for alias in node.names)  # from grading import engine
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.append(node.module)
    return modules


def test_competitions_imports_nothing_of_grading_but_the_engine():
    offending = [
        f"{path.relative_to(COMPETITIONS.parent)}: {module}"
        for path in sorted(COMPETITIONS.rglob("*.py"))
        for module in _imported_modules(path)
        if (module == "grading" or module.startswith("grading."))
        and not (module == "grading.engine" or module.startswith("grading.engine."))
    ]
    assert offending == []
