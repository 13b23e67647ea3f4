"""Built-in grader families. Importing this package registers every grader by name.

One module per metric family, or a package where a family needs helpers of its own (``detection``,
``segmentation``, ``text_match``, ``regression``, ``ranking``, ``correlation``: the package imports its
grader modules). Every public module and package here is imported below, so adding a family is adding one.
Shared validation lives in ``_validation`` (columns, numbers, ranges, row sums), ``ids`` (matching submission
ids to answer ids), ``_labels`` (class labels) and ``_prob_validation`` (probability rows).
"""

import importlib
import pkgutil

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
