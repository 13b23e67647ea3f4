"""Ids as they arrive in a URL or a form: ASCII digits within the database's range, or nothing.

`str.isdigit()` is true for '²' and '١', which int() refuses or reads, and a 20-digit number overflows
PostgreSQL's bigint: both were 500s. Callers answer None with a 400 that names the field."""

import re

MAX_ID = 2**63 - 1  # DEFAULT_AUTO_FIELD is BigAutoField
_DIGITS = re.compile(r"[0-9]{1,19}")


def parse_id(value: str) -> int | None:
    """The id `value` spells, or None when it is not one a row could have."""
    if not _DIGITS.fullmatch(value):
        return None
    number = int(value)
    return number if 0 < number <= MAX_ID else None
