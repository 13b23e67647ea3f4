"""The one error a bundle can be refused with.

Every refusal carries a stable ``code`` (for clients and tests), a ``message`` written for the team that
uploaded the bundle (what is wrong and where: the member name, the key path, the folder), and JSON-safe
``details``. The API turns it into ``{"error": {"code", "message", "details"}}`` with status 400.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

# Every code this package raises, with what it means. Kept here so the API docs and the tests can list
# them from one place.
CODES: Final[Mapping[str, str]] = {
    # archive.py
    "not_an_archive": "the file is not a .tar.gz, .tgz or .zip archive",
    "unsupported_format": "an archive format other than tar.gz or zip (plain tar, bzip2, xz, 7z, rar)",
    "corrupt_archive": "the archive is truncated or damaged",
    "unsafe_path": "a member name that could escape the bundle folder or is not a plain relative path",
    "link_not_allowed": "a symbolic or hard link",
    "special_file_not_allowed": "a device file, fifo or other non-regular member",
    "unsupported_member": "an encrypted, sparse or unknown-compression member",
    "duplicate_member": "two members with the same name, or a file where a folder is needed",
    "too_many_files": "more members than the limit",
    "member_too_large": "one member unpacks to more than the per-file limit",
    "bundle_too_large": "the archive unpacks to more than the total limit",
    "compression_ratio_too_high": "the archive expands far more than real run files do (an archive bomb)",
    # manifest.py
    "manifest_missing": "no manifest.json at the top of the bundle",
    "manifest_not_json": "manifest.json is not a UTF-8 JSON object",
    "manifest_invalid": "a required manifest key is missing or a known key has the wrong type or value",
    # layout.py
    "no_runs": "no runs/<run_group>/ with run directories or a grading report",
    "bad_run_directory": "a folder in a run group that is not named <competition_id>_<run_id>",
    "unknown_competition": "run directories for competitions the portal does not know",
    "metadata_invalid": "a run group's metadata.json is not valid",
    "multiple_grading_reports": "more than one *grading_report*.json in one run group",
    # seeds.py
    "seed_conflict": "two explicit seeds for one run disagree, or two runs of a competition share a seed",
}


class BundleError(Exception):
    """A bundle refused with a reason the team can act on.

    The arguments are positional (unlike the rest of this package) so that the exception survives
    pickling, which Celery does when a task fails with it.
    """

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(code, message, dict(details or {}))
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def as_dict(self) -> dict[str, Any]:
        """The API's error shape."""
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def show_value(value: Any) -> str:
    """A value from an uploaded file, as an error message quotes it ("got 'lite'", "got true")."""
    # Strings in Python quotes (as in "got 'lite'"), other scalars as JSON spells them (true, null).
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, (int, float, bool)) or value is None:
        text = json.dumps(value)
    else:
        text = kind_of(value)
    return text if len(text) <= 80 else text[:77] + "..."


def kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )
