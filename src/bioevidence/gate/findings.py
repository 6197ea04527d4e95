"""Findings: what a check says about one place in a record, and the fix when it is known.

Whatever a check writes, a finding's message and field path reach reports, annotations and
SARIF with control and formatting characters escaped and at most ``MESSAGE_CHARS`` (1000)
and ``PATH_CHARS`` (300) characters: the backstop behind every check quoting input through
``errors.excerpt``. Use names (copied from the record) are written out bounded the same way
(``NAME_CHARS``), but only when serialised: decisions compare the exact strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import MESSAGE_CHARS, safe_message

PATH_CHARS = 300
NAME_CHARS = 200


def _safe(text: str, limit: int) -> str:
    """:func:`~bioevidence.errors.safe_message`, answered without its scan for short printable ASCII (the
    unsafe characters in ASCII are exactly the unprintable ones: C0 controls and DEL)."""
    if type(text) is str and len(text) <= limit and text.isascii() and text.isprintable():
        return text
    return safe_message(text, limit)


def bounded_name(text: object) -> object:
    """A record-supplied name (use, record id) as written to a report: escaped, at most ``NAME_CHARS``."""
    return _safe(text, NAME_CHARS) if isinstance(text, str) else text


@dataclass(frozen=True, slots=True)
class Fix:
    """A machine-readable correction the feedback loop can send back to a model.

    ``action`` is one of ``replace`` (set ``field_path`` to ``value``), ``remove`` (drop the
    element at ``field_path``), ``add`` (add ``value`` at ``field_path``) or ``requote``
    (replace the quote with ``value``, a verbatim passage of the source). ``detail`` is one
    human-readable sentence ("the paper says 'did not improve'; the quote says 'improved'").
    """

    action: str
    field_path: str
    value: Any = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "field_path": self.field_path}
        if self.value is not None:
            out["value"] = self.value
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule outcome. Serialises to the reference report's finding object (plus ``fix``)."""

    rule_id: str
    severity: str
    message: str
    field_path: str
    blocking_uses: list[str] = field(default_factory=list)
    fix: Fix | None = None

    def __post_init__(self) -> None:
        message = _safe(self.message, MESSAGE_CHARS)
        if message != self.message:
            object.__setattr__(self, "message", message)
        path = _safe(self.field_path, PATH_CHARS)
        if path != self.field_path:
            object.__setattr__(self, "field_path", path)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule_id": self.rule_id,
            "severity": self.severity,
            "message": self.message,
            "field_path": self.field_path,
            "blocking_uses": [bounded_name(u) for u in self.blocking_uses],
        }
        if self.fix is not None:
            out["fix"] = self.fix.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        fix = data.get("fix")
        return cls(
            rule_id=data["rule_id"],
            severity=data["severity"],
            message=data["message"],
            field_path=data.get("field_path", "$"),
            blocking_uses=list(data.get("blocking_uses") or []),
            fix=Fix(**fix) if isinstance(fix, dict) else None,
        )


#: a fix's field, in the words of a sentence ("set the label to …")
FIELD_NAMES = {"extracted_text": "quote", "id": "id", "label": "label", "locator": "locator", "sha256": "sha256",
               "title": "title", "scope": "scope", "uri": "uri", "source_artifact_id": "source",
               "statement_status": "status", "profile_id": "profile_id", "requested_uses": "requested uses"}


def _place(path: str) -> str:
    """The path up to its last field ("$.evidence_items[0]" for "$.evidence_items[0].scope")."""
    return path.rsplit(".", 1)[0] if re.search(r"\.[a-z_]+(\[\d+\])?$", path) else path


def _plain(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def fix_sentence(fix: Fix, finding_path: str, message: str = "", *, place: Callable[[str], str] | None = None,
                 value: Callable[[Any], str] = _plain) -> str:
    """A fix as one instruction, the same in text and Markdown reports, GitHub annotations and
    ``revise()`` feedback: "set the label to monocyte (use the term's name)".

    The field is named as a reader says it; where the fix is at another place than the finding,
    ``place(fix_path)`` says which (" of evidence 2 (#p4)"; default " at <path>"). The detail follows
    in parentheses, unless ``message`` already says it (each line says it once). ``value`` writes a
    value (bounded for a report; whole for a model that must copy a quote)."""
    name = re.sub(r"\[\d+\]$", "", fix.field_path.rsplit(".", 1)[-1])
    name = FIELD_NAMES.get(name, name.replace("_", " "))
    fix_place = _place(fix.field_path)
    if fix_place not in (_place(finding_path), finding_path) and fix_place != "$":
        name += place(fix.field_path) if place is not None else f" at {fix.field_path}"
    said = fix.detail.rstrip(".") if fix.detail else ""
    detail = f" ({said})" if said and said not in message else ""
    if fix.action == "replace":
        return f"set the {name} to {value(fix.value)}{detail}"
    if fix.action == "requote":
        quote = value(fix.value)
        return f"quote the passage verbatim: {chr(34) + quote + chr(34) if value is _plain else quote}{detail}"
    if fix.action == "rename":
        return f"rename the field {fix.field_path.rsplit('.', 1)[-1]} to {fix.value}{detail}"
    if fix.action == "remove":
        return f"remove the {name}{detail}"
    if fix.action == "add":
        return f"add {value(fix.value)} to the {name}{detail}" if fix.value is not None else f"add the {name}{detail}"
    if fix.action == "choose":
        values = fix.value if isinstance(fix.value, list) else [fix.value]
        return f"set the {name} to one of: {', '.join(value(v) for v in values)}{detail}"
    return f"{fix.action} the {name}" + (f": {value(fix.value)}" if fix.value is not None else "") + detail

