"""Figures of the code's layout that issue 21 asks to measure before and after a change, read with ``ast``:

    .venv/bin/python benchmarks/house_figures.py [--json]

- product modules and lines (portal, grading, competitions, leaderboard, runners; migrations and the example
  agent that runs inside a container left out);
- import cycles between product modules, counting imports inside functions (tests/test_import_cycles.py's graph);
- imports inside functions in product code;
- modules over 400 lines, functions over 80 lines (each listed);
- functions with an unannotated parameter or return (what mypy's disallow_untyped_defs refuses);
- test lines per product line;
- each product package's share of the product's lines, and the framework-free cores' (grading/engine,
  grading/bundles, grading/checks: nothing in them imports Django).

Pairs of duplicated lines are counted by the tool named in the developers' guide (`duplicates`), not here.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_import_cycles import cycles, import_graph  # noqa: E402

PACKAGES = ("portal", "grading", "competitions", "leaderboard", "runners")
CORES = ("grading/engine", "grading/bundles", "grading/checks")
LONG_MODULE = 400
LONG_FUNCTION = 80


def _product_files() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and "agents" not in path.parts  # runners/agents: the example agent's code
    ]


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _untyped(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if arguments and arguments[0].arg in ("self", "cls"):
        arguments = arguments[1:]
    extra = [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
    returns_unstated = fn.returns is None and not (fn.name == "__init__" and (arguments or extra))  # as mypy reads it
    return returns_unstated or any(a.annotation is None for a in [*arguments, *extra])


def figures() -> dict:
    files = _product_files()
    lines = {path: _lines(path) for path in files}
    total = sum(lines.values())
    long_functions, untyped, inner_imports, functions = [], 0, 0, 0
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions += 1
                untyped += _untyped(node)
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONG_FUNCTION:
                    long_functions.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length})")
                inner_imports += sum(
                    isinstance(inner, (ast.Import, ast.ImportFrom)) for inner in ast.walk(node) if inner is not node
                )
    edges, _ = import_graph()
    tests = sum(_lines(path) for path in sorted((ROOT / "tests").rglob("*.py")))
    by_package = {
        package: sum(n for p, n in lines.items() if p.parts[len(ROOT.parts)] == package) for package in PACKAGES
    }
    cores = sum(n for p, n in lines.items() if any(str(p.relative_to(ROOT)).startswith(core) for core in CORES))
    return {
        "product modules": len(files),
        "product lines": total,
        "import cycles": len(cycles(edges)),
        "imports inside functions": inner_imports,
        f"modules over {LONG_MODULE} lines": sorted(
            f"{p.relative_to(ROOT)} ({n})" for p, n in lines.items() if n > LONG_MODULE
        ),
        f"functions over {LONG_FUNCTION} lines": sorted(long_functions),
        "functions": functions,
        "functions with an untyped parameter or return": untyped,
        "test lines per product line": round(tests / total, 2),
        "share of product lines": {package: f"{100 * n / total:.0f} %" for package, n in by_package.items()},
        "framework-free cores' share": f"{100 * cores / total:.0f} %",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    found = figures()
    if parser.parse_args().json:
        print(json.dumps(found, indent=2))
        return
    for name, value in found.items():
        if isinstance(value, list):
            print(f"{name}: {len(value)}")
            for item in value:
                print(f"    {item}")
        elif isinstance(value, dict):
            print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in value.items()))
        else:
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
