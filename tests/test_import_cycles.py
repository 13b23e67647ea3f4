"""No import cycle between product modules, counting imports inside functions too.

The graph is read from the source with ``ast``, not from ``sys.modules``, so an import inside a function
counts as much as one at the top of a module: it only hides a cycle until the function first runs.

An edge goes to the module an import names: ``from grading.services import pipeline`` to
``grading.services.pipeline``, ``from grading.bundles import Bundle`` to the package ``grading.bundles``.
Importing a submodule also runs its parents' ``__init__``; those implicit edges are left out, since a
package's ``__init__`` re-exporting its own submodules is an ordinary layout, not a cycle. Imports under
``if TYPE_CHECKING:`` never run and are left out. Migrations are product modules like any other (nothing
imports them, so they can only point outward). Names resolved at run time (Celery task names, ``include()``
and ``INSTALLED_APPS`` strings, ``importlib``) are not imports and are not edges.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_PACKAGES = ("portal", "grading", "competitions", "leaderboard", "runners")


def product_modules() -> dict[str, Path]:
    modules = {}
    for package in PRODUCT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, *, in_function: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that may run, with whether it sits inside a function."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, in_function
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports(other, in_function=in_function)
        else:
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from _imports(child, in_function=nested)


def _targets(node: ast.Import | ast.ImportFrom, *, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The product modules an import names: `from pkg import sub` the submodule, `from pkg import thing` pkg."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & known
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    named = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names}
    return named & known


def module_imports(source: str, *, module: str, is_package: bool, known: set[str]) -> tuple[set[str], int]:
    """The product modules one module imports, and how many of its imports sit inside a function."""
    targets: set[str] = set()
    inside = 0
    for node, in_function in _imports(ast.parse(source)):
        targets |= _targets(node, module=module, is_package=is_package, known=known)
        inside += in_function
    return targets - {module}, inside


def import_graph() -> tuple[dict[str, set[str]], dict[str, int]]:
    """Edges between product modules, and how many imports inside functions each module has."""
    modules = product_modules()
    edges: dict[str, set[str]] = {}
    local_imports: dict[str, int] = {}
    for name, path in modules.items():
        edges[name], local_imports[name] = module_imports(
            path.read_text(), module=name, is_package=path.name == "__init__.py", known=set(modules)
        )
    return edges, local_imports


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_product_modules_import_no_cycle():
    edges, _ = import_graph()
    found = cycles(edges)
    assert not found, "import cycles between product modules:\n" + "\n".join(
        " <-> ".join(component) for component in found
    )


def test_the_graph_counts_imports_inside_functions_and_skips_type_only_ones():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from grading import models\n"
        "if TYPE_CHECKING:\n"
        "    from runners.models import HostedRun\n"
        "def f():\n"
        "    from .queue import send\n"
        "    from grading.services import Missing\n"
    )
    known = {"grading", "grading.models", "grading.queue", "grading.services", "grading.tasks", "runners.models"}
    targets, inside = module_imports(source, module="grading.tasks", is_package=False, known=known)
    assert targets == {"grading.models", "grading.queue", "grading.services"}
    assert inside == 2


def test_a_cycle_is_a_strongly_connected_component():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
