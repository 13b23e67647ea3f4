"""manifest.json of a run bundle (SPEC section 2), parsed into a typed Manifest.

Required: ``schema`` ("bundle-v1"), ``agent.name`` and ``benchmark.split``. Every other known key is
optional, but when present it must have the documented type; a problem is refused with the key's path
("manifest.json: 'benchmark.split' must be one of ..."). Unknown keys, at any level, are kept in ``raw``,
listed in ``unknown_keys`` and never fatal: teams record more than we anticipated, and the entry page shows
it. A null optional value means "not given".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from grading.bundles.errors import BundleError, kind_of, show_value
from grading.engine import safe_json
from grading.engine.tiers import SPLITS

SCHEMA: Final = "bundle-v1"
MAX_MANIFEST_BYTES: Final = 1024 * 1024  # a manifest is a few hundred bytes; this only bounds memory

# What a manifest may claim. Generous (many times the reference setup of 24 h, 36 vCPUs, 440 GB, one A10),
# but finite, so that a value stored is one a page can show and a check can compare.
MAX_SEEDS: Final = 100
MAX_SEED: Final = 999  # an explicit seed number (counted from 0)
MAX_ID: Final = 2**31 - 1  # a registration id (SPEC section 9)
# Docker's reference grammar, less the registry's host:port: path components of lowercase letters and digits
# joined by one '.', one or two '_' or any '-'s, separated by single '/'; an optional tag and digest. So no
# '..', no empty component, no leading or trailing separator. Hosted runs and manifests' agent.image share it.
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_{1,2}|-+)[a-z0-9]+)*"
IMAGE_PATTERN: Final = re.compile(
    rf"{_COMPONENT}(?:/{_COMPONENT})*(:[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(@sha256:[0-9a-f]{{64}})?"
)
IMAGE_MAX_CHARS: Final = 300
MAX_RUNTIME_HOURS: Final = 1000.0
MAX_VCPUS: Final = 100_000
MAX_MEMORY_GB: Final = 1_000_000.0
MAX_GPUS: Final = 10_000
MAX_LIST_ITEMS: Final = 100
NAME_TEXT: Final = 200
SHORT_TEXT: Final = 200
URL_TEXT: Final = 2000
NOTES_TEXT: Final = 20_000


@dataclass(frozen=True, kw_only=True)
class Agent:
    name: str
    version: str | None = None
    source_url: str | None = None
    commit: str | None = None
    open_source: bool | None = None
    image: str | None = None  # an image the portal's hosted workers can run: a random audit re-runs it


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    split: str
    name: str | None = None
    version: str | None = None
    commit: str | None = None  # of the grading code the team used


@dataclass(frozen=True, kw_only=True)
class Gpu:
    model: str
    memory_gb: float | None = None
    count: int = 1


@dataclass(frozen=True, kw_only=True)
class Hardware:
    gpus: tuple[Gpu, ...] = ()
    vcpus: int | None = None
    ram_gb: float | None = None


@dataclass(frozen=True, kw_only=True)
class Disclosures:
    test_set_feedback: bool | None = None
    uses_known_leakage: bool | None = None
    human_assistance: bool | None = None
    solutions_in_prompt: bool | None = None
    other_models: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Manifest:
    agent: Agent
    benchmark: Benchmark
    llms: tuple[str, ...] = ()
    seeds: int | None = None  # the number of seeds claimed
    # Explicit seeds by "<run_group>/<run_id>" or "<run_id>"; see seeds.RULE_TEXT.
    run_seeds: Mapping[str, int] = field(default_factory=dict)
    runtime_hours: float | None = None
    hardware: Hardware = Hardware()
    internet_access: bool | None = None
    disclosures: Disclosures = Disclosures()
    notes: str | None = None
    registration: int | None = None  # the id of the team's registration this run group was registered as
    schema: str = SCHEMA
    unknown_keys: tuple[str, ...] = ()  # dotted paths, e.g. "agent.framework", "hardware.gpus[0].vendor"
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)  # the JSON object as uploaded


# Every key the schema knows, by parent path, read off the dataclasses; anything else is "unknown".
_KNOWN: Final[Mapping[str, frozenset[str]]] = {
    "": frozenset(f.name for f in fields(Manifest)) - {"unknown_keys", "raw"},
    "agent": frozenset(f.name for f in fields(Agent)),
    "benchmark": frozenset(f.name for f in fields(Benchmark)),
    "hardware": frozenset(f.name for f in fields(Hardware)),
    "hardware.gpus[]": frozenset(f.name for f in fields(Gpu)),
    "disclosures": frozenset(f.name for f in fields(Disclosures)),
}
_DISCLOSURE_FLAGS: Final = tuple(sorted(_KNOWN["disclosures"] - {"other_models"}))


def load_manifest(*, path: Path) -> Manifest:
    """Read and parse a bundle's manifest.json."""
    if not path.is_file():
        raise BundleError(
            "manifest_missing",
            "manifest.json is missing: put it at the top of the archive, next to runs/",
        )
    with path.open("rb") as f:
        data = f.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise BundleError("manifest_not_json", "manifest.json is larger than 1 MiB; it should be a few lines")
    return parse_manifest(data=data)


def parse_manifest(*, data: bytes | str | Mapping[str, Any]) -> Manifest:
    """Validate a manifest (bytes or text of JSON, or an already loaded object) into a Manifest."""
    raw = _load(data) if isinstance(data, (bytes, str)) else data
    if not isinstance(raw, Mapping):
        raise BundleError("manifest_not_json", f"manifest.json must hold a JSON object, got {kind_of(raw)}")
    if "schema" not in raw:
        raise _invalid("schema", f"is required and must be {SCHEMA!r}")
    if raw["schema"] != SCHEMA:
        raise _invalid("schema", f"must be {SCHEMA!r}", got=raw["schema"])
    agent = _object(raw, "agent", required=True)
    benchmark = _object(raw, "benchmark", required=True)
    hardware = _object(raw, "hardware")
    disclosures = _object(raw, "disclosures")
    split = benchmark.get("split")
    if split is None:
        raise _invalid("benchmark.split", f"is required: one of {', '.join(SPLITS)}")
    if split not in SPLITS:
        raise _invalid("benchmark.split", f"must be one of {', '.join(SPLITS)}", got=split)
    name = _text(agent, "agent.name", longest=NAME_TEXT)
    if name is None or not name.strip():
        raise _invalid("agent.name", "is required: the agent's name as it should appear on the leaderboard")
    return Manifest(
        schema=SCHEMA,
        agent=Agent(
            name=name.strip(),
            version=_text(agent, "agent.version", longest=SHORT_TEXT),
            source_url=_url(agent, "agent.source_url"),
            commit=_text(agent, "agent.commit", longest=SHORT_TEXT),
            open_source=_flag(agent, "agent.open_source"),
            image=_image(agent, "agent.image"),
        ),
        benchmark=Benchmark(
            split=split,
            name=_text(benchmark, "benchmark.name", longest=SHORT_TEXT),
            version=_text(benchmark, "benchmark.version", longest=SHORT_TEXT),
            commit=_text(benchmark, "benchmark.commit", longest=SHORT_TEXT),
        ),
        llms=_texts(raw, "llms"),
        seeds=_integer(raw, "seeds", minimum=1, maximum=MAX_SEEDS),
        run_seeds=_run_seeds(raw),
        runtime_hours=_number(raw, "runtime_hours", minimum=0.0, maximum=MAX_RUNTIME_HOURS),
        hardware=Hardware(
            gpus=_gpus(hardware),
            vcpus=_integer(hardware, "hardware.vcpus", minimum=1, maximum=MAX_VCPUS),
            ram_gb=_number(hardware, "hardware.ram_gb", minimum=0.0, maximum=MAX_MEMORY_GB),
        ),
        internet_access=_flag(raw, "internet_access"),
        disclosures=Disclosures(
            **{flag: _flag(disclosures, f"disclosures.{flag}") for flag in _DISCLOSURE_FLAGS},
            other_models=_texts(disclosures, "disclosures.other_models"),
        ),
        notes=_text(raw, "notes", longest=NOTES_TEXT),
        registration=_integer(raw, "registration", minimum=1, maximum=MAX_ID),
        unknown_keys=tuple(_unknown_keys(raw)),
        raw=raw,
    )


def _load(data: bytes | str) -> Any:
    try:
        return safe_json.loads(data)
    except safe_json.UnsafeJson as exc:
        details = {"key": exc.path} if exc.path else {}
        where = "manifest.json " if exc.path is None else "manifest.json: "
        raise BundleError("manifest_not_json", f"{where}{exc}", details) from None


# Each reader takes the parent object and the key's full dotted path, so that messages name the path.


def _value(parent: Mapping[str, Any], path: str) -> Any:
    return parent.get(path.rpartition(".")[2])


def _object(parent: Mapping[str, Any], path: str, *, required: bool = False) -> Mapping[str, Any]:
    value = _value(parent, path)
    if value is None:
        if required:
            raise _invalid(path, "is required and must be an object")
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(path, "must be an object", got=value)
    return value


def _text(parent: Mapping[str, Any], path: str, *, longest: int) -> str | None:
    value = _value(parent, path)
    if value is not None and not isinstance(value, str):
        raise _invalid(path, "must be a string", got=value)
    if value is not None and len(value) > longest:
        raise _invalid(path, f"must be at most {longest} characters; it has {len(value)}")
    return value


def _image(parent: Mapping[str, Any], path: str) -> str | None:
    """An agent image as hosted runs name theirs (IMAGE_PATTERN); blank is none."""
    value = _text(parent, path, longest=IMAGE_MAX_CHARS)
    if not value:
        return None
    if not IMAGE_PATTERN.fullmatch(value):
        raise _invalid(
            path,
            "must be an image reference such as 'my-agent:1.0' or 'team/agent:1.0' (lowercase name components "
            "separated by single '/', no '..', no empty component, optional tag and @sha256 digest)",
            got=value,
        )
    return value


def _url(parent: Mapping[str, Any], path: str) -> str | None:
    """An http(s) address with a host: the only kind of link the portal ever renders."""
    value = _text(parent, path, longest=URL_TEXT)
    if value is None or value == "":
        return None
    parsed = urlsplit(value) if not any(c.isspace() or ord(c) < 32 for c in value) else None
    if parsed is None or parsed.scheme.lower() not in ("http", "https") or not parsed.hostname:
        raise _invalid(path, "must be an http:// or https:// address, e.g. https://github.com/you/agent", got=value)
    return value


def _texts(parent: Mapping[str, Any], path: str) -> tuple[str, ...]:
    value = _value(parent, path)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _invalid(path, "must be a list of strings", got=value)
    if len(value) > MAX_LIST_ITEMS or any(len(item) > NAME_TEXT for item in value):
        raise _invalid(path, f"must list at most {MAX_LIST_ITEMS} names of at most {NAME_TEXT} characters each")
    return tuple(value)


def _flag(parent: Mapping[str, Any], path: str) -> bool | None:
    value = _value(parent, path)
    if value is not None and not isinstance(value, bool):
        raise _invalid(path, "must be true or false", got=value)
    return value


def _integer(parent: Mapping[str, Any], path: str, *, minimum: int, maximum: int) -> int | None:
    value = _value(parent, path)
    # bool is an int in Python, but "seeds": true is a mistake, not a 1.
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum):
        raise _invalid(path, f"must be a whole number from {minimum} to {maximum}", got=value)
    return value


def _number(parent: Mapping[str, Any], path: str, *, minimum: float, maximum: float) -> float | None:
    value = _value(parent, path)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not minimum <= value <= maximum
    ):
        raise _invalid(path, f"must be a number from {minimum:g} to {maximum:g}", got=value)
    return float(value)


def _gpus(hardware: Mapping[str, Any]) -> tuple[Gpu, ...]:
    value = hardware.get("gpus")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _invalid("hardware.gpus", "must be a list of {model, memory_gb, count}", got=value)
    if len(value) > MAX_LIST_ITEMS:
        raise _invalid("hardware.gpus", f"must list at most {MAX_LIST_ITEMS} kinds of GPU")
    gpus = []
    for index, item in enumerate(value):
        where = f"hardware.gpus[{index}]"
        if not isinstance(item, Mapping):
            raise _invalid(where, "must be an object {model, memory_gb, count}", got=item)
        model = _text(item, f"{where}.model", longest=NAME_TEXT)
        if not model:
            raise _invalid(f"{where}.model", "is required: the GPU's name, e.g. 'A10'")
        count = _integer(item, f"{where}.count", minimum=1, maximum=MAX_GPUS)
        gpus.append(
            Gpu(
                model=model,
                memory_gb=_number(item, f"{where}.memory_gb", minimum=0.0, maximum=MAX_MEMORY_GB),
                count=1 if count is None else count,
            )
        )
    return tuple(gpus)


def _run_seeds(raw: Mapping[str, Any]) -> dict[str, int]:
    value = _object(raw, "run_seeds")
    for key, seed in value.items():
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise _invalid(f"run_seeds.{key}", f"must be a whole number from 0 to {MAX_SEED}", got=seed)
    return dict(value)


def _unknown_keys(raw: Mapping[str, Any]) -> list[str]:
    found = [key for key in raw if key not in _KNOWN[""]]
    for parent in ("agent", "benchmark", "hardware", "disclosures"):
        value = raw.get(parent)
        if isinstance(value, Mapping):
            found += [f"{parent}.{key}" for key in value if key not in _KNOWN[parent]]
    gpus = (raw.get("hardware") or {}).get("gpus") or []
    for index, gpu in enumerate(gpus):
        found += [f"hardware.gpus[{index}].{key}" for key in gpu if key not in _KNOWN["hardware.gpus[]"]]
    return found


def _invalid(path: str, requirement: str, *, got: Any = ...) -> BundleError:
    message = f"manifest.json: {path!r} {requirement}"
    details: dict[str, Any] = {"key": path}
    if got is not ...:
        message += f"; got {show_value(got)}"
        details["got"] = got if isinstance(got, (str, int, float, bool)) or got is None else kind_of(got)
    return BundleError("manifest_invalid", message, details)
