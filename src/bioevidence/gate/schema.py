"""The JSON Schema of records, compiled once for the hot path.

``schemas/bioevidence_core.schema.json`` (generated from the LinkML schema) is the published
contract. Records are checked with jsonschema-rs, a compiled validator with format
assertions on (``date-time``, ``uri``); ``tests/gate/test_schema_equivalence.py`` proves it
accepts and rejects exactly what the reference implementation ``jsonschema`` does over a
corpus of valid and invalid records.

Messages name the offending value by a short escaped excerpt only (jsonschema-rs quotes the
whole instance: a record that is a 1 MB string, or ``/etc/passwd`` read as YAML, would be
poured into every report, annotation and SARIF file), and odd keys in field paths are cut and
escaped the same way.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import EXCERPT_CHARS, InputError, escape_text, excerpt, safe_message
from ..io import canonical_json, find_surrogate
from ..resources import schema_file
from .findings import Finding, Fix

SCHEMA_MESSAGE_CHARS = 300
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")

RECORD_SCHEMA = "bioevidence_core.schema.json"
LINKML_SCHEMA = "bioevidence_core.yaml"


_DATE_TIME = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)",
    re.ASCII,
)


def is_date_time(value: str) -> bool:
    """RFC 3339 ``date-time`` as the ``jsonschema`` format checker reads it: case-insensitive ``T``/``Z``,
    real calendar days, no year 0 and no leap seconds (23:59:60 is refused)."""
    match = _DATE_TIME.fullmatch(value.upper())
    if match is None:
        return False
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    return year > 0 and 1 <= day <= calendar.monthrange(year, month)[1]


def json_path(path: Any) -> str:
    """``["evidence_items", 0, "locator"]`` -> ``$.evidence_items[0].locator`` (an odd key is written
    ``['…']``, cut and escaped)."""
    out = ["$"]
    for p in path:
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif _PLAIN_KEY.match(str(p)):
            out.append(f".{p}")
        else:
            key = str(p)
            shown = escape_text(key[:EXCERPT_CHARS].replace("\\", "\\\\").replace("'", "\\'"))
            out.append(f"['{shown}{'…' if len(key) > EXCERPT_CHARS else ''}']")
    return "".join(out)


def schema_message(message: str, instance: Any) -> str:
    """jsonschema-rs's message with the instance it starts with replaced by a short excerpt."""
    for rendered in _renderings(instance):
        if rendered and message.startswith(rendered):
            return safe_message(excerpt(instance) + message[len(rendered):], SCHEMA_MESSAGE_CHARS)
    return safe_message(message, SCHEMA_MESSAGE_CHARS)


def _subschema(schema: dict[str, Any], path: Any) -> dict[str, Any]:
    node: Any = schema
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return {}
    return node if isinstance(node, dict) else {}


def _names(values: Any) -> str:
    return ", ".join(str(v) if isinstance(v, str) else json.dumps(v) for v in values)



def _unknown_field(key: str, at: str, allowed: list[str], also: str) -> tuple[str, str, Fix]:
    """An unknown key: a misspelling of an allowed one (``extracted_txt``) is named and renamed,
    anything else removed."""
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.75)
    if close:
        message = f"unknown field {excerpt(key)}: did you mean {close[0]!r}? (objects are closed){also}"
        return safe_message(message, SCHEMA_MESSAGE_CHARS), at, Fix("rename", at, close[0])
    return (safe_message(f"unknown field {excerpt(key)} (objects are closed){also}", SCHEMA_MESSAGE_CHARS), at,
            Fix("remove", at))

def explain(error: Any, schema: dict[str, Any]) -> list[tuple[str, str, Fix | None]]:
    """A schema violation as ``(message, field path, fix)`` rows whose messages name the allowed values.

    jsonschema-rs cuts enum lists short ("... or 4 other candidates") and never says which keys
    an object allows; both are read here from the error's kind and the schema itself. An object
    with several unknown keys gives one row per key, each with its own ``remove`` fix."""
    path = json_path(error.instance_path)
    try:
        kind = error.kind.as_dict()
    except Exception:  # an unknown kind: keep the library's message
        kind = {}
    if "options" in kind and isinstance(kind["options"], list):
        options = kind["options"]
        return [(safe_message(f"{excerpt(error.instance)} is not an allowed value; allowed: {_names(options)}",
                              SCHEMA_MESSAGE_CHARS), path, Fix("choose", path, list(options)))]
    if "unexpected" in kind and isinstance(kind["unexpected"], list):
        allowed = sorted(_subschema(schema, list(error.schema_path)[:-1]).get("properties", {}))
        also = f"; allowed here: {', '.join(allowed)}" if allowed else ""
        keys = [json_path([*error.instance_path, str(key)]) for key in kind["unexpected"][:20]]
        return [_unknown_field(str(key), at, allowed, also) for key, at in zip(kind["unexpected"], keys, strict=False)]
    if "property" in kind and isinstance(kind["property"], str):
        name = kind["property"]
        return [(safe_message(f"required field {excerpt(name)} is missing", SCHEMA_MESSAGE_CHARS), path,
                 Fix("add", json_path([*error.instance_path, name]), None, f"add the required field {name}"))]
    if kind.get("format") == "date-time":
        return [(safe_message(f"{excerpt(error.instance)} is not an RFC 3339 date-time (write it like "
                              "2026-06-08T12:00:00Z)", SCHEMA_MESSAGE_CHARS), path, None)]
    if kind.get("pattern") == "^[0-9a-f]{64}$":
        return [(safe_message(f"{excerpt(error.instance)} is not a SHA-256 (64 lowercase hexadecimal digits; "
                              "bioevidence ground or sources pin-local computes it)", SCHEMA_MESSAGE_CHARS),
                 path, None)]
    return [(schema_message(error.message, error.instance), path, None)]


def _renderings(instance: Any) -> list[str]:
    try:
        return [json.dumps(instance, ensure_ascii=False, separators=(",", ":")),
                json.dumps(instance, ensure_ascii=False)]
    except (TypeError, ValueError):
        return []


@dataclass(frozen=True)
class CompiledSchema:
    schema: dict[str, Any]
    version: str
    sha256: str
    path: Path
    _validator: Any

    def is_valid(self, record: Any) -> bool:
        return bool(self._validator.is_valid(record))

    def findings(self, record: Any, uses: list[str]) -> list[Finding]:
        """One SCHEMA finding per violation, ordered by location (empty when valid).

        A record holding a lone surrogate (not Unicode text) is an ``InputError``, not a crash."""
        try:
            if self._validator.is_valid(record):
                return []
            errors = sorted(self._validator.iter_errors(record), key=lambda e: [str(p) for p in e.instance_path])
        except UnicodeEncodeError as exc:
            where = find_surrogate(record) or "$"
            raise InputError(f"a string at {safe_message(where, 120)} holds a lone surrogate (\\ud800-\\udfff "
                             "without its pair), which is not Unicode text; remove it") from exc
        return [Finding("SCHEMA", "error", message, path, list(uses), fix)
                for e in errors for message, path, fix in explain(e, self.schema)]


def compile_schema(schema: dict[str, Any], path: Path) -> CompiledSchema:
    import jsonschema_rs

    validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=True,
                                                   formats={"date-time": is_date_time})
    return CompiledSchema(
        schema=schema,
        version=str(schema.get("version", "unknown")),
        sha256=hashlib.sha256(canonical_json(schema)).hexdigest(),
        path=path,
        _validator=validator,
    )


@cache
def record_schema() -> CompiledSchema:
    """The packaged record schema, compiled once per process."""
    path = schema_file(RECORD_SCHEMA)
    return compile_schema(json.loads(path.read_text(encoding="utf-8")), path)
