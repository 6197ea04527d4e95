"""The gate: validate a record against the schema, a profile and optional grounders.

``Validator`` compiles the schema and loads profiles once and is reused for a whole batch;
``validate`` is the one-shot convenience. Pipeline per record (same order as the reference):

1. JSON Schema (SCHEMA findings stop here);
2. integrity (RECORD_INTEGRITY findings stop here);
3. each grounder's ``ground`` once (findings + verified item ids + where quotes were found);
   publication evidence with no literature grounder is BEV029 (review) unless grounding is
   off (``grounding=False``, the CLI's ``--no-grounding``); a quote from a part the profile's
   ``quote_parts`` leaves out is BEV032 (review);
   then the checks that read what the grounders found (:class:`~.grounding.Check`): the cues
   (BEV022) and the direction check (BEV034-BEV036), each as the record's profile says
   (``checks:``) unless ``checks`` or a check among ``grounders`` overrides it;
4. fixed checks and per-use contracts (BEV001-BEV013, BEV020, BEV021);
5. per-use decisions and the overall status (``warning`` and ``info`` findings block nothing).

Fail closed: an exception inside a grounder becomes a GROUNDER_FAILURE finding (error); the
direction check turns its own errors into BEV035 (review).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import ConfigurationError, InputError
from ..io import canonical_json
from . import checks
from .findings import Finding
from .grounding import Check, CheckContext, Grounder, QuoteLocation
from .profiles import Profile, builtin_profiles, load_profile
from .report import Report, UseDecision
from .rules import RULES
from .schema import CompiledSchema, record_schema

VALIDATOR_NAME = "bioevidence"
DEFAULT_PROFILE = "general"


def _now() -> str:
    """When a record was validated; ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention) fixes
    it, so two runs over the same input can be compared byte for byte."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if fixed.isdigit():
        return datetime.fromtimestamp(int(fixed), UTC).isoformat()
    return datetime.now(UTC).isoformat()


class Validator:
    """Validate many records with one compiled schema, a fixed profile (or profiles chosen by
    each record's ``profile_id`` among the built-ins) and a fixed list of grounders.

    >>> v = Validator(profile="general")
    >>> v.validate(record).overall_status  # doctest: +SKIP
    'admitted'
    """

    def __init__(self, profile: str | Path | Profile | None = None, *, grounders: Sequence[Grounder | Check] = (),
                 clock: Callable[[], str] = _now, schema: CompiledSchema | None = None,
                 grounding: bool = True, checks: Sequence[Check] = ()) -> None:
        if not grounding and any(not isinstance(g, Check) for g in grounders):
            raise ConfigurationError("grounding=False (--no-grounding) turns grounding off; pass no grounders with it")
        self.schema = schema or record_schema()
        self.grounders = list(grounders)
        self.checks = _checks([*checks, *(g for g in grounders if isinstance(g, Check))])
        # decided once: a runtime Protocol isinstance costs ~25 µs, 13% of a grounded record's time
        self._grounders = [g for g in self.grounders if not isinstance(g, Check)]
        self.grounding = grounding
        self.literature = any(getattr(g, "grounds_literature", False) for g in self.grounders)
        self.clock = clock
        self._profiles: dict[str, Profile] = {}
        self._builtins = builtin_profiles() if profile is None else {}
        self.profile: Profile | None
        if profile is None:
            self.profile = None
        elif isinstance(profile, Profile):
            self.profile = profile
        else:
            self.profile = load_profile(profile)
        self.schema_sources = [{"role": "baseline", "version": self.schema.version, "sha256": self.schema.sha256}]

    def profile_for(self, record: Any) -> Profile:
        """The fixed profile, else the built-in named by the record's ``profile_id`` (``general`` if none)."""
        if self.profile is not None:
            return self.profile
        name = record.get("profile_id") if isinstance(record, dict) else None
        if not isinstance(name, str) or name not in self._builtins:
            name = DEFAULT_PROFILE
        cached = self._profiles.get(name)
        if cached is None:
            cached = self._profiles[name] = load_profile(name)
        return cached

    def validate(self, record: Any, *, floats: bool = True) -> Report:
        """Validate one record (a parsed JSON value) and return its report. ``floats=False`` is a
        promise that the record holds no float (its canonical hash is then computed faster)."""
        try:
            canonical = canonical_json(record, floats=floats)
        except (TypeError, ValueError) as exc:
            raise InputError(f"record is not plain JSON data: {exc}") from exc
        profile = self.profile_for(record)
        requested = record.get("requested_uses") if isinstance(record, dict) else None
        uses = list(dict.fromkeys(u for u in requested if isinstance(u, str))) if isinstance(requested, list) else []
        findings = self.schema.findings(record, uses)
        if not findings:
            findings = checks.integrity(record, profile)
            if self.profile is None and record["profile_id"] not in self._builtins:
                findings = [f for f in findings if f.field_path != "$.profile_id"]
                findings.insert(0, Finding("RECORD_INTEGRITY", "error",
                                           f"profile_id {record['profile_id']!r} is not a built-in profile "
                                           f"({', '.join(self._builtins)}); pass --profile PATH to its YAML file.",
                                           "$.profile_id", uses))
        verified: set[str] = set()
        located: list[QuoteLocation] = []
        if not findings:
            grounded: list[Finding] = []
            for grounder in self._grounders:  # the checks run below, after every grounder
                try:
                    result = grounder.ground(record)
                except Exception as exc:  # fail closed: a broken grounder never admits a record
                    grounded.append(Finding("GROUNDER_FAILURE", "error",
                                            f"grounder {grounder.name} failed: {type(exc).__name__}: {exc}",
                                            "$", uses))
                    continue
                verified |= result.verified
                grounded.extend(_as_catalogued(result.findings, uses, grounder.name))
                located.extend(result.quotes)
            context = CheckContext(profile, frozenset(verified), tuple(located))
            for check in self.checks:
                try:
                    grounded.extend(_as_catalogued(check.check(record, context).findings, uses, check.name))
                except Exception as exc:  # fail closed, as for a grounder
                    grounded.append(Finding("GROUNDER_FAILURE", "error",
                                            f"check {check.name} failed: {type(exc).__name__}: {exc}", "$", uses))
            if self.grounding and not self.literature:
                grounded.extend(checks.unchecked_publications(record))
            if self.grounding:
                grounded.extend(checks.unchecked_identifiers(record, profile, self.grounders))
            grounded.extend(checks.quote_parts(record, profile, located))
            findings = checks.contracts(record, profile, verified) + grounded
        decisions = checks.decide(uses, findings)
        return Report(
            validator=VALIDATOR_NAME,
            validator_version=__version__,
            record_id=record.get("record_id") if isinstance(record, dict) and isinstance(
                record.get("record_id"), str) else None,
            profile_id=profile.id,
            profile_version=profile.version,
            profile_sha256=profile.sha256,
            schema_version=self.schema.version,
            schema_sha256=self.schema.sha256,
            schema_sources=self.schema_sources,
            input_sha256=hashlib.sha256(canonical).hexdigest(),
            validated_at=self.clock(),
            schema_valid=not any(f.rule_id == "SCHEMA" for f in findings),
            overall_status=checks.overall(decisions, findings),
            findings=findings,
            use_decisions=[UseDecision(d["use"], d["admission_status"], d["reason_codes"]) for d in decisions],
            grounding=[g.name for g in self.grounders] if self.grounders else None,
            verified=frozenset(verified),
            quotes=tuple(located),
            grounding_off=not self.grounding,
        )


def _checks(given: Sequence[Check]) -> list[Check]:
    """One check of each kind: the first given, else the default that follows each record's profile."""
    from .grounders.cues import CueChecker
    from .grounders.direction import DirectionChecker

    chosen: dict[str, Check] = {}
    for check in given:
        chosen.setdefault(check.kind, check)
    defaults: list[Check] = [CueChecker(enabled=None), DirectionChecker()]
    for check in defaults:
        chosen.setdefault(check.kind, check)
    return list(chosen.values())


def validate(record: Any, *, profile: str | Path | Profile | None = None,
             grounders: Sequence[Grounder] = (), grounding: bool = True) -> Report:
    """Validate one record (parsed, or a path to a ``.json``/``.yaml`` file read with
    :func:`~bioevidence.gate.inputs.load_record`); ``profile`` defaults to the built-in named by its
    ``profile_id``.

    Publication evidence needs a literature grounder (``grounders``) or it goes to review
    (BEV029); ``grounding=False`` accepts unchecked quotes explicitly, as 0.8.0 did."""
    if profile is not None and not isinstance(profile, str | Path | Profile):
        raise ConfigurationError("profile must be a built-in name, a path or a Profile")
    if isinstance(record, str | Path):
        from .inputs import load_record

        record = load_record(record)
    return Validator(profile, grounders=grounders, grounding=grounding).validate(record)


def _as_catalogued(findings: list[Finding], uses: list[str], name: str) -> list[Finding]:
    """A grounder's or check's findings with the catalogue's severity and blocking: a rule of scope
    ``all`` that blocks (error, review) blocks every requested use, one of scope ``use`` at least one,
    whatever the grounder wrote (a custom grounder that says ``BEV017 info`` or blocks no use must not
    admit). A code outside the catalogue is a GROUNDER_FAILURE (fail closed)."""
    if not findings:
        return []
    out: list[Finding] = []
    for f in findings:
        entry = RULES.get(f.rule_id)
        if entry is None or entry.emitted_by in ("schema", "integrity"):
            out.append(Finding("GROUNDER_FAILURE", "error", f"{name} returned rule {f.rule_id!r}, which is not a "
                               "grounder rule of the catalogue (bioevidence.gate.rules)", "$", uses))
            continue
        blocking = [u for u in f.blocking_uses if u in uses]
        if entry.severity not in ("error", "review"):
            blocking = []
        elif entry.scope == "all" or not blocking:
            blocking = list(uses)
        if entry.severity != f.severity or blocking != f.blocking_uses:
            f = Finding(f.rule_id, entry.severity, f.message, f.field_path, blocking, f.fix)
        out.append(f)
    return out
