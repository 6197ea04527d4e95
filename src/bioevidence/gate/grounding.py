"""The grounder interface: recompute from pinned bytes what a record only asserts.

A grounder is any object with a ``name`` (carrying its pinned release, e.g.
``ontology:CL@2026-06-08``) and a ``ground(record) -> Grounding`` method. The validator calls
``ground`` once per record, after the record passed the schema and integrity checks, and uses
both halves of the answer: the findings, and the ids of evidence items the grounder verified
(for ``verified_evidence_types``). One evaluation per grounder per record, never two.

Grounder findings block every requested use (their rules have scope ``all``). A grounder must
fail closed: if it cannot read what it needs it says so with a finding (BEV015) rather than
staying silent, and an exception inside it never admits a record (the validator turns it into
an ``operational`` finding that rejects).

A :class:`Check` reads what the grounders found: it runs after every grounder, once per record,
with a :class:`CheckContext` (the record's profile, the verified item ids, where each verified
quote is). The meaning checks are checks: the cues (BEV022, :mod:`.grounders.cues`) and the
direction check (BEV034-BEV036, :mod:`.grounders.direction`). One check of each ``kind`` runs; by
default each follows the record's profile (its ``checks:``), and an explicit setting (a flag)
overrides it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .findings import Finding, Fix
from .profiles import Profile
from .rules import rule


@dataclass(frozen=True, slots=True)
class QuoteLocation:
    """Where a grounder found an evidence item's quote in its pinned source.

    ``part`` is one of :data:`bioevidence.text.jats.PARTS`; ``passage`` the passage id;
    ``start``/``end`` offsets into the passage's printed text (the quote is that slice).
    """

    item_id: str
    part: str
    passage: str
    kind: str = ""
    section: str = ""
    label: str = ""
    start: int = 0
    end: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"evidence_item_id": self.item_id, "part": self.part, "passage": self.passage,
                               "kind": self.kind, "start": self.start, "end": self.end}
        if self.section:
            out["section"] = self.section
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuoteLocation:
        return cls(str(data["evidence_item_id"]), str(data["part"]), str(data["passage"]), str(data.get("kind", "")),
                   str(data.get("section", "")), str(data.get("label", "")), int(data.get("start", 0)),
                   int(data.get("end", 0)))


@dataclass(frozen=True, slots=True)
class Grounding:
    findings: list[Finding] = field(default_factory=list)
    verified: frozenset[str] = frozenset()
    quotes: tuple[QuoteLocation, ...] = ()


@runtime_checkable
class Grounder(Protocol):
    name: str

    def ground(self, record: dict[str, Any]) -> Grounding: ...


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What a :class:`Check` reads besides the record: its profile and what the grounders verified."""

    profile: Profile
    verified: frozenset[str] = frozenset()
    quotes: tuple[QuoteLocation, ...] = ()


@runtime_checkable
class Check(Protocol):
    name: str
    kind: str  # one check of each kind runs ("cues", "direction")

    def check(self, record: dict[str, Any], context: CheckContext) -> Grounding: ...


def finding(code: str, message: str, field_path: str, uses: Iterable[str], fix: Fix | None = None) -> Finding:
    """A grounder finding with the catalogue's severity, blocking every requested use (a
    ``warning`` or ``info`` finding blocks none)."""
    severity = rule(code).severity
    blocking = list(uses) if severity in ("error", "review") else []
    return Finding(code, severity, message, field_path, blocking, fix)


def requested_uses(record: dict[str, Any]) -> list[str]:
    uses = record.get("requested_uses")
    return [u for u in uses if isinstance(u, str)] if isinstance(uses, list) else []
