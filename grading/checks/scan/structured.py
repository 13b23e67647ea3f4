"""Structured text as the lines a log would print: a Jupyter notebook's cell sources and text outputs (images
left out), JSON's scalars as ``key: value`` lines."""

from __future__ import annotations

import json
from typing import Any


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return str(value) if value is not None else ""


def notebook_text(body: bytes) -> bytes | None:
    """A notebook's cell sources and the text of its outputs (images left out); None if it is no notebook."""
    try:
        notebook = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return json_text(body)
    parts = []
    for cell in notebook["cells"]:
        if not isinstance(cell, dict):
            continue
        parts.append(_joined(cell.get("source")))
        for output in cell.get("outputs") or []:
            if not isinstance(output, dict):
                continue
            parts.append(_joined(output.get("text")))
            parts.extend(_joined(line) for line in output.get("traceback") or [])
            for mime, value in (output.get("data") or {}).items():
                if str(mime).startswith("text/") or mime.endswith("json"):
                    parts.append(_joined(value) if not isinstance(value, dict) else json.dumps(value))
    return "\n".join(parts).encode("utf-8", errors="replace") + b"\n"


def json_text(body: bytes) -> bytes | None:
    """JSON (or JSON lines) as lines a log would print: ``key: value  "key": value`` for every scalar (a string
    unescaped, its newlines lines of their own), every other string as it is; None when it is not JSON."""
    try:
        documents = [json.loads(body)]
    except (ValueError, RecursionError):
        try:
            documents = [json.loads(line) for line in body.splitlines() if line.strip()]
        except (ValueError, RecursionError):
            return None
    lines: list[str] = []
    stack: list[Any] = list(reversed(documents))
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    stack.append(value)
                else:
                    shown = "True" if value is True else "False" if value is False else value
                    lines.append(f"{key}: {shown}  {json.dumps(key)}: {json.dumps(value)}")
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str):
            lines.append(node)
        elif node is not None:
            lines.append(str(node))
    return "\n".join(lines).encode("utf-8", errors="replace") + b"\n"
