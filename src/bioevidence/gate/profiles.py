"""Use-profiles: what a record must show to be admitted for each requested use.

A profile is YAML with an exact key set (checked against ``schemas/profile.schema.json``):
allowlists for predicate, subject type and object type (empty = any), and per use a
contract (``required_evidence_types``, ``require_human_acceptance``, ``allow_llm_only``,
``allow_string_match_only``, optional ``verified_evidence_types`` and
``require_independent_review``). An optional ``grounders:`` section names the pinned
releases the profile runs; an optional ``quote_parts:`` list restricts the parts of a paper a
quote may come from (``[title, abstract, body]``; a quote from elsewhere goes to review, BEV032);
an optional ``checks:`` mapping says which meaning checks run on its records (``cues``: the
cues of BEV022 it runs, a list from ``negation``, ``animal``, ``hedge``, or ``true`` for the first
two, default none; ``direction``: ``auto``, ``required`` or ``off``, the stance model reading
verified quotes against their line's direction, BEV034-BEV036, default ``auto``).
Built-in profiles are the YAML files in ``profiles/``
(discovered, not listed in code); any path to a YAML file works too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InputError
from ..io import parse_yaml, read_limited
from ..resources import data_dir, schema_file


@dataclass(frozen=True, slots=True)
class UseContract:
    name: str
    required_evidence_types: tuple[str, ...]
    require_human_acceptance: bool
    allow_llm_only: bool
    allow_string_match_only: bool
    verified_evidence_types: tuple[str, ...] = ()
    require_independent_review: bool = False


#: the modes of the direction check (BEV034): run when the model runtime is installed, else a note;
#: run or send the record to review; never run
DIRECTION_MODES = ("auto", "required", "off")


#: the cues a profile may name (:mod:`.grounders.cues`); ``cues: true`` is the first two, as ``--cues``
CUES = ("negation", "animal", "hedge")


@dataclass(frozen=True, slots=True)
class ProfileChecks:
    """A profile's ``checks:``: the meaning checks its records get unless the command line says otherwise."""

    cues: tuple[str, ...] = ()  # the cues (BEV022) it runs, from CUES
    direction: str = "auto"

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> ProfileChecks:
        raw = raw or {}
        cues = raw.get("cues", False)
        chosen = CUES[:2] if cues is True else () if cues is False else tuple(cues)
        return cls(chosen, str(raw.get("direction", "auto")))


@dataclass(frozen=True, slots=True)
class Profile:
    id: str
    version: str
    description: str
    predicates: tuple[str, ...]
    subject_types: tuple[str, ...]
    object_types: tuple[str, ...]
    uses: Mapping[str, UseContract]
    sha256: str
    path: Path | None = None
    grounders: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)
    quote_parts: tuple[str, ...] = ()  # parts of a paper quotes may come from (empty: every part)
    checks: ProfileChecks = ProfileChecks()

    def allowlist(self, key: str) -> tuple[str, ...]:
        return {"predicates": self.predicates, "subject_types": self.subject_types,
                "object_types": self.object_types}[key]

    def to_dict(self) -> dict[str, Any]:
        """The profile as plain data (what ``bioevidence profiles --format json`` prints)."""
        out = dict(self.raw)
        out["sha256"] = self.sha256
        out["builtin"] = self.path is not None and self.path.parent == data_dir("profiles")
        return out


@cache
def _profile_validator() -> Any:
    import jsonschema_rs

    schema = json.loads(schema_file("profile.schema.json").read_text(encoding="utf-8"))
    return jsonschema_rs.validator_for(schema)


def parse_profile(data: bytes, *, source: str = "<profile>", path: Path | None = None) -> Profile:
    """Parse and check profile bytes; any problem is a ``ConfigurationError`` naming it."""
    try:
        raw = parse_yaml(data, file=source, what="profile")
    except InputError as exc:
        raise ConfigurationError(f"profile {source}: {exc.message}") from exc
    if not isinstance(raw, dict):
        raise ConfigurationError(f"profile {source} must be a YAML mapping of id, version, description, "
                                 "predicates, subject_types, object_types, uses")
    errors = sorted(_profile_validator().iter_errors(raw), key=lambda e: [str(p) for p in e.instance_path])
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.instance_path) or "(top level)"
        raise ConfigurationError(f"profile {source}: {where}: {first.message}")
    uses: dict[str, UseContract] = {}
    for name, use in raw["uses"].items():
        required = tuple(use["required_evidence_types"])
        verified = tuple(use.get("verified_evidence_types", ()))
        extra = sorted(set(verified) - set(required))
        if extra:
            raise ConfigurationError(f"profile {source}: use {name!r}: verified_evidence_types {extra} must also be "
                                     "listed in required_evidence_types")
        uses[name] = UseContract(name, required, use["require_human_acceptance"], use["allow_llm_only"],
                                 use["allow_string_match_only"], verified,
                                 bool(use.get("require_independent_review", False)))
    return Profile(
        id=raw["id"], version=raw["version"], description=raw["description"],
        predicates=tuple(raw["predicates"]), subject_types=tuple(raw["subject_types"]),
        object_types=tuple(raw["object_types"]), uses=uses,
        sha256=hashlib.sha256(data).hexdigest(), path=path,
        grounders=dict(raw.get("grounders") or {}), raw=raw, quote_parts=tuple(raw.get("quote_parts") or ()),
        checks=ProfileChecks.parse(raw.get("checks")),
    )


def builtin_profiles() -> dict[str, Path]:
    """Built-in profile names (file stems in ``profiles/``) and their paths, sorted."""
    folder = data_dir("profiles")
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def resolve_profile_path(name_or_path: str | Path) -> Path:
    """A built-in name, else an existing YAML file; never a silent fallback."""
    builtins = builtin_profiles()
    if isinstance(name_or_path, str) and name_or_path in builtins:
        return builtins[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.suffix.lower() in (".yaml", ".yml") or len(path.parts) > 1:
        why = "is a folder, not a profile file" if path.is_dir() else "no such file"
        raise ConfigurationError(f"profile {str(name_or_path)!r}: {why}; give a YAML profile file or a built-in name "
                                 f"({', '.join(builtins)})")
    raise ConfigurationError(
        f"unknown profile {str(name_or_path)!r}: give a built-in name ({', '.join(builtins)}) or a path to a YAML file"
    )


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a built-in profile by name or a profile file by path."""
    path = resolve_profile_path(name_or_path)
    try:
        data = read_limited(path)
    except InputError as exc:
        raise ConfigurationError(f"profile {path}: {exc.message}") from exc
    return parse_profile(data, source=str(path), path=path)
