"""The validation report: typed, and serialised to the reference report's JSON shape.

Keys and meanings follow bioai-evidence-validator 0.8.0 (validator, versions, the profile,
schema and canonical-input hashes, ``validated_at``, ``schema_valid``, ``overall_status``,
``findings``, ``use_decisions``, and ``grounding`` only when grounders ran). Additions are
optional: ``record_id`` (null when unreadable), inside findings ``fix``,
``verified_evidence_item_ids`` (sorted ids of the items a grounder confirmed against their
pinned source), ``quote_locations`` (where each verified quote is: part, passage, offsets) and
``grounding_off`` (``--no-grounding`` was asked for); each present only when it has content, so
reports without grounders keep their shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import llm_json
from .findings import Finding, bounded_name
from .grounding import QuoteLocation

EXIT_CODES = {"admitted": 0, "rejected": 1, "review_required": 2}


@dataclass(frozen=True, slots=True)
class UseDecision:
    use: str
    admission_status: str
    reason_codes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"use": bounded_name(self.use), "admission_status": self.admission_status,
                "reason_codes": list(self.reason_codes)}


@dataclass(frozen=True, slots=True)
class Report:
    validator: str
    validator_version: str
    profile_id: str
    profile_version: str
    profile_sha256: str
    schema_version: str
    schema_sha256: str
    schema_sources: list[dict[str, str]]
    input_sha256: str
    validated_at: str
    schema_valid: bool
    overall_status: str
    findings: list[Finding]
    use_decisions: list[UseDecision]
    record_id: str | None = None
    grounding: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    verified: frozenset[str] = frozenset()
    quotes: tuple[QuoteLocation, ...] = ()
    grounding_off: bool = False

    @property
    def admitted(self) -> bool:
        return self.overall_status == "admitted"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.overall_status]

    def reason_codes(self) -> list[str]:
        """Codes of the findings that decide (``error`` and ``review``), sorted."""
        return sorted({f.rule_id for f in self.findings if f.severity in ("error", "review")})

    def decision(self, use: str) -> str:
        for d in self.use_decisions:
            if d.use == use:
                return d.admission_status
        raise KeyError(f"use {use!r} was not requested")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "validator": self.validator,
            "validator_version": self.validator_version,
            "record_id": bounded_name(self.record_id),
            "profile_id": self.profile_id,
            "profile_version": self.profile_version,
            "profile_sha256": self.profile_sha256,
            "schema_version": self.schema_version,
            "schema_sha256": self.schema_sha256,
            "schema_sources": [dict(s) for s in self.schema_sources],
            "input_sha256": self.input_sha256,
            "validated_at": self.validated_at,
            "schema_valid": self.schema_valid,
            "overall_status": self.overall_status,
            "findings": [f.to_dict() for f in self.findings],
            "use_decisions": [d.to_dict() for d in self.use_decisions],
        }
        if self.grounding is not None:
            out["grounding"] = list(self.grounding)
        if self.verified:
            out["verified_evidence_item_ids"] = sorted(self.verified)
        if self.quotes:
            out["quote_locations"] = [q.to_dict() for q in self.quotes]
        if self.grounding_off:
            out["grounding_off"] = True
        out.update(self.extra)
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return llm_json(self.to_dict(), indent=indent)  # record ids and quotes are input: no raw invisible

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        known = {"validator", "validator_version", "record_id", "profile_id", "profile_version", "profile_sha256",
                 "schema_version", "schema_sha256", "schema_sources", "input_sha256", "validated_at",
                 "schema_valid", "overall_status", "findings", "use_decisions", "grounding",
                 "verified_evidence_item_ids", "quote_locations", "grounding_off"}
        return cls(
            validator=data["validator"], validator_version=data["validator_version"],
            profile_id=data["profile_id"], profile_version=data["profile_version"],
            profile_sha256=data["profile_sha256"], schema_version=data["schema_version"],
            schema_sha256=data["schema_sha256"], schema_sources=list(data.get("schema_sources") or []),
            input_sha256=data["input_sha256"], validated_at=data["validated_at"],
            schema_valid=bool(data["schema_valid"]), overall_status=data["overall_status"],
            findings=[Finding.from_dict(f) for f in data["findings"]],
            use_decisions=[UseDecision(d["use"], d["admission_status"], list(d["reason_codes"]))
                           for d in data["use_decisions"]],
            record_id=data.get("record_id"), grounding=data.get("grounding"),
            verified=frozenset(data.get("verified_evidence_item_ids") or ()),
            quotes=tuple(QuoteLocation.from_dict(q) for q in data.get("quote_locations") or ()),
            grounding_off=bool(data.get("grounding_off", False)),
            extra={k: v for k, v in data.items() if k not in known},
        )
