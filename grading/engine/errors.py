class InvalidSubmission(Exception):
    """A submission that cannot be scored.

    The message is shown to the team as the reason, so it must say what is wrong,
    where, and what to do (for example "missing 12 ids, e.g. 'id_00123'").
    """
