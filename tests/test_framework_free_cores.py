"""The framework-free cores stay free of the framework: nothing in them imports Django, DRF, Celery (but the
GPU worker, which is a Celery app of its own) or a module of the portal's apps outside its own core (counting
imports inside functions), so each can be read, tested and installed alone (the engine is its own wheel).

Read from the source with ``ast``, as tests/test_import_cycles.py reads the import graph.
"""

import ast
from pathlib import Path

from tests.test_import_cycles import _imports

ROOT = Path(__file__).resolve().parent.parent
# Each core and what it may import of the portal's own packages besides itself.
CORES = {
    "grading/engine": ("grading.engine",),
    "grading/bundles": ("grading.bundles", "grading.engine"),
    "grading/checks": ("grading.checks", "grading.engine", "grading.bundles"),
    # The rules the server and the worker share live beside the worker, framework-free too.
    "runners/worker": ("runners.worker", "runners.redaction", "runners.envnames", "grading.engine"),
}
FRAMEWORK = ("django", "rest_framework", "drf_spectacular", "allauth", "celery", "kombu")
OWN_FRAMEWORK = {"runners/worker": ("celery", "kombu")}  # the worker is a Celery app, and nothing of the portal's
APPS = ("portal", "grading", "competitions", "leaderboard", "runners")


def _named(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [] if node.level else [node.module or ""]  # a relative import stays inside its package


def forbidden_imports(folder: str, allowed: tuple[str, ...]) -> list[str]:
    framework_names = set(FRAMEWORK) - set(OWN_FRAMEWORK.get(folder, ()))
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node, _ in _imports(ast.parse(path.read_text())):
            for name in _named(node):
                top = name.split(".")[0]
                framework = top in framework_names
                app = top in APPS and not any(name == a or name.startswith(a + ".") for a in allowed)
                if framework or app:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    return found


def test_the_framework_free_cores_import_no_framework_and_no_app():
    found = [line for folder, allowed in CORES.items() for line in forbidden_imports(folder, allowed)]
    assert found == []


def test_the_check_sees_an_import_inside_a_function(tmp_path, monkeypatch):
    core = tmp_path / "grading" / "engine"
    core.mkdir(parents=True)
    leak = "def f():\n    from django.conf import settings\n    from grading.models import Run\n"
    (core / "leak.py").write_text(leak)
    monkeypatch.setattr("tests.test_framework_free_cores.ROOT", tmp_path)
    assert forbidden_imports("grading/engine", ("grading.engine",)) == [
        "grading/engine/leak.py:2 imports django.conf",
        "grading/engine/leak.py:3 imports grading.models",
    ]
