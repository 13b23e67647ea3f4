class InvalidSubmission(Exception):
    """A submission that cannot be scored.

    The message is shown to the team as the reason, so it must say what is wrong,
    where, and what to do (for example "missing 12 ids, e.g. 'id_00123'").
    """


class AnswersProblem(ValueError):
    """The answers do not fit the grader's parameters: a setup problem on our side, not the team's.

    It is deliberately not an :class:`InvalidSubmission`: grading lets it through instead of calling the
    team's file invalid, and importing a pack refuses answers that raise it.
    """
