"""Reference cross-check (review only, BEV025): a pinned reference table that contradicts the claim.

A reference resource is a second source the record does not cite: a table of curated
assertions with columns ``subject``, ``predicate``, ``object`` (optionally ``subject_label``
and ``object_label``), TSV or CSV. It can be out of date and its coverage is partial, so a
disagreement sends the record to a person (BEV025) and never rejects it, and **silence of the
reference is never support**: nothing is verified here.

Two conflicts are reported:

* **statement** — the reference asserts the opposite predicate for the same subject and object
  (``associated_with`` vs ``not_associated_with``; see :data:`OPPOSITES`, extendable);
* **evidence** — a supporting evidence item names an entity in its locator (``gene=CD19`` for
  the evidence key ``gene``) that the reference relates (by ``relation``, e.g. ``marker_of``;
  by default any non-negated predicate) *only* to objects that conflict with the statement's
  object. An object conflicts unless it is the same term or, with an ontology loaded, an
  ancestor or descendant of it (a B cell marker does not conflict with "naive B cell").

Subjects and objects match by id, or by label ignoring case when the reference writes a label
(``CD19``) where the record has an id (``HGNC:1633`` labelled ``CD19``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..findings import Finding
from ..grounding import Grounding, finding
from .common import items, pairs, requested_uses
from .obo import Ontology

__all__ = ["OPPOSITES", "Assertion", "ReferenceGrounder", "load_assertions"]

#: Predicates and their opposites (each pair is read both ways).
OPPOSITES: dict[str, str] = {
    "associated_with": "not_associated_with",
    "contributes_to": "does_not_contribute_to",
    "supports": "does_not_support",
    "supports_sensitivity": "does_not_support_sensitivity",
    "supports_resistance": "does_not_support_resistance",
    "marker_of": "not_marker_of",
    "has_label": "does_not_have_label",
    "causes": "does_not_cause",
}

Assertion = tuple[str, str, str, str, str]  # subject, predicate, object, subject_label, object_label
_REQUIRED = ("subject", "predicate", "object")


def load_assertions(data: bytes, *, source: str = "<reference>") -> list[Assertion]:
    """Rows of a reference table (TSV or CSV sniffed from the header); ``ConfigurationError`` if malformed."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"reference table {source} is not UTF-8 text; save it as UTF-8") from exc
    delimiter = "\t" if "\t" in text.partition("\n")[0] else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise ConfigurationError(f"reference table {source} lacks column(s) {', '.join(missing)}; it needs "
                                 "subject, predicate, object (and optionally subject_label, object_label)")
    out: list[Assertion] = []
    try:
        for raw in reader:
            row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if isinstance(v, str)}
            if row.get("subject") and row.get("predicate") and row.get("object"):
                out.append((row["subject"], row["predicate"], row["object"], row.get("subject_label", ""),
                            row.get("object_label", "")))
    except csv.Error as exc:
        raise ConfigurationError(f"reference table {source} is malformed at line {reader.line_num}: {exc}") from exc
    return out


def _keys(entity: object) -> list[str]:
    """How an entity may be written in the reference: its id, and its label case-folded."""
    if not isinstance(entity, dict):
        return []
    out = [entity["id"]] if isinstance(entity.get("id"), str) else []
    if isinstance(entity.get("label"), str):
        out.append(entity["label"].casefold())
    return out


class ReferenceGrounder:
    """Cross-check claims against a table of curated assertions (see module docstring)."""

    def __init__(self, assertions: Iterable[Assertion], *, label: str, opposites: Mapping[str, str] | None = None,
                 evidence_keys: Sequence[str] = ("gene",), relation: str | None = None,
                 ontologies: Sequence[Ontology] = ()) -> None:
        self.assertions = list(assertions)
        self.label = label
        self.name = f"reference:{label}"
        table = dict(OPPOSITES if opposites is None else opposites)
        self.opposites = {**table, **{v: k for k, v in table.items()}}
        self.negative = frozenset(table.values())
        self.evidence_keys = tuple(evidence_keys)
        self.relation = relation
        self.ontologies = list(ontologies)
        self._by_pair: dict[tuple[str, str], list[Assertion]] = {}
        self._by_subject: dict[str, list[Assertion]] = {}
        for row in self.assertions:
            subjects = {row[0], row[0].casefold(), *([row[3].casefold()] if row[3] else [])}
            objects = {row[2], row[2].casefold(), *([row[4].casefold()] if row[4] else [])}
            for s in subjects:
                for o in objects:
                    self._by_pair.setdefault((s, o), []).append(row)
                if (relation is None and row[1] not in self.negative) or row[1] == relation:
                    self._by_subject.setdefault(s, []).append(row)

    @classmethod
    def from_file(cls, path: Path | str, **options: Any) -> ReferenceGrounder:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigurationError(f"cannot read reference table {path}: {exc.strerror}; check --reference",
                                     path=str(path)) from exc
        import hashlib

        options.setdefault("label", f"{path.name.split('.', 1)[0]}@{hashlib.sha256(data).hexdigest()[:12]}")
        return cls(load_assertions(data, source=str(path)), **options)

    def _related(self, a: str, b: str) -> bool:
        if a == b or a.casefold() == b.casefold():
            return True
        for onto in self.ontologies:
            if a in onto.terms and b in onto.terms:
                return a in onto.ancestors(b) or b in onto.ancestors(a)
        return False

    @staticmethod
    def _named(row: Assertion) -> str:
        return f"{row[2]} ({row[4]})" if row[4] else row[2]

    def ground(self, record: dict[str, Any]) -> Grounding:
        statement = record.get("statement")
        if not isinstance(statement, dict):
            return Grounding()
        uses = requested_uses(record)
        predicate = statement.get("predicate")
        subject, target = statement.get("subject"), statement.get("object")
        out: list[Finding] = []
        opposite = self.opposites.get(predicate) if isinstance(predicate, str) else None
        seen: set[Assertion] = set()
        for s in _keys(subject):
            for o in _keys(target):
                for row in self._by_pair.get((s, o), []):
                    if row[1] == opposite and row not in seen:
                        seen.add(row)
                        out.append(finding(
                            "BEV025", f"the {self.label} reference records {row[0]} {row[1]} {self._named(row)}, "
                            f"the opposite of this claim ({predicate})", "$.statement.predicate", uses))
        target_ids = [t for t in _keys(target)[:1]]
        if not target_ids or not self.evidence_keys:
            return Grounding(out)
        target_id = target_ids[0]
        target_label = target.get("label") if isinstance(target, dict) else None
        supporting: set[str] = set()
        for line in statement.get("evidence_lines") or []:
            if isinstance(line, dict) and line.get("direction") == "supports":
                supporting.update(i for i in line.get("evidence_item_ids") or [] if isinstance(i, str))
        for index, item in items(record):
            if item.get("id") not in supporting:
                continue
            locator = item.get("locator")
            kv = pairs(locator.split("#", 1)[0]) if isinstance(locator, str) else None
            for key in self.evidence_keys:
                entity = (kv or {}).get(key)
                if not entity:
                    continue
                rows = self._by_subject.get(entity) or self._by_subject.get(entity.casefold()) or []
                if not rows or any(self._related(r[2], target_id) or (
                        isinstance(target_label, str) and r[4].casefold() == target_label.casefold()) for r in rows):
                    continue
                names = sorted({self._named(r) for r in rows})
                more = f" and {len(names) - 3} more" if len(names) > 3 else ""
                relation = (self.relation or rows[0][1]).replace("_", " ")
                out.append(finding(
                    "BEV025", f"the {self.label} reference lists {key}={entity} only as {relation} "
                    f"{'; '.join(names[:3])}{more}, none of which is {target_id} or a related term",
                    f"$.evidence_items[{index}].locator", uses))
        return Grounding(out)
