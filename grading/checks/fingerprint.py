"""Submission content once normalised: what cosmetic edits (a trailing newline, rows reordered, another float
format, quoting, one changed cell) leave unchanged.

A submission is parsed as CSV; each cell is stripped and a number is written with NUMBER_DIGITS significant
digits; the rows are keyed by the id column (the first column when the competition names none) and sorted by
it. The *fingerprint* is the SHA-256 of that, so two files with the same content have the same fingerprint
whatever their bytes. Two files are *near-duplicates* when they have the same header and at least NEAR_SHARE
of the rows (of the longer file) are equal once normalised: one changed prediction in a hundred rows does not
make a copy a new run (a file of fewer than 100 rows is a near-duplicate only when its content is the same).

Framework-free; each row is kept as a pair of 64-bit hashes (its id's and its cells'), never as text.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

NUMBER_DIGITS = 6  # significant digits: one float's formats agree, two models' predictions do not
NEAR_SHARE = 0.99  # rows equal, at least, for two files to be near-duplicates
_SEP = "\x1f"


class UnreadableSubmission(ValueError):
    """The file is not a CSV with a header; it has no content fingerprint (its bytes still do)."""


@dataclass(frozen=True)
class Content:
    fingerprint: str  # SHA-256 of the normalised header and rows, sorted by id
    header: tuple[str, ...]
    rows: dict[int, int]  # hash of the row's id -> hash of its normalised cells
    constant: bool = False  # every row predicts the same (a sample submission, a fallback): no one's own work

    def equal_rows(self, other: Content) -> int:
        return sum(1 for key, row in self.rows.items() if other.rows.get(key) == row)

    def near_duplicate_of(self, other: Content, *, share: float = NEAR_SHARE) -> bool:
        if self.fingerprint == other.fingerprint:
            return True
        if self.header != other.header:
            return False
        total = max(len(self.rows), len(other.rows))
        return total > 0 and self.equal_rows(other) >= share * total


def normalised_cell(cell: str) -> str:
    """A cell as compared: stripped, and a finite number in NUMBER_DIGITS significant digits ("1" = "1.0")."""
    text = cell.strip()
    if not text or "_" in text:  # float() reads "1_000"; a file does not mean a number by it
        return text
    try:
        value = float(text)
    except ValueError:
        return text
    if math.isnan(value) or math.isinf(value):
        return text.lower()
    if value == 0:
        return "0"
    return format(value, f".{NUMBER_DIGITS}g")


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def content_of(path: Path, *, id_column: str = "") -> Content:
    """The normalised content of a submission file (UnreadableSubmission when it has no CSV header)."""
    try:
        with path.open(encoding="utf-8-sig", errors="replace", newline="") as f:
            return content_of_rows(csv.reader(f), id_column=id_column)
    except csv.Error as exc:
        raise UnreadableSubmission(f"{path.name} is not a CSV file: {exc}") from exc


def content_of_rows(reader: Iterable[list[str]], *, id_column: str = "") -> Content:
    rows_in = iter(reader)
    header: tuple[str, ...] = ()
    for row in rows_in:
        if any(cell.strip() for cell in row):
            header = tuple(cell.strip() for cell in row)
            break
    if not header:
        raise UnreadableSubmission("the file has no header row")
    id_at = header.index(id_column) if id_column in header else 0
    rows: dict[int, int] = {}
    seen: dict[str, int] = {}
    first_prediction: list[str] | None = None
    constant = True
    for row in rows_in:
        if not any(cell.strip() for cell in row):
            continue  # blank lines, a trailing newline
        cells = [normalised_cell(cell) for cell in row]
        ident = cells[id_at] if id_at < len(cells) else ""
        repeat = seen.get(ident, 0)
        seen[ident] = repeat + 1
        key = _hash64(ident if not repeat else f"{ident}{_SEP}{repeat}")
        rows[key] = _hash64(_SEP.join(cells))
        prediction = cells[:id_at] + cells[id_at + 1 :]
        if first_prediction is None:
            first_prediction = prediction
        elif constant and prediction != first_prediction:
            constant = False
    digest = hashlib.sha256(_SEP.join(header).encode("utf-8", "surrogatepass"))
    for key in sorted(rows):
        digest.update(key.to_bytes(8, "big") + rows[key].to_bytes(8, "big"))
    return Content(fingerprint=digest.hexdigest(), header=header, rows=rows, constant=constant)


@dataclass(frozen=True)
class SeedCopy:
    """A run whose submission is a copy of an earlier seed's (``of``): the same bytes, the same content once
    normalised, or a near-duplicate; ``rows_equal`` of ``rows`` rows are equal once normalised."""

    seed: int
    of: int
    how: str  # "identical", "normalised" or "near"
    rows_equal: int | None = None
    rows: int | None = None


HOW_WORDS = {
    "identical": "byte-identical",
    "normalised": "identical once parsed and normalised",
    "near": "near-identical once normalised",
}
