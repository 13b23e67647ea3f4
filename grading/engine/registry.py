"""Graders registered by name.

A grader is a plain function ``grade(submission, answers, **params) -> float`` over two
pandas DataFrames. It raises :class:`InvalidSubmission` with an actionable message when
the submission cannot be scored. Which grader (and which parameters) a competition uses
is data: see ``competitions/data/<benchmark>/graders.json``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

GradeFn = Callable[..., float]


@dataclass(frozen=True)
class GraderRef:
    """Which registered grader a competition uses, with its parameters."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)


_GRADERS: dict[str, GradeFn] = {}


def register(name: str) -> Callable[[GradeFn], GradeFn]:
    def decorate(fn: GradeFn) -> GradeFn:
        if name in _GRADERS and _GRADERS[name] is not fn:
            raise ValueError(f"grader {name!r} is registered twice")
        _GRADERS[name] = fn
        return fn

    return decorate


def get_grader(name: str) -> GradeFn:
    _load_builtin_graders()
    try:
        return _GRADERS[name]
    except KeyError:
        known = ", ".join(sorted(_GRADERS)) or "none"
        raise KeyError(f"no grader named {name!r}; known graders: {known}") from None


def grader_names() -> list[str]:
    _load_builtin_graders()
    return sorted(_GRADERS)


def run_grader(ref: GraderRef, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    return get_grader(ref.name)(submission, answers, **ref.params)


def _load_builtin_graders() -> None:
    # Importing the package registers every built-in grader family.
    from grading.engine import graders  # noqa: F401
