"""A flag's evidence as blocks a maintainer can read: log hits with their lines, claimed against re-graded
numbers, tables of seeds or files, plain facts; whatever has no readable form is shown as JSON.

Plain functions over the evidence dict (no Django), so any check's evidence renders without a template change.
"""

import json
import re
from typing import Any

HIT_KEYS = ("hits", "matches", "excerpts", "occurrences")


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


NUMBERED = re.compile(r"(\d+): ?(.*)", re.S)  # the scanner's excerpt line, "NNN: text"
SHOWN_CHARS = 300  # of a line shown: a longer one is cut around the match (the scanner cuts to 240 already)


def _numbered(excerpt: list) -> list[tuple[int, str]] | None:
    """The excerpt's lines as (number, text) when every line carries its number, consecutively."""
    found = [NUMBERED.fullmatch(line) if isinstance(line, str) else None for line in excerpt]
    if not found or any(m is None for m in found):
        return None
    numbered = [(int(m.group(1)), m.group(2)) for m in found if m is not None]
    if any(b[0] != a[0] + 1 for a, b in zip(numbered, numbered[1:], strict=False)):
        return None
    return numbered


def _lines(excerpt: Any, first_line: Any) -> list[dict]:
    """Excerpt lines, each with one number: the one it carries ("NNN: text", the scanner's), else counted
    from first_line when that is known, else none."""
    if isinstance(excerpt, str):
        excerpt = excerpt.splitlines() or [""]
    if not isinstance(excerpt, list):
        return [{"number": None, "text": json.dumps(excerpt)}]
    numbered = _numbered(excerpt)
    if numbered is not None:
        return [{"number": number, "text": text} for number, text in numbered]
    lines = []
    for i, line in enumerate(excerpt):
        if isinstance(line, dict):
            lines.append({"number": line.get("line") or line.get("number"), "text": str(line.get("text", ""))})
        else:
            lines.append({"number": first_line + i if isinstance(first_line, int) else None, "text": str(line)})
    return lines


def _span(value: Any, text: str) -> tuple[int, int] | None:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
        and 0 <= value[0] < value[1] <= len(text)
    ):
        return value[0], value[1]
    return None


def _marked(line: dict, span: tuple[int, int] | None) -> dict:
    """The hit line split around its match (before, match, after), cut to SHOWN_CHARS around it; the
    template escapes each part, and marks the match."""
    text = line["text"]
    start, end = span or (0, 0)
    if len(text) > SHOWN_CHARS:
        room = SHOWN_CHARS - min(end - start, SHOWN_CHARS)
        cut = max(0, min(start - room // 2, len(text) - SHOWN_CHARS))
        head, tail = ("…" if cut else ""), ("…" if cut + SHOWN_CHARS < len(text) else "")
        shown = head + text[cut : cut + SHOWN_CHARS] + tail
        if span:
            start, end = len(head) + max(0, start - cut), len(head) + min(SHOWN_CHARS, end - cut)
        text = shown
    if not span:
        return {**line, "hit": True, "before": text, "match": "", "after": ""}
    return {**line, "hit": True, "before": text[:start], "match": text[start:end], "after": text[end:]}


def _hit(hit: dict) -> dict:
    first = hit.get("line_start", hit.get("start_line"))
    at = hit.get("line")
    lines_at = hit.get("lines")
    if isinstance(lines_at, list) and lines_at and all(isinstance(n, int) for n in lines_at):
        at = at if isinstance(at, int) else lines_at[0]
    excerpt = hit.get("excerpt", hit.get("text", hit.get("context", "")))
    rest = {
        k: v
        for k, v in hit.items()
        if k not in {"file", "path", "line", "line_start", "start_line", "lines", "excerpt", "text", "context", "match"}
    }
    lines = _lines(excerpt, first)
    # The hit's own line: the one numbered as the hit, or the only one.
    index = next((i for i, line in enumerate(lines) if isinstance(at, int) and line["number"] == at), None)
    if index is None and len(lines) == 1:
        index = 0
    if index is not None:
        lines[index] = _marked(lines[index], _span(hit.get("match"), lines[index]["text"]))
    numbers = [line["number"] for line in lines if isinstance(line["number"], int)]
    return {
        "file": hit.get("file") or hit.get("path") or "",
        "line": at if isinstance(at, int) else (lines[index]["number"] if index is not None else None),
        "lines": lines,
        "hit_line": lines[index] if index is not None else None,
        "context": len(lines) > 1,
        "context_range": f"{numbers[0]}–{numbers[-1]}" if len(numbers) > 1 else "",
        "facts": [(k, _text(v)) for k, v in rest.items()],
    }


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _table(rows: list[dict]) -> dict:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    return {"columns": columns, "rows": [[_text(row.get(c, "")) for c in columns] for row in rows]}


def evidence_blocks(evidence: Any) -> list[dict]:
    """Blocks of kind hits, comparison, table, list, facts or json, in the evidence's own order."""
    if not isinstance(evidence, dict):
        return [{"kind": "json", "text": json.dumps(evidence, indent=2, sort_keys=True)}]
    blocks: list[dict] = []
    facts: list[tuple[str, str]] = []
    single_hit = {"file", "excerpt"} <= evidence.keys()
    if single_hit:
        blocks.append({"kind": "hits", "title": "excerpt", "hits": [_hit(evidence)]})
    for key, value in evidence.items():
        if single_hit and key in {"file", "path", "line", "line_start", "lines", "excerpt", "match"}:
            continue
        if key in HIT_KEYS and isinstance(value, list) and all(isinstance(h, dict) for h in value):
            blocks.append({"kind": "hits", "title": key, "hits": [_hit(h) for h in value]})
        elif (
            isinstance(value, dict)
            and value
            and all(isinstance(v, dict) and {"claimed", "regraded"} & v.keys() for v in value.values())
        ):
            columns = ["", "claimed", "re-graded"]
            extra = sorted({k for v in value.values() for k in v} - {"claimed", "regraded"})
            rows = [
                [name, _text(v.get("claimed")), _text(v.get("regraded")), *(_text(v.get(k, "")) for k in extra)]
                for name, v in value.items()
            ]
            blocks.append({"kind": "table", "title": key, "columns": columns + extra, "rows": rows})
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            blocks.append({"kind": "table", "title": key, **_table(value)})
        elif isinstance(value, dict) and value and all(_is_scalar(v) for v in value.values()):
            blocks.append(
                {
                    "kind": "table",
                    "title": key,
                    "columns": ["", key],
                    "rows": [[str(k), _text(v)] for k, v in value.items()],
                }
            )
        elif isinstance(value, list) and all(_is_scalar(v) for v in value):
            blocks.append({"kind": "list", "title": key, "items": [_text(v) for v in value]})
        elif _is_scalar(value):
            facts.append((key, _text(value)))
        else:
            blocks.append({"kind": "json", "title": key, "text": json.dumps(value, indent=2, sort_keys=True)})
    if facts:
        blocks.insert(0, {"kind": "facts", "facts": facts})
    return blocks


def evidence_json(evidence: Any) -> str:
    return json.dumps(evidence, indent=2, sort_keys=True)
