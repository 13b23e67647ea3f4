"""One small spec per competition: id format, target kind and the hooks it needs.

File names, column names and full row counts come from ``competitions.json`` (see :mod:`catalog`);
a spec only says what the values look like. Specs live in one module per group of competitions
(``low`` for the Lite split, then one per metric family); every module of this package with a ``SPECS``
dict is merged here, so adding a competition is adding an entry to its group's module.
"""

from __future__ import annotations

import importlib
import pkgutil

from competitions.demo.specs.base import BuildHook, ExtrasHook, Spec, binary


def _collect() -> dict[str, Spec]:
    merged: dict[str, Spec] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name == "base" or module.name.startswith("_"):
            continue
        specs = getattr(importlib.import_module(f"{__name__}.{module.name}"), "SPECS", None)
        if specs is None:
            continue
        twice = sorted(set(merged) & set(specs))
        if twice:
            raise ValueError(f"demo specs for {', '.join(twice)} are defined in more than one module")
        merged.update(specs)
    return dict(sorted(merged.items()))


SPECS: dict[str, Spec] = _collect()


def spec_for(competition_id: str) -> Spec:
    try:
        return SPECS[competition_id]
    except KeyError:
        raise KeyError(f"no demo generator for {competition_id!r}; known: {', '.join(sorted(SPECS))}") from None


__all__ = ["SPECS", "BuildHook", "ExtrasHook", "Spec", "binary", "spec_for"]
