"""Built-in grader families. Importing this package registers every grader by name.

One module per metric family; shared validation lives in ``_checks`` (columns, numbers, ranges, row
sums), ``_ids`` (matching submission ids to answer ids) and ``_labels`` (class labels).
"""

from grading.engine.graders import (  # noqa: F401  (imported for their registrations)
    accuracy,
    kappa,
    log_loss,
    regression_error,
    roc_auc,
    roc_auc_columnwise,
)
