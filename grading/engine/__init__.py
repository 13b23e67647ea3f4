"""Framework-free grading core: metrics, validity rules, medal thresholds and reports.

Nothing in this package imports Django, so it can be tested, benchmarked and reused
without a database.
"""
