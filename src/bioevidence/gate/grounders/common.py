"""Small helpers shared by the grounders: record traversal and ``key=value;…`` locators."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..grounding import requested_uses

__all__ = ["CURIE", "curie_form", "entities", "items", "pairs", "requested_uses", "scope_tokens", "sources_by_id"]

CURIE = re.compile(r"[A-Za-z][A-Za-z0-9_.]*:[^\s:]+")
_LOOSE = re.compile(r"([A-Za-z][A-Za-z0-9.]*?)?[\s_:]?(\d+)")


def pairs(text: object) -> dict[str, str] | None:
    """Parse ``key=value;key=value`` (``;`` or ``,``-free values); ``None`` when it is not that form.

    A locator's anchor (``…#id``) is not part of the pairs.
    """
    if not isinstance(text, str) or "=" not in text:
        return None
    out: dict[str, str] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value or key in out:
            return None
        out[key] = value
    return out or None


def entities(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(field_path, entity)`` for the statement's subject and object when they are objects."""
    statement = record.get("statement")
    if not isinstance(statement, dict):
        return
    for role in ("subject", "object"):
        entity = statement.get(role)
        if isinstance(entity, dict):
            yield f"$.statement.{role}", entity


def scope_tokens(record: dict[str, Any]) -> list[str]:
    statement = record.get("statement")
    scope = statement.get("scope") if isinstance(statement, dict) else None
    return [t for t in scope if isinstance(t, str)] if isinstance(scope, list) else []


def items(record: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, item)`` for every evidence item that is an object."""
    raw = record.get("evidence_items")
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            if isinstance(item, dict):
                yield index, item


def sources_by_id(record: dict[str, Any]) -> dict[str, tuple[int, dict[str, Any]]]:
    raw = record.get("source_artifacts")
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    if isinstance(raw, list):
        for index, source in enumerate(raw):
            if isinstance(source, dict) and isinstance(source.get("id"), str):
                out[source["id"]] = (index, source)
    return out


def curie_form(value: str, prefix: str) -> tuple[bool, str | None]:
    """Whether ``value`` is written as a ``prefix`` CURIE (``CL:0000236``: the prefix exactly as the
    release writes it, a colon, the local id), and the CURIE it was probably meant to be when it is
    not (``CL_0000236``, ``CL0000236``, ``cl:0000236``, ``0000236`` → ``CL:0000236``; ``None`` when
    it reads as no id of that prefix, e.g. a label such as ``B cell``)."""
    if CURIE.fullmatch(value) and value.split(":", 1)[0] == prefix:
        return True, None
    loose = _LOOSE.fullmatch(value.strip())
    if loose and (loose.group(1) is None or loose.group(1).upper() == prefix.upper()):
        return False, f"{prefix}:{loose.group(2)}"
    return False, None
