"""Ranked and set-valued predictions: MAP@k, micro F1 over label sets, lwlrap.

Importing the package registers its graders."""

from grading.engine.graders.ranking import map_at_k, multilabel_f1  # noqa: F401  (registrations)
