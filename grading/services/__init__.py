"""Writes of the grading app, split by topic: submissions (upload, status), pipeline (validate, grade,
finish), regrade (on demand), grade_file (one file against a competition)."""
