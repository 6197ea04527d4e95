"""Compact drafts: each fact stated once, expanded into a full evidence record.

A draft has ``profile``, ``uses``, ``statement`` (``subject``/``object`` as ``{id, label,
type}``, ``predicate``, ``scope``), ``sources`` (a local ``id``, ``type``, and ``uri``,
``title``, ``version``, ``retrieved_at``, ``sha256`` or ``file``), ``evidence`` (``source``,
``locator``, ``type``, ``scope``, optional ``text``, ``direction``, ``method``) and optional
``id``, ``status`` and ``reviews``. Building it (:func:`build_record`):

* derives ids deterministically: ``record_id`` from ``id``, else the builder's ``record_id``,
  else ``bioev:draft-`` + 16 hex of the draft's canonical hash; then ``<rid>/statement``,
  ``<rid>/source/<name>``, ``<rid>/evidence/<n>``, ``<rid>/line/<direction>``, ``<rid>/review/<n>``;
* groups evidence into one evidence line per direction (default ``supports``);
* hashes ``file`` relative to the draft's folder (a path that escapes it is refused): file only
  gives ``sha256``; a stated ``sha256`` stays frozen and the file hash becomes
  ``observed_sha256`` (so a changed file is BEV002);
* fills a publication's pinned ``sha256``, ``retrieved_at``, ``version`` and ``title`` from a
  snapshot catalogue when one is given and the draft does not state them;
* never invents scope, methods, times or decisions. The pipeline, not the model, sets
  extraction methods and reviews: :class:`DraftBuilder` takes them as options, and with
  ``model=True`` a draft that states ``method``, ``reviews``, ``file``, ``id`` or ``status`` is
  refused.

Unknown, missing, blank, repeated or out-of-choice fields raise :class:`InputError` naming the
field and the fix. :func:`draft_json_schema` gives the closed JSON Schema of drafts under one
profile (allowlists as enums), for structured model output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import BioevidenceError, InputError
from ..io import canonical_json, parse_json, parse_yaml, read_limited
from ..paths import safe_child

__all__ = ["DraftBuilder", "build_record", "draft_json_schema", "is_draft", "load_draft"]

STATUSES = ("proposed", "accepted", "rejected", "superseded")
SOURCE_TYPES = ("ontology_snapshot", "registry_snapshot", "dataset_snapshot", "publication", "web_page",
                "local_file")
METHODS = ("deterministic_parser", "manual_curation", "normalized_string_match", "llm_extraction")
DIRECTIONS = ("supports", "contradicts", "neutral")
DECISIONS = ("accept", "reject", "defer")
AGENT_TYPES = ("human", "software", "organization")

# (required, optional) keys per object
DRAFT = ({"profile", "uses", "statement", "sources", "evidence"}, {"id", "status", "reviews"})
STATEMENT = ({"subject", "predicate", "object", "scope"}, set[str]())
ENTITY = ({"id", "label", "type"}, set[str]())
SOURCE = ({"id", "type"}, {"title", "uri", "version", "retrieved_at", "sha256", "file"})
EVIDENCE = ({"source", "locator", "type", "scope"}, {"text", "direction", "method"})
REVIEW = ({"reviewer", "decision", "uses", "rationale", "decided_at"}, set[str]())
REVIEWER = ({"id", "type"}, {"name"})
# keys the pipeline owns: a model's draft must not state them
PIPELINE_ONLY = {"draft": {"id", "status", "reviews"}, "source": {"file"}, "evidence": {"method"}}


def is_draft(value: object) -> bool:
    """True for a mapping shaped like a draft (``sources``/``evidence``) rather than a record."""
    return isinstance(value, dict) and "evidence_items" not in value and "source_artifacts" not in value \
        and ("evidence" in value or "sources" in value)


def _fields(value: Any, keys: tuple[set[str], set[str]], path: str,
            refused: AbstractSet[str] = frozenset()) -> dict[str, Any]:
    required, optional = keys
    if not isinstance(value, dict):
        raise InputError(f"{path} must be a mapping with {', '.join(sorted(required))}")
    pipeline = sorted(refused & value.keys())
    if pipeline:
        raise InputError(f"{path} states {', '.join(pipeline)}, which the pipeline sets, not the model; drop "
                         f"{'it' if len(pipeline) == 1 else 'them'}")
    missing = sorted(required - value.keys())
    if missing:
        raise InputError(f"{path} is missing {', '.join(missing)}")
    unknown = sorted(str(k) for k in value.keys() - required - optional)
    if unknown:
        raise InputError(f"{path} has unknown field(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted((required | optional) - refused))}")
    return value


def _text(value: Any, path: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{path} must be a non-blank string (quote numbers, dates and versions in YAML)")
    if choices is not None and value not in choices:
        raise InputError(f"{path} is {value!r}; choose one of: {', '.join(choices)}")
    return value


def _texts(value: Any, path: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise InputError(f"{path} must be a non-empty list of strings")
    out = [_text(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if len(set(out)) != len(out):
        raise InputError(f"{path} repeats a value; list each once")
    return out


def _rows(value: Any, path: str, *, required: bool = True) -> list[Any]:
    if not isinstance(value, list) or (required and not value):
        raise InputError(f"{path} must be a {'non-empty ' if required else ''}list")
    return value


def _entity(value: Any, path: str) -> dict[str, str]:
    e = _fields(value, ENTITY, path)
    return {"id": _text(e["id"], f"{path}.id"), "label": _text(e["label"], f"{path}.label"),
            "entity_type": _text(e["type"], f"{path}.type")}


def _agent(value: Any, path: str) -> dict[str, str]:
    r = _fields(value, REVIEWER, path)
    out = {"id": _text(r["id"], f"{path}.id")}
    if "name" in r:
        out["name"] = _text(r["name"], f"{path}.name")
    out["agent_type"] = _text(r["type"], f"{path}.type", AGENT_TYPES)
    return out


@dataclass(frozen=True)
class DraftBuilder:
    """Turns drafts into records with the pipeline's settings.

    * ``method``: the extraction method of items that do not state one (model drafts never do);
    * ``reviews``: review entries (draft form) the pipeline adds, e.g. a curator's acceptance;
    * ``agent``: ``{id, type, name?}`` stamped as ``created_by`` on the statement and every item
      (so an independent reviewer can be told apart from the author);
    * ``base_dir``: the draft's folder, against which ``file`` is resolved (``None``: refused);
    * ``snapshot_dir``: a pinned snapshot folder whose catalogue fills publication hashes;
    * ``model``: the draft is model output, so pipeline-only keys are refused;
    * ``record_id``: the record id when the draft has none (e.g. the task id).
    """

    method: str | None = None
    reviews: tuple[Mapping[str, Any], ...] = ()
    agent: Mapping[str, Any] | None = None
    base_dir: Path | None = None
    snapshot_dir: Path | None = None
    model: bool = False
    record_id: str | None = None

    def __post_init__(self) -> None:
        if self.method is not None:
            _text(self.method, "method", METHODS)
        if self.agent is not None:
            _agent(self.agent, "agent")

    @cached_property
    def _pins(self) -> Any:
        if self.snapshot_dir is None:
            return None
        from ..sources.catalogue import Catalogue
        from ..sources.store import SnapshotStore

        return Catalogue.load(self.snapshot_dir), SnapshotStore(self.snapshot_dir)

    def __call__(self, draft: Any) -> dict[str, Any]:
        return self.build(draft)

    def build(self, draft: Any) -> dict[str, Any]:
        """The full record of ``draft``; ``InputError`` names the first malformed field."""
        refused = PIPELINE_ONLY if self.model else {}
        d = _fields(draft, DRAFT, "draft", refused.get("draft", set()))
        profile = _text(d["profile"], "draft.profile")
        uses = _texts(d["uses"], "draft.uses")
        statement = _fields(d["statement"], STATEMENT, "draft.statement")
        scope = _texts(statement["scope"], "draft.statement.scope")
        if "id" in d:
            rid = _text(d["id"], "draft.id")
        elif self.record_id is not None:
            rid = self.record_id
        else:
            try:
                rid = "bioev:draft-" + hashlib.sha256(canonical_json(d)).hexdigest()[:16]
            except (TypeError, ValueError) as exc:
                raise InputError(f"draft is not plain JSON data: {exc}") from exc

        sources: list[dict[str, Any]] = []
        local: dict[str, str] = {}
        for index, row in enumerate(_rows(d["sources"], "draft.sources")):
            path = f"draft.sources[{index}]"
            name, artifact = self._source(row, path, refused.get("source", set()))
            if name in local:
                raise InputError(f"{path}.id repeats {name!r}; give each source its own id")
            local[name] = artifact["id"] = f"{rid}/source/{name}"
            sources.append(artifact)

        creator = _agent(self.agent, "agent") if self.agent is not None else None
        items: list[dict[str, Any]] = []
        lines: dict[str, list[str]] = {}
        for index, row in enumerate(_rows(d["evidence"], "draft.evidence")):
            path = f"draft.evidence[{index}]"
            ev = _fields(row, EVIDENCE, path, refused.get("evidence", set()))
            source = _text(ev["source"], f"{path}.source")
            if source not in local:
                raise InputError(f"{path}.source {source!r} is not a source id; use one of: {', '.join(local)}")
            if "method" in ev:
                method = _text(ev["method"], f"{path}.method", METHODS)
            elif self.method is not None:
                method = self.method
            else:
                raise InputError(f"{path}.method is missing; state how the item was extracted "
                                 f"({', '.join(METHODS)}) or build with --method")
            item: dict[str, Any] = {"id": f"{rid}/evidence/{index + 1}", "source_artifact_id": local[source],
                                    "locator": _text(ev["locator"], f"{path}.locator")}
            if "text" in ev:
                item["extracted_text"] = _text(ev["text"], f"{path}.text")
            item.update({"evidence_type": _text(ev["type"], f"{path}.type"), "extraction_method": method,
                         "scope": _texts(ev["scope"], f"{path}.scope")})
            if creator is not None:
                item["created_by"] = dict(creator)
            items.append(item)
            direction = _text(ev.get("direction", "supports"), f"{path}.direction", DIRECTIONS)
            lines.setdefault(direction, []).append(item["id"])

        statement_id = f"{rid}/statement"
        reviews = [*_rows(d.get("reviews", []), "draft.reviews", required=False), *self.reviews]
        adjudications = []
        for index, row in enumerate(reviews):
            path = f"draft.reviews[{index}]" if index < len(d.get("reviews", [])) else "reviews option"
            r = _fields(row, REVIEW, path)
            adjudications.append({
                "id": f"{rid}/review/{index + 1}", "statement_id": statement_id,
                "applies_to_uses": _texts(r["uses"], f"{path}.uses"),
                "decision": _text(r["decision"], f"{path}.decision", DECISIONS),
                "reviewer": _agent(r["reviewer"], f"{path}.reviewer"),
                "rationale": _text(r["rationale"], f"{path}.rationale"),
                "decided_at": _text(r["decided_at"], f"{path}.decided_at")})

        built_statement: dict[str, Any] = {
            "id": statement_id,
            "subject": _entity(statement["subject"], "draft.statement.subject"),
            "predicate": _text(statement["predicate"], "draft.statement.predicate"),
            "object": _entity(statement["object"], "draft.statement.object"),
            "scope": scope,
            "evidence_lines": [{"id": f"{rid}/line/{direction}", "direction": direction, "evidence_item_ids": ids}
                               for direction, ids in lines.items()],
            "statement_status": _text(d.get("status", "proposed"), "draft.status", STATUSES),
        }
        if creator is not None:
            built_statement["created_by"] = dict(creator)
        return {"record_id": rid, "profile_id": profile, "statement": built_statement, "source_artifacts": sources,
                "evidence_items": items, "adjudications": adjudications, "requested_uses": uses}

    def _source(self, row: Any, path: str, refused: AbstractSet[str]) -> tuple[str, dict[str, Any]]:
        s = _fields(row, SOURCE, path, refused)
        name = _text(s["id"], f"{path}.id")
        kind = _text(s["type"], f"{path}.type", SOURCE_TYPES)
        uri = _text(s["uri"], f"{path}.uri") if "uri" in s else None
        stated = _text(s["sha256"], f"{path}.sha256").lower() if "sha256" in s else None
        observed = self._file_hash(_text(s["file"], f"{path}.file"), f"{path}.file") if "file" in s else None
        out: dict[str, Any] = {"title": s.get("title"), "source_type": kind}
        if uri is not None:
            out["uri"] = uri
        out["version"] = s.get("version")
        out["retrieved_at"] = s.get("retrieved_at")
        out["sha256"] = stated or observed
        if stated is not None and observed is not None:
            out["observed_sha256"] = observed
        if kind == "publication" and uri is not None:
            self._fill_from_catalogue(out, uri)
        for key in ("title", "version", "retrieved_at"):
            if out[key] is None:
                raise InputError(f"{path} is missing {key}" + (
                    f"; {uri} is not in the pinned snapshot catalogue: cite a pinned paper"
                    if kind == "publication" and self.snapshot_dir is not None else ""))
            _text(out[key], f"{path}.{key}")
        if out["sha256"] is None:
            hint = (f"; {uri} is not in the pinned snapshot catalogue: cite a pinned paper"
                    if kind == "publication" and self.snapshot_dir is not None else "")
            raise InputError(f"{path} needs sha256 or file{hint}")
        return name, out

    def _file_hash(self, name: str, path: str) -> str:
        if self.base_dir is None:
            raise InputError(f"{path} names a local file, which only a draft file (not model output) may do")
        try:
            target = safe_child(self.base_dir, name)
        except BioevidenceError as exc:
            raise InputError(f"{path}: {exc.message}; name a file inside the draft's folder") from exc
        if not target.is_file():
            raise InputError(f"{path} {name!r} does not exist next to the draft ({self.base_dir})")
        return hashlib.sha256(read_limited(target)).hexdigest()

    def _fill_from_catalogue(self, out: dict[str, Any], uri: str) -> None:
        if self._pins is None:
            return
        from ..sources.identifiers import parse_identifier
        from ..sources.metadata import parse_metadata

        catalogue, store = self._pins
        ident = parse_identifier(uri)
        work = catalogue.get(ident) if ident is not None else None
        if work is None:
            return
        if out["sha256"] is None:
            out["sha256"] = work.pinned_sha256
        if out["retrieved_at"] is None:
            out["retrieved_at"] = str(work.extra.get("refreshed_at") or work.retrieved_at)
        if out["version"] is None:
            out["version"] = f"{work.resolver} {str(out['retrieved_at'])[:10]}"
        if out["title"] is None:
            try:
                out["title"] = parse_metadata(store.read(work.metadata_sha256), want=work.key).title or None
            except BioevidenceError:
                out["title"] = None


def build_record(draft: Any, *, base_dir: Path | str | None = None, method: str | None = None,
                 reviews: Sequence[Mapping[str, Any]] = (), agent: Mapping[str, Any] | None = None,
                 snapshot_dir: Path | str | None = None, model: bool = False,
                 record_id: str | None = None) -> dict[str, Any]:
    """Expand a draft into a full record (see :class:`DraftBuilder` for the options)."""
    return DraftBuilder(method=method, reviews=tuple(reviews), agent=agent,
                        base_dir=Path(base_dir) if base_dir is not None else None,
                        snapshot_dir=Path(snapshot_dir) if snapshot_dir is not None else None,
                        model=model, record_id=record_id).build(draft)


def load_draft(path: Path | str) -> dict[str, Any]:
    """Read a YAML (or ``.json``) draft strictly: duplicate keys, tags and bad UTF-8 are refused."""
    path = Path(path)
    data = read_limited(path)
    value = parse_json(data, file=str(path)) if path.suffix.lower() == ".json" else \
        parse_yaml(data, file=str(path), what="draft")
    if not isinstance(value, dict):
        raise InputError("a draft is a mapping with profile, uses, statement, sources and evidence", file=str(path))
    return value


# -- JSON Schema -------------------------------------------------------------------------------

def _object(keys: tuple[set[str], set[str]], properties: dict[str, Any], drop: AbstractSet[str] = frozenset(),
            description: str | None = None) -> dict[str, Any]:
    required, optional = keys
    if set(properties) != required | optional:  # the schema and the parser must not drift apart
        raise RuntimeError("draft schema and draft parser disagree on keys")
    out: dict[str, Any] = {"type": "object", "additionalProperties": False,
                           "required": sorted(required - drop),
                           "properties": {k: v for k, v in sorted(properties.items()) if k not in drop}}
    if description:
        out["description"] = description
    return out


def _choice(values: Sequence[str], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "enum": list(values)} if values else {"type": "string", "minLength": 1}
    if description:
        out["description"] = description
    return out


def draft_json_schema(profile: Any = "general", *, model: bool = True) -> dict[str, Any]:
    """Closed JSON Schema (2020-12) of drafts under ``profile`` (a name, path or ``Profile``).

    With ``model=True`` (for structured model output) the keys the pipeline sets (``method``,
    ``reviews``, ``file``, ``id``, ``status``) are left out; ``model=False`` gives the full
    authoring schema. The profile's uses, predicates, entity types and evidence types are enums.
    """
    from ..gate.profiles import Profile, load_profile

    p = profile if isinstance(profile, Profile) else load_profile(profile)
    kinds = sorted({k for use in p.uses.values() for k in use.required_evidence_types})
    text = {"type": "string", "minLength": 1}
    tokens = {"type": "array", "minItems": 1, "uniqueItems": True, "items": text}
    uses = {"type": "array", "minItems": 1, "uniqueItems": True, "items": _choice(sorted(p.uses))}
    drop = PIPELINE_ONLY if model else {"draft": set(), "source": set(), "evidence": set()}

    def entity(types: Sequence[str]) -> dict[str, Any]:
        return _object(ENTITY, {"id": {**text, "description": "Identifier as a CURIE, e.g. CL:0000236."},
                                "label": {**text, "description": "The term's exact name."}, "type": _choice(types)})

    review = _object(REVIEW, {
        "reviewer": _object(REVIEWER, {"id": text, "name": text, "type": _choice(AGENT_TYPES)}),
        "decision": _choice(DECISIONS), "uses": uses, "rationale": text,
        "decided_at": {"type": "string", "format": "date-time"}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"bioevidence draft ({p.id} profile {p.version})",
        **_object(DRAFT, {
            "profile": {"const": p.id},
            "uses": uses,
            "id": {**text, "description": "Record id; derived from the content when omitted."},
            "status": _choice(STATUSES, "Defaults to proposed."),
            "statement": _object(STATEMENT, {
                "subject": entity(p.subject_types), "predicate": _choice(p.predicates),
                "object": entity(p.object_types),
                "scope": {**tokens, "description": "Scope tokens of the claim, e.g. NCBITaxon:9606."}}),
            "sources": {"type": "array", "minItems": 1, "items": _object(SOURCE, {
                "id": {**text, "description": "Local name that evidence[].source refers to."},
                "type": _choice(SOURCE_TYPES), "title": text,
                "uri": {**text, "description": "pmid:…, pmcid:… or doi:… for publications."},
                "version": text, "retrieved_at": {"type": "string", "format": "date-time"},
                "sha256": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$"},
                "file": {**text, "description": "A file next to the draft, hashed when built."}},
                drop["source"])},
            "evidence": {"type": "array", "minItems": 1, "items": _object(EVIDENCE, {
                "source": text,
                "locator": {**text, "description": "Where in the source; for papers end with #<paragraph id>."},
                "text": {**text, "description": "The verbatim quote (at least five words)."},
                "type": _choice(kinds), "scope": {**tokens, "description": "Scope the source supports."},
                "direction": _choice(DIRECTIONS, "Defaults to supports; contradicting evidence must be kept."),
                "method": _choice(METHODS, "Set by the pipeline, not by a model.")}, drop["evidence"])},
            "reviews": {"type": "array", "items": review},
        }, drop["draft"]),
    }
