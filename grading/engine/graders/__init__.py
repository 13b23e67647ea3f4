"""Built-in grader families. Importing this package registers every grader by name.

One module per metric family; every public module of this package is imported here, so adding a family
is adding a module. Shared validation lives in ``_checks`` (columns, numbers, ranges, row sums), ``ids``
(matching submission ids to answer ids) and ``_labels`` (class labels).
"""

import importlib
import pkgutil

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
