"""JSON from an uploaded file, parsed so that whatever it holds can be stored, shown and walked safely.

Python's json module accepts documents that break things further on: nesting thousands of levels deep
(a RecursionError here or when the value is written again), integers of thousands of digits (a
ValueError past Python's digit limit, or a number no database column holds), and ``1e400`` (infinity,
which PostgreSQL's jsonb refuses). ``loads`` refuses each of them with the JSON path where it is, so a
message can say "manifest.json: 'hardware.vcpus' ..." instead of failing with a traceback.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

MAX_DEPTH: Final = 32  # objects and lists inside each other; real files of ours nest 4 deep
MAX_INTEGER_DIGITS: Final = 18  # fits a 64-bit integer: anything longer is no count, seed or size


class UnsafeJson(ValueError):
    """A document that is not JSON, or holds a value we refuse; ``path`` is where (None: the whole file)."""

    def __init__(self, why: str, *, path: str | None = None) -> None:
        if path is not None and len(path) > 120:
            path = path[:117] + "..."
        super().__init__(why if path is None else f"{path!r} {why}")
        self.why = why
        self.path = path


class _Refused:
    """A number json.loads parsed but we refuse; found by the walk, which knows its path."""

    def __init__(self, text: str, why: str) -> None:
        self.text = text
        self.why = why


def loads(data: str | bytes | bytearray, *, allow_nan: bool = False, object_pairs_hook: Any = None) -> Any:
    """Parse JSON text (UTF-8 bytes, with or without a BOM). ``allow_nan`` admits ``NaN``, which
    MLE-bench writes for a NaN score; Infinity and numbers too large for a float are always refused."""
    try:
        text = data.decode("utf-8-sig") if isinstance(data, (bytes, bytearray)) else data
    except UnicodeDecodeError as exc:
        raise UnsafeJson(f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        value = json.loads(
            text,
            parse_int=_integer,
            parse_float=_float,
            parse_constant=lambda name: _constant(name, allow_nan=allow_nan),
            object_pairs_hook=object_pairs_hook,
        )
    except RecursionError:
        raise UnsafeJson(f"nests objects or lists more than {MAX_DEPTH} levels deep", path=_deep_path(text)) from None
    except json.JSONDecodeError as exc:
        raise UnsafeJson(f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    _check(value)
    return value


def _integer(text: str) -> Any:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        return _Refused(text, f"is an integer of {len(text.lstrip('-'))} digits, too large to be a count")
    return int(text)


def _float(text: str) -> Any:
    number = float(text)
    if not math.isfinite(number):
        return _Refused(text, "is a number too large to store (it overflows to infinity)")
    return number


def _constant(name: str, *, allow_nan: bool) -> Any:
    if name == "NaN" and allow_nan:
        return math.nan
    return _Refused(name, f"is {name}, which is not a JSON number")


def _check(value: Any) -> None:
    """Walk the parsed value without recursion; refuse deep nesting and refused numbers, naming the path."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, _Refused):
            shown = item.text if len(item.text) <= 30 else f"{item.text[:27]}..."
            raise UnsafeJson(f"{item.why}; got {shown}", path=path or None)
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                raise UnsafeJson(f"nests objects or lists more than {MAX_DEPTH} levels deep", path=path)
            if isinstance(item, dict):
                for key, child in item.items():  # JSON object keys are always str
                    stack.append((child, f"{path}.{key}" if path else key, depth + 1))
            else:
                for index, child in enumerate(item):
                    stack.append((child, f"{path}[{index}]", depth + 1))


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _deep_path(text: str) -> str | None:
    """Where nesting first passes MAX_DEPTH, found by scanning tokens (only after json.loads gave up)."""
    frames: list[list[Any]] = []  # [kind, key or index, last string seen]
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            if len(frames) >= MAX_DEPTH:
                return _path_of(frames) or None
            frames.append([token, 0 if token == "[" else None, None])
        elif token in "]}":
            if frames:
                frames.pop()
        elif not frames:
            continue
        elif token == ",":
            if frames[-1][0] == "[":
                frames[-1][1] += 1
        elif token == ":":
            frames[-1][1] = frames[-1][2]
        else:
            try:
                frames[-1][2] = json.loads(token)
            except json.JSONDecodeError:
                frames[-1][2] = token
    return None


def _path_of(frames: list[list[Any]]) -> str:
    path = ""
    for kind, key, _ in frames:
        if kind == "[":
            path += f"[{key}]"
        elif key is not None:
            path += f".{key}" if path else str(key)
    return path


NAN_MARKER: Final = "score_is_nan"


def storable_report(report: dict[str, Any]) -> dict[str, Any]:
    """A competition report as a JSON column can hold it. A NaN score (a valid submission that earns
    nothing, which MLE-bench writes as NaN) becomes null with ``score_is_nan: true``: PostgreSQL's jsonb
    and strict JSON clients refuse NaN."""
    score = report.get("score")
    if isinstance(score, float) and math.isnan(score):
        return {**report, "score": None, NAN_MARKER: True}
    return report


def restored_report(report: dict[str, Any]) -> dict[str, Any]:
    """The report as MLE-bench writes it: the marker turned back into a NaN score."""
    if not report.get(NAN_MARKER):
        return report
    restored = {key: value for key, value in report.items() if key != NAN_MARKER}
    restored["score"] = math.nan
    return restored
