"""A flag's evidence as blocks a maintainer can read: log hits with their lines, claimed against re-graded
numbers, tables of seeds or files, plain facts; whatever has no readable form is shown as JSON.

Plain functions over the evidence dict (no Django), so any check's evidence renders without a template change.
"""

import json

HIT_KEYS = ("hits", "matches", "excerpts", "occurrences")


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _lines(excerpt, first_line) -> list[dict]:
    """Excerpt lines numbered from first_line when known."""
    if isinstance(excerpt, str):
        excerpt = excerpt.splitlines() or [""]
    if not isinstance(excerpt, list):
        return [{"number": None, "text": json.dumps(excerpt)}]
    numbered = []
    for i, line in enumerate(excerpt):
        if isinstance(line, dict):
            numbered.append({"number": line.get("line") or line.get("number"), "text": str(line.get("text", ""))})
        else:
            numbered.append({"number": first_line + i if isinstance(first_line, int) else None, "text": str(line)})
    return numbered


def _hit(hit: dict) -> dict:
    first = hit.get("line_start", hit.get("start_line", hit.get("line")))
    lines = hit.get("lines")
    if isinstance(lines, list) and lines and all(isinstance(n, int) for n in lines) and not isinstance(first, int):
        first = lines[0]
    excerpt = hit.get("excerpt", hit.get("text", hit.get("context", "")))
    rest = {
        k: v
        for k, v in hit.items()
        if k not in {"file", "path", "line", "line_start", "start_line", "lines", "excerpt", "text", "context"}
    }
    line_numbers = (
        lines
        if isinstance(lines, list) and all(isinstance(n, int) for n in lines)
        else ([first] if isinstance(first, int) else [])
    )
    return {
        "file": hit.get("file") or hit.get("path") or "",
        "line_numbers": line_numbers,
        "lines": _lines(excerpt, first),
        "facts": [(k, _text(v)) for k, v in rest.items()],
    }


def _text(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _table(rows: list[dict]) -> dict:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    return {"columns": columns, "rows": [[_text(row.get(c, "")) for c in columns] for row in rows]}


def evidence_blocks(evidence) -> list[dict]:
    """Blocks of kind hits, comparison, table, list, facts or json, in the evidence's own order."""
    if not isinstance(evidence, dict):
        return [{"kind": "json", "text": json.dumps(evidence, indent=2, sort_keys=True)}]
    blocks: list[dict] = []
    facts: list[tuple[str, str]] = []
    single_hit = {"file", "excerpt"} <= evidence.keys()
    if single_hit:
        blocks.append({"kind": "hits", "title": "excerpt", "hits": [_hit(evidence)]})
    for key, value in evidence.items():
        if single_hit and key in {"file", "path", "line", "line_start", "lines", "excerpt"}:
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


def evidence_json(evidence) -> str:
    return json.dumps(evidence, indent=2, sort_keys=True)
