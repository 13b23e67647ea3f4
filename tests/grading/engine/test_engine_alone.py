"""The engine stands alone: it imports nothing but itself, the standard library and its four dependencies, so
the wheel made of it (packaging/engine/) grades without Django, a database or the rest of the portal.

Read twice: from the source with ``ast`` (imports inside functions count, since they only hide a dependency
until they run), and by running it in a process where Django and every other part of the portal cannot be
imported. tests/grading/engine/test_engine_wheel.py then installs the real wheel in a clean virtualenv.
"""

import ast
import subprocess
import sys
from pathlib import Path

import grading.engine

REPO = Path(__file__).resolve().parents[3]
ENGINE = REPO / "grading" / "engine"
# packaging/engine/pyproject.toml's dependencies (threadpoolctl: the format check's one-thread limit)
DEPENDENCIES = {"numpy", "pandas", "scipy", "pyarrow", "threadpoolctl"}


def imported_names(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement of the file names, with its line; relative imports resolved."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    package = parts[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] if node.level else [])
            module = ".".join(filter(None, [base, node.module or ""]))
            names += [(node.lineno, module)]
            if not node.module:  # from . import x: the submodules
                names += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return names


def test_the_engine_imports_only_itself_the_standard_library_and_its_declared_dependencies():
    allowed_top = set(sys.stdlib_module_names) | DEPENDENCIES | {"__future__"}
    outside = []
    for path in [REPO / "grading" / "__init__.py", *sorted(ENGINE.rglob("*.py"))]:
        for line, name in imported_names(path):
            top = name.split(".")[0]
            ours = name == "grading.engine" or name.startswith("grading.engine.")
            if not ours and top not in allowed_top:
                outside.append(f"{path.relative_to(REPO)}:{line} imports {name}")
    assert outside == []


def test_grading_package_init_stays_empty_of_imports():
    """The wheel ships grading/__init__.py too: whatever it imported would be imported by every engine user."""
    assert imported_names(REPO / "grading" / "__init__.py") == []


ALONE = r"""
import importlib, pkgutil, sys

class PortalBlocked:
    '''Django, the portal's other packages and grading outside the engine cannot be imported.'''
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in {"django", "rest_framework", "celery", "portal", "competitions", "leaderboard", "runners",
                   "client", "sklearn"}:
            raise ModuleNotFoundError(f"blocked: {name}")
        if top == "grading" and name not in ("grading", "grading.engine") and not name.startswith("grading.engine."):
            raise ModuleNotFoundError(f"blocked: {name}")
        return None

sys.meta_path.insert(0, PortalBlocked())
import grading.engine as engine
for module in pkgutil.walk_packages(engine.__path__, "grading.engine."):
    importlib.import_module(module.name)
for name in engine.__all__:
    getattr(engine, name)
print(len(engine.grader_names()), "graders")
"""


def test_every_engine_module_and_public_name_loads_with_django_and_the_rest_of_the_portal_blocked():
    done = subprocess.run(
        [sys.executable, "-c", ALONE],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[0]) >= 40


LIGHT = """
import sys
from grading.engine import aggregate, rank_intervals, ENGINE_VERSION
print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'scipy', 'pyarrow', 'django'}))
"""


def test_the_aggregation_and_the_rank_interval_load_without_pandas():
    """What verify needs without answers must stay fast: the public names load on first use."""
    done = subprocess.run([sys.executable, "-c", LIGHT], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_public_interface_is_the_documented_one():
    for name in grading.engine.__all__:
        assert getattr(grading.engine, name) is not None, name
    assert {"ENGINE_VERSION", "aggregate", "rank_intervals", "tab_ranks", "grade_file", "grade_submission"} <= set(
        grading.engine.__all__
    )
    assert set(grading.engine.__all__) == {"ENGINE_VERSION", "GRADER_VERSION", *grading.engine._HOME}
