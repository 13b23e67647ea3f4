"""Framework-free grading core: metrics, validity rules, medal thresholds and reports.

Nothing in this package imports Django, so it can be tested, benchmarked and reused
without a database.
"""

# Recorded with every re-graded result; bump it whenever a grader's output can change.
GRADER_VERSION = "2026.11.2"
